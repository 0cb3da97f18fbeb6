#include "exec/io_microbench.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <thread>

#include "exec/data_layout.hpp"
#include "exec/device_decoder.hpp"
#include "exec/durable_file.hpp"
#include "exec/encode_dataset.hpp"
#include "exec/hdf5_file.hpp"
#include "exec/loader.hpp"
#include "exec/sample_store.hpp"
#include "model/error_summary.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Drops the file's clean pages from the page cache, so the next read goes to the device.
void drop_from_page_cache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) fail_input(path, "", "cannot open for reading");
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

}  // namespace

namespace {

// Encodes a few samples of the folder's first file and times decoding them as the loader does.
CodecMeasurement measure_codec(const IoBenchOptions& o, const DataLayout& layout, const std::string& file, Codec c) {
  H5File h(file, H5File::Mode::read);
  require_raw(h, layout, "calibrate codecs on the raw dataset");
  const auto d = h.dims(layout.data);
  const size_t lead = layout.per_sample_files ? 0 : 1;
  const uint64_t rows = lead ? d[0] : 1, n = std::min<uint64_t>(rows, static_cast<uint64_t>(std::max(1, o.codec_samples)));
  const SampleShape shape = raw_sample_shape(d, layout, file);
  const double raw_bytes = static_cast<double>(h.stored_bytes(layout.data)) / static_cast<double>(rows);
  const size_t per = static_cast<size_t>(shape.voxels * shape.channels);
  std::vector<float> x(n * per);
  if (lead) h.read_rows(layout.data, 0, n, x.data());
  else x = h.read_all(layout.data);
  const auto codec = make_codec(c);
  std::vector<std::vector<uint8_t>> encoded;
  double encoded_bytes = 0;
  for (uint64_t i = 0; i < n; ++i) encoded_bytes += static_cast<double>(encoded.emplace_back(codec->encode(&x[i * per], shape)).size());
  ValuePipeline pipe;  // the loader's, with neutral statistics for min-max
  pipe.check = [](float) {};
  if (layout.normalise == Normalise::log1p) pipe.log1p = batch_log1p;
  const std::vector<float> zero(static_cast<size_t>(shape.channels), 0.f), one(static_cast<size_t>(shape.channels), 1.f);
  if (layout.normalise == Normalise::min_max) pipe.shift = zero.data(), pipe.scale = one.data();
  pipe.half = !codec->lossless();
  CodecMeasurement m{c, raw_bytes * static_cast<double>(n) / encoded_bytes, {}, {}};
  std::vector<float> out(per);
  for (int pass = 0; pass < std::max(1, o.codec_passes); ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& e : encoded) codec->decode(e.data(), e.size(), shape, pipe, out.data(), file);
    m.decode_bytes_per_s.push_back(raw_bytes * static_cast<double>(n) / since(t0));
  }
  if (!device_decoding_unavailable().empty()) return m;
  DeviceDecoder device(c);  // the kernels' own time: the encoded bytes' copy is the link's, priced apart
  DeviceFloats device_out(per);
  for (int pass = 0; pass < std::max(1, o.codec_passes); ++pass) {
    double s = 0;
    for (const auto& e : encoded) device.decode(e.data(), e.size(), shape, pipe, device_out.data(), file), s += device.last().decode_s;
    m.device_decode_bytes_per_s.push_back(raw_bytes * static_cast<double>(n) / s);
  }
  return m;
}

// deflate is HDF5 storage, not a byte codec: a deflated copy of the first file (and the folder's
// statistics), read back warm as the loader reads it (HDF5 inflates), then the layout's log1p.
CodecMeasurement measure_deflate(const IoBenchOptions& o, const DataLayout& layout, const std::string& file) {
  namespace fs = std::filesystem;
  const fs::path tmp = fs::temp_directory_path() / fmt::format("mrplan-deflate-{}", ::getpid());
  struct Removed {
    fs::path p;
    ~Removed() {
      std::error_code ec;
      remove_tree(p, ec);
    }
  } removed{tmp};
  fs::create_directories(tmp / "in");
  const fs::path src = fs::absolute(file);
  fs::create_symlink(src, tmp / "in" / src.filename());
  if (fs::exists(src.parent_path() / kStatsFile)) fs::create_symlink(src.parent_path() / kStatsFile, tmp / "in" / kStatsFile);
  EncodeOptions e;
  e.in_dir = (tmp / "in").string(), e.out_dir = (tmp / "out").string();
  e.codec = Codec::deflate, e.workload = o.workload, e.threads = 1, e.progress = false;
  const auto report = encode_dataset(e);
  const SampleStore store(e.out_dir, layout);
  const int64_t n = std::min<int64_t>(store.size(), std::max(1, o.codec_samples));
  const auto& shape = store.sample_shape();
  std::vector<float> x(static_cast<size_t>(std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>()))),
      y(static_cast<size_t>(store.label_size()));
  const bool log1p = !store.preprocesses() && layout.normalise == Normalise::log1p;
  auto pass = [&] {
    for (int64_t id = 0; id < n; ++id) {
      store.read(id, x.data(), y.data());
      if (log1p) batch_log1p(x.data(), x.size());
    }
  };
  pass();  // the copy in the page cache, its file open
  const double raw_bytes = report.sample_bytes_in / static_cast<double>(report.samples) * static_cast<double>(n);
  CodecMeasurement m{Codec::deflate, report.sample_bytes_in / report.sample_bytes_out, {}, {}};
  for (int p = 0; p < std::max(1, o.codec_passes); ++p) {
    const auto t0 = std::chrono::steady_clock::now();
    pass();
    m.decode_bytes_per_s.push_back(raw_bytes / since(t0));
  }
  return m;
}

}  // namespace

namespace {

using Progress = std::function<void(const std::string&)>;

// Cold reads of each file (dropped from the page cache first) at two sizes: rows of the first axis,
// samples in a batched file and image rows in a one-sample file, so both layouts give reads of two
// sizes from one file. Also a sample's bytes on disk (`bytes_per_sample`).
std::vector<ColdRead> time_cold_reads(const IoBenchOptions& o, const DataLayout& layout, const std::vector<std::string>& files,
                                      const Progress& progress, double& bytes_per_sample) {
  std::vector<ColdRead> out;
  std::vector<float> buf;
  const size_t n_files = std::min<size_t>(files.size(), static_cast<size_t>(std::max(0, o.max_files)));
  for (size_t i = 0; i < n_files; ++i) {
    const auto& f = files[i];
    uint64_t rows = 0, per_row = 1, rows_per_sample = 1;
    {
      H5File h(f, H5File::Mode::read);
      const auto d = h.dims(layout.data);
      rows = d.at(0);
      for (size_t k = 1; k < d.size(); ++k) per_row *= d[k];
      if (layout.per_sample_files) rows_per_sample = rows;
    }
    const double bytes_per_row = static_cast<double>(std::filesystem::file_size(f)) / static_cast<double>(rows);
    bytes_per_sample = bytes_per_row * static_cast<double>(rows_per_sample);
    const uint64_t big = layout.per_sample_files ? rows : std::min<uint64_t>(rows, 32);
    for (uint64_t n : {uint64_t{1}, big}) {
      buf.resize(n * per_row);
      // The median of a few dropped-and-read repeats: one read is at the mercy of whatever else runs.
      std::vector<double> t(static_cast<size_t>(std::max(1, o.cold_repeats)));
      for (auto& ti : t) {
        drop_from_page_cache(f);
        const auto t0 = std::chrono::steady_clock::now();
        H5File h(f, H5File::Mode::read);
        h.read_rows(layout.data, 0, n, buf.data());
        ti = since(t0);
      }
      out.push_back({bytes_per_row * static_cast<double>(n), median(t)});
    }
    if (progress) progress(fmt::format("cold reads: {}/{} files", i + 1, n_files));
  }
  return out;
}

// The page cache alone: the files' bytes read back whole, by 1..max_threads readers.
std::vector<WarmRate> time_warm_reads(const IoBenchOptions& o, const std::vector<std::string>& files, const Progress& progress) {
  const int max_threads = o.max_threads > 0 ? o.max_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double file_bytes = 0;
  for (const auto& f : files) file_bytes += static_cast<double>(std::filesystem::file_size(f));
  auto read_files = [&](int threads) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        std::vector<char> chunk(1 << 20);
        for (size_t i = static_cast<size_t>(t); i < files.size(); i += static_cast<size_t>(threads)) {
          std::ifstream in(files[i], std::ios::binary);
          while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
          }
        }
      });
    for (auto& th : pool) th.join();
  };
  read_files(1);  // now every file is in the page cache
  std::vector<WarmRate> out;
  for (int t = 1; t <= max_threads; ++t) {
    const auto t0 = std::chrono::steady_clock::now();
    read_files(t);
    out.push_back({t, file_bytes / since(t0)});
    if (progress) progress(fmt::format("warm reads: {} thread(s)", t));
  }
  return out;
}

// The loader's reader over the same cached bytes (its samples cached too): what it does beyond them
// is the raw path's work, as a rate of the samples' bytes on disk.
double time_reader(const IoBenchOptions& o, const DataLayout& layout, double bytes_per_sample) {
  const SampleStore store(o.data_dir, layout);
  const int64_t n = std::min<int64_t>(o.warm_samples, store.size());
  int64_t per_sample = 1;
  for (auto v : store.sample_shape()) per_sample *= v;
  std::vector<float> x(static_cast<size_t>(per_sample)), y(static_cast<size_t>(store.label_size()));
  for (int64_t id = 0; id < n; ++id) store.read(id, x.data(), y.data());
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t id = 0; id < n; ++id) store.read(id, x.data(), y.data());
  return bytes_per_sample * static_cast<double>(n) / since(t0);
}

// The host's preprocessing of a batch of 32 (the layout's reference: log1p or min-max) and a copy of
// it (the CPU stand-in for host-to-device), each the best of five.
void time_decode_and_copy(const IoBenchOptions& o, const DataLayout& layout, double bytes_per_sample, IoMeasurements& m) {
  std::vector<int64_t> bshape{32};
  const SampleStore probe(o.data_dir, layout);
  for (auto v : probe.sample_shape()) bshape.push_back(v);
  auto batch = torch::rand(bshape) * 10;
  double decode = 1e30, copy = 1e30;
  for (int r = 0; r < 5; ++r) {
    auto b = batch.clone();
    auto t0 = std::chrono::steady_clock::now();
    if (layout.normalise == Normalise::log1p) b.log1p_();
    else if (layout.normalise == Normalise::min_max) b.sub_(0.5).mul_(2.0);
    decode = std::min(decode, since(t0));
    t0 = std::chrono::steady_clock::now();
    auto c = b.clone();
    copy = std::min(copy, since(t0));
  }
  m.decode_bytes_per_s = bytes_per_sample * 32 / decode;
  m.copy_bytes_per_s = 4.0 * static_cast<double>(batch.numel()) / copy;
}

}  // namespace

IoMeasurements measure_io(const IoBenchOptions& o, const Progress& progress) {
  const auto layout = layout_for(o.workload);
  const auto files = list_h5_files(o.data_dir);
  require_layout(files.front(), o.workload, "--workload");
  IoMeasurements m;
  m.tier_name = "local disk under " + o.data_dir;
  double bytes_per_sample = 0;
  m.cold = time_cold_reads(o, layout, files, progress, bytes_per_sample);
  m.warm = time_warm_reads(o, files, progress);
  m.reader_bytes_per_s = time_reader(o, layout, bytes_per_sample);
  time_decode_and_copy(o, layout, bytes_per_sample, m);
  for (Codec c : o.codecs) {
    m.codecs.push_back(c == Codec::deflate ? measure_deflate(o, layout, files.front()) : measure_codec(o, layout, files.front(), c));
    if (progress) progress(fmt::format("codec {}", codec_name(c)));
  }
  return m;
}

}  // namespace mrplan
