#include "exec/encode_dataset.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <mutex>
#include <filesystem>
#include <numeric>

#include "exec/codec_lut_layout.hpp"
#include "exec/data_layout.hpp"
#include "exec/hdf5_file.hpp"
#include "exec/parallel_work.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace fs = std::filesystem;

namespace {

// The dataset folders under `in`: itself where it holds sample files, and each res{K}/ that does.
std::vector<fs::path> dataset_folders(const fs::path& in) {
  if (!fs::is_directory(in)) fail_input(in.string(), "", "not a folder");
  const auto holds_h5 = [](const fs::path& d) {
    for (const auto& e : fs::directory_iterator(d))
      if (e.path().extension() == ".h5" && e.path().filename() != kStatsFile) return true;
    return false;
  };
  std::vector<fs::path> found;
  if (holds_h5(in)) found.push_back("");
  for (const auto& e : fs::directory_iterator(in))
    if (e.is_directory() && e.path().filename().string().rfind("res", 0) == 0 && holds_h5(e.path())) found.push_back(e.path().filename());
  std::sort(found.begin(), found.end());
  if (found.empty()) fail_input(in.string(), "", "holds no sample files (*.h5), here or in res{K}/ folders");
  return found;
}

// Decodes what was encoded and compares it with the channel-last original.
void measure_error(const SampleCodec& codec, const std::vector<uint8_t>& bytes, const float* x, SampleShape s, EncodeReport& rep) {
  std::vector<float> back(static_cast<size_t>(s.voxels * s.channels));
  codec.decode(bytes.data(), bytes.size(), s, {}, back.data(), "encoded sample");
  int64_t off = 0;
  double worst = 0;
  for (int64_t v = 0; v < s.voxels; ++v)
    for (int64_t c = 0; c < s.channels; ++c) {
      const double want = x[v * s.channels + c], err = std::fabs(back[static_cast<size_t>(c * s.voxels + v)] - want);
      off += err > 0.1 * std::fabs(want);
      worst = std::max(worst, err);
    }
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  rep.values += s.voxels * s.channels, rep.values_off_10pct += off;
  rep.max_abs_error = std::max(rep.max_abs_error, worst);
}

}  // namespace

SampleShape raw_sample_shape(const std::vector<uint64_t>& d, const DataLayout& layout, const std::string& file) {
  const size_t lead = layout.per_sample_files ? 0 : 1;
  if (d.size() < lead + 2) fail_input(file, layout.data, "expected spatial axes and channels");
  return {static_cast<int64_t>(std::accumulate(d.begin() + static_cast<long>(lead), d.end() - 1, uint64_t{1}, std::multiplies<>())),
          static_cast<int64_t>(d.back()), static_cast<int64_t>(d[d.size() - 2])};
}

void require_raw(const H5File& h5, const DataLayout& layout, const std::string& then) {
  const auto codec = h5.text_attribute(layout.data, kCodecAttribute);
  if (!codec.empty() && codec != "raw") fail_input(h5.path(), layout.data, fmt::format("is already encoded ({}): {}", codec, then));
}

namespace {

// The samples of one file, a few at a time (a real CosmoFlow file holds gigabytes), encoded on threads.
void encode_samples(const H5File& src, H5File& dst, const DataLayout& layout, const EncodeOptions& o, ProgressBar& bar, EncodeReport& rep) {
  const auto d = src.dims(layout.data);
  const size_t lead = layout.per_sample_files ? 0 : 1;
  const SampleShape shape = raw_sample_shape(d, layout, src.path());
  const std::vector<uint64_t> sample_dims(d.begin() + static_cast<long>(lead), d.end());
  const uint64_t rows = lead ? d[0] : 1, per = static_cast<uint64_t>(shape.voxels * shape.channels);
  const auto codec = make_codec(o.codec);
  const unsigned threads = thread_count(o.threads);
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> offsets{0};
  for (uint64_t first = 0; first < rows; first += threads) {
    const uint64_t n = std::min<uint64_t>(threads, rows - first);
    std::vector<float> x(n * per);
    if (lead) src.read_rows(layout.data, first, n, x.data());
    else x = src.read_all(layout.data);
    std::vector<std::vector<uint8_t>> encoded(n);
    parallel_for(static_cast<int64_t>(n), threads, [&](int64_t i) {
      const float* sample = &x[static_cast<size_t>(i) * per];
      encoded[i] = codec->encode(sample, shape);
      if (!codec->lossless()) measure_error(*codec, encoded[i], sample, shape, rep);
      bar.add(1);
    });
    for (const auto& e : encoded) {
      if (o.codec == Codec::lut) {
        const auto h = lut::read_header(e.data(), e.size(), shape, src.path());
        rep.lut_values += h.values, rep.lut_groups += h.group_key ? h.groups : 0;
      }
      bytes.insert(bytes.end(), e.begin(), e.end());
      offsets.push_back(bytes.size());
    }
  }
  dst.write(layout.data, {bytes.size()}, bytes.data());
  dst.write(offsets_dataset(layout.data), {offsets.size()}, offsets.data());
  dst.set_attribute(layout.data, kSampleDimsAttribute, sample_dims);
}

void encode_file(const fs::path& in, const fs::path& out, const DataLayout& layout, const EncodeOptions& o, ProgressBar& bar,
                 EncodeReport& rep) {
  const fs::path tmp = out.parent_path() / ("." + out.filename().string() + ".tmp");  // renamed when whole
  {
    H5File src(in.string(), H5File::Mode::read);
    require_raw(src, layout, "encode the raw dataset");
    H5File dst(tmp.string(), H5File::Mode::create);
    const auto d = src.dims(layout.data);
    if (o.codec == Codec::lut || o.codec == Codec::diff) {
      encode_samples(src, dst, layout, o, bar, rep);
    } else {
      dst.copy_from(src, layout.data, o.codec == Codec::deflate ? o.deflate_level : 0, !layout.per_sample_files);
      bar.add(layout.per_sample_files ? 1 : static_cast<int64_t>(d[0]));
    }
    dst.set_attribute(layout.data, kCodecAttribute, codec_name(o.codec));
    for (const auto& name : src.datasets())
      if (name != layout.data) dst.copy_from(src, name);
    rep.samples += layout.per_sample_files ? 1 : static_cast<int64_t>(d[0]);
    rep.sample_bytes_in += static_cast<double>(src.stored_bytes(layout.data));
    rep.sample_bytes_out += static_cast<double>(dst.stored_bytes(layout.data));
  }
  fs::rename(tmp, out);
  ++rep.files;
}

int64_t count_samples(const std::vector<std::string>& files, const DataLayout& layout) {
  int64_t n = 0;
  for (const auto& f : files) n += layout.per_sample_files ? 1 : static_cast<int64_t>(H5File(f, H5File::Mode::read).dims(layout.data).at(0));
  return n;
}

}  // namespace

EncodeReport encode_dataset(const EncodeOptions& o) {
  const auto folders = dataset_folders(o.in_dir);
  const std::string workload =
      !o.workload.empty() ? o.workload : workload_of_file(list_h5_files((fs::path(o.in_dir) / folders.front()).string()).front());
  const DataLayout layout = layout_for(workload);
  check_codec_fits(o.codec, layout, workload, "--codec");
  if (o.deflate_level < 1 || o.deflate_level > 9) fail_input("command line", "--level", "expected a deflate level from 1 to 9");
  if (fs::weakly_canonical(o.in_dir) == fs::weakly_canonical(o.out_dir)) fail_input(o.out_dir, "", "is the input folder: encode into another");
  const auto t0 = std::chrono::steady_clock::now();
  EncodeReport rep;
  for (const auto& sub : folders) {
    const fs::path in = fs::path(o.in_dir) / sub, out = fs::path(o.out_dir) / sub;
    const auto files = list_h5_files(in.string());
    require_layout(files.front(), workload, "--workload");
    fs::create_directories(out);  // after the checks: a refused encode leaves no folder behind
    ProgressBar bar(fmt::format("encode {}", sub.empty() ? in.filename().string() : sub.string()), count_samples(files, layout), o.progress);
    for (const auto& f : files) encode_file(f, out / fs::path(f).filename(), layout, o, bar, rep);
    if (fs::exists(in / kStatsFile)) fs::copy_file(in / kStatsFile, out / kStatsFile, fs::copy_options::overwrite_existing);
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace mrplan
