#include "exec/datagen.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>

#include <unistd.h>
#include <vector>

#include "exec/climate_fields.hpp"
#include "exec/cosmo_fields.hpp"
#include "exec/data_layout.hpp"
#include "exec/hdf5_file.hpp"
#include "exec/neuron_traces.hpp"
#include "exec/parallel_work.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

namespace {

// Neuron Inverter files: train_ (the samples asked for), val_ and test_ splits of up to 16 each.
DatagenReport generate_neuron_inverter(const DatagenOptions& o, int bins) {
  const auto t0 = std::chrono::steady_clock::now();
  const int files = static_cast<int>((o.samples + o.samples_per_file - 1) / o.samples_per_file);
  ProgressBar bar("datagen", o.samples, o.progress);
  DatagenReport rep;
  for (int f = 0; f < files; ++f) {
    const auto path = (std::filesystem::path(o.out_dir) / fmt::format("ni_{:04d}.h5", f)).string();
    H5File h5(path, H5File::Mode::create);
    const int64_t first = int64_t(f) * o.samples_per_file;
    const int64_t n_train = std::min<int64_t>(o.samples_per_file, o.samples - first);
    const int64_t n_extra = std::min<int64_t>(16, n_train);
    for (const auto& [split, n, salt] : {std::tuple{"train", n_train, uint64_t{0}}, std::tuple{"val", n_extra, uint64_t{1} << 40},
                                         std::tuple{"test", n_extra, uint64_t{2} << 40}}) {
      std::vector<float> frames(static_cast<size_t>(n * bins * kNeuronChannels));
      std::vector<float> labels(static_cast<size_t>(n * kNeuronParams));
      parallel_for(n, thread_count(o.threads), [&](int64_t i) {
        const uint64_t s = splitmix(o.seed * 0x100000001b3ULL + salt + static_cast<uint64_t>(first + i));
        std::mt19937_64 rng(s);
        std::uniform_real_distribution<float> unit(-1.f, 1.f);
        float* u = &labels[static_cast<size_t>(i * kNeuronParams)];
        for (int k = 0; k < kNeuronParams; ++k) u[k] = unit(rng);
        neuron_traces(u, splitmix(s), bins, &frames[static_cast<size_t>(i * bins * kNeuronChannels)]);
        if (salt == 0) bar.add(1);
      });
      const std::string sp = split;
      h5.write(sp + "_frames", {static_cast<uint64_t>(n), static_cast<uint64_t>(bins), kNeuronChannels}, frames.data());
      h5.write(sp + "_unitStar_par", {static_cast<uint64_t>(n), kNeuronParams}, labels.data());
      rep.bytes += static_cast<double>((frames.size() + labels.size()) * sizeof(float));
    }
    rep.samples += n_train;
    ++rep.files;
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

// DeepCAM: one sample per file (climate/data (H, W, 16), climate/labels_0 (H, W)), then stats.h5
// with each channel's minimum and maximum over the dataset, as the reference normalises with.
DatagenReport generate_deepcam(const DatagenOptions& o, int height) {
  const auto t0 = std::chrono::steady_clock::now();
  const int width = height * 3 / 2;
  const ClimateFieldGenerator gen(height, width);
  const size_t npix = static_cast<size_t>(height) * width;
  const uint64_t H = static_cast<uint64_t>(height), W = static_cast<uint64_t>(width);
  ProgressBar bar("datagen", o.samples, o.progress);
  DatagenReport rep;
  std::vector<float> lo(kClimateChannels, INFINITY), hi(kClimateChannels, -INFINITY);
  constexpr int64_t kChunk = 64;  // generated in parallel, written by one thread
  for (int64_t first = 0; first < o.samples; first += kChunk) {
    const int64_t n = std::min(kChunk, o.samples - first);
    std::vector<float> data(static_cast<size_t>(n) * npix * kClimateChannels);
    std::vector<int16_t> labels(static_cast<size_t>(n) * npix);
    parallel_for(n, thread_count(o.threads), [&](int64_t i) {
      gen.sample(splitmix(o.seed * 0x100000001b3ULL + static_cast<uint64_t>(first + i)), &data[i * npix * kClimateChannels],
                 &labels[i * npix]);
      bar.add(1);
    });
    for (int64_t i = 0; i < n; ++i) {
      const float* x = &data[i * npix * kClimateChannels];
      for (size_t k = 0; k < npix * kClimateChannels; ++k) {
        const size_t c = k % kClimateChannels;
        lo[c] = std::min(lo[c], x[k]);
        hi[c] = std::max(hi[c], x[k]);
      }
      const auto path = (std::filesystem::path(o.out_dir) / fmt::format("data-{:06d}.h5", first + i)).string();
      H5File h5(path, H5File::Mode::create);
      h5.write("climate/data", {H, W, kClimateChannels}, x);
      h5.write("climate/labels_0", {H, W}, &labels[i * npix]);
      rep.bytes += static_cast<double>(npix * (kClimateChannels * sizeof(float) + sizeof(int16_t)));
      ++rep.files;
    }
    rep.samples += n;
  }
  H5File stats((std::filesystem::path(o.out_dir) / kStatsFile).string(), H5File::Mode::create);
  stats.write(kStatsMin, {kClimateChannels}, lo.data());
  stats.write(kStatsMax, {kClimateChannels}, hi.data());
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

// Min-max statistics for a coarsened DeepCAM folder: block means stay within the dense range, so
// the dense statistics carry over (scaled by the block size for sums) and both resolutions see the
// same normalisation, which is what lets the coarse weights transfer.
void coarsen_stats(const CoarsenOptions& o, CoarsenOp op) {
  const auto in = std::filesystem::path(o.in_dir) / kStatsFile;
  if (!std::filesystem::exists(in)) return;
  H5File src(in.string(), H5File::Mode::read);
  auto lo = src.read_all(kStatsMin), hi = src.read_all(kStatsMax);
  if (op == CoarsenOp::sum) {
    const float block = static_cast<float>(std::pow(o.factor, layout_for(o.workload).spatial_axes));
    for (auto& v : lo) v *= block;
    for (auto& v : hi) v *= block;
  }
  H5File dst((std::filesystem::path(o.out_dir) / kStatsFile).string(), H5File::Mode::create);
  dst.write(kStatsMin, {lo.size()}, lo.data());
  dst.write(kStatsMax, {hi.size()}, hi.data());
}

}  // namespace

DatagenReport generate_dataset(const DatagenOptions& o) {
  layout_for(o.workload);  // refuses workloads without a layout
  if (o.samples < 1) fail_input("command line", "--samples", "must be >= 1");
  if (o.samples_per_file < 1) fail_input("command line", "--samples-per-file", "must be >= 1");
  const bool ni = o.workload == "neuron-inverter", cam = o.workload == "deepcam";
  const int size = o.size > 0 ? o.size : ni ? 1600 : cam ? 96 : 32;
  if (size < 4 || size % 2) fail_input("command line", "--size", fmt::format("must be even and >= 4, got {}", size));
  std::filesystem::create_directories(o.out_dir);
  if (ni) return generate_neuron_inverter(o, size);
  if (cam) return generate_deepcam(o, size);
  const auto t0 = std::chrono::steady_clock::now();
  const CosmoCounts counts = o.counts.value_or(size >= 128 ? CosmoCounts::real : CosmoCounts::mini);
  const CosmoFieldGenerator gen(size, counts);
  const int64_t voxels = int64_t(size) * size * size;
  const int files = static_cast<int>((o.samples + o.samples_per_file - 1) / o.samples_per_file);
  ProgressBar bar("datagen", o.samples, o.progress);
  DatagenReport rep;
  rep.what = fmt::format("{} counts", to_string(counts));
  for (int f = 0; f < files; ++f) {
    const int64_t first = int64_t(f) * o.samples_per_file;
    const int64_t n = std::min<int64_t>(o.samples_per_file, o.samples - first);
    std::vector<int16_t> maps(static_cast<size_t>(n * voxels * 4));
    std::vector<float> labels(static_cast<size_t>(n * 4));
    parallel_for(n, thread_count(o.threads), [&](int64_t i) {
      const uint64_t s = splitmix(o.seed * 0x100000001b3ULL + static_cast<uint64_t>(first + i));
      std::mt19937_64 rng(s);
      std::uniform_real_distribution<float> unit(-1.f, 1.f);
      float* u = &labels[i * 4];
      for (int k = 0; k < 4; ++k) u[k] = unit(rng);
      gen.sample(cosmo_params_from_unit(u), splitmix(s), &maps[static_cast<size_t>(i * voxels * 4)]);
      bar.add(1);
    });
    const auto path = (std::filesystem::path(o.out_dir) / fmt::format("cosmo_{:04d}.h5", f)).string();
    H5File h5(path, H5File::Mode::create);
    const uint64_t S = static_cast<uint64_t>(size);
    h5.write("3Dmap", {static_cast<uint64_t>(n), S, S, S, 4}, maps.data());
    h5.write("unitPar", {static_cast<uint64_t>(n), 4}, labels.data());
    rep.bytes += maps.size() * sizeof(int16_t) + labels.size() * sizeof(float);
    rep.samples += n;
    ++rep.files;
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

namespace {

// The data's dimensions with a sample axis first (a one-sample file gets one), checked against the
// layout's spatial axes and the factor; InputError naming the file.
std::vector<uint64_t> coarsenable_dims(const H5File& in, const std::string& path, const DataLayout& L, int factor) {
  auto d = in.dims(L.data);
  const int k = L.spatial_axes;
  if (L.per_sample_files) d.insert(d.begin(), 1);  // one sample, no sample axis on disk
  if (d.size() != static_cast<size_t>(k + 2))
    fail_input(path, L.data,
               fmt::format("expected ({}{} spatial axes, C), got {} axes", L.per_sample_files ? "" : "n, ", k,
                           d.size() - (L.per_sample_files ? 1 : 0)));
  for (int a = 1; a <= k; ++a)
    if (d[a] % factor) fail_input(path, L.data, fmt::format("factor {} does not divide axis {} of size {}", factor, a, d[a]));
  return d;
}

// One sample's every input voxel (row-major over the spatial axes of `d`, channels last) added,
// times `scale`, into its block of `dst`.
void add_blocks(const std::vector<uint64_t>& d, int k, uint64_t f, const float* src, float* dst, float scale) {
  const uint64_t C = d.back();
  uint64_t voxels = 1;
  for (int a = 1; a <= k; ++a) voxels *= d[a];
  for (uint64_t v = 0; v < voxels; ++v) {
    uint64_t rest = v, target = 0, stride = 1;
    for (int a = k; a >= 1; --a) {
      const uint64_t idx = rest % d[a];
      rest /= d[a];
      target += (idx / f) * stride;
      stride *= d[a] / f;
    }
    for (uint64_t c = 0; c < C; ++c) dst[target * C + c] += src[v * C + c] * scale;
  }
}

// One file coarsened into `out_path`: the data by blocks (summed counts stay integers), the labels
// unchanged: per-sample values, or per-pixel masks the coarse model predicts at full resolution
// through its final upsample (MRT III-B).
void coarsen_file(const std::string& path, const std::string& out_path, const CoarsenOptions& o, CoarsenOp op) {
  const DataLayout L = layout_for(o.workload);
  H5File in(path, H5File::Mode::read);
  const auto d = coarsenable_dims(in, path, L, o.factor);
  const int k = L.spatial_axes;
  const uint64_t n = d[0], C = d.back(), f = static_cast<uint64_t>(o.factor);
  std::vector<uint64_t> out_dims{n};
  uint64_t in_sample = C, out_sample = C;
  for (int a = 1; a <= k; ++a) out_dims.push_back(d[a] / f), in_sample *= d[a], out_sample *= d[a] / f;
  out_dims.push_back(C);
  if (L.per_sample_files) out_dims.erase(out_dims.begin());
  std::vector<float> buf(in_sample), out(n * out_sample, 0.f);
  const float scale = op == CoarsenOp::mean ? 1.f / static_cast<float>(std::pow(o.factor, k)) : 1.f;
  for (uint64_t i = 0; i < n; ++i) {
    if (L.per_sample_files) buf = in.read_all(L.data);
    else in.read_rows(L.data, i, 1, buf.data());
    add_blocks(d, k, f, buf.data(), &out[i * out_sample], scale);
  }
  const auto ld = in.dims(L.labels);
  const auto labels = in.read_all(L.labels);
  H5File h5(out_path, H5File::Mode::create);
  if (op == CoarsenOp::sum && !in.is_float(L.data)) {
    std::vector<int16_t> ints(out.size());
    for (size_t i = 0; i < out.size(); ++i) ints[i] = static_cast<int16_t>(std::min(out[i], 32767.f));
    h5.write(L.data, out_dims, ints.data());
  } else {
    h5.write(L.data, out_dims, out.data());
  }
  if (in.is_float(L.labels)) {
    h5.write(L.labels, std::vector<uint64_t>(ld.begin(), ld.end()), labels.data());
  } else {
    const std::vector<int16_t> ints(labels.begin(), labels.end());
    h5.write(L.labels, std::vector<uint64_t>(ld.begin(), ld.end()), ints.data());
  }
}

}  // namespace

CoarsenReport coarsen_dataset(const CoarsenOptions& o) {
  if (o.factor < 2) fail_input("command line", "--factor", "must be >= 2");
  const CoarsenOp op = o.op.value_or(layout_for(o.workload).coarsen);
  const auto files = list_h5_files(o.in_dir);
  require_layout(files.front(), o.workload, "--workload");
  std::filesystem::create_directories(o.out_dir);
  const auto t0 = std::chrono::steady_clock::now();
  CoarsenReport rep;
  rep.op = op;
  std::mutex mu;
  ProgressBar bar("coarsen", static_cast<int64_t>(files.size()), o.progress);
  parallel_for(static_cast<int64_t>(files.size()), thread_count(o.threads), [&](int64_t fi) {
    const auto& path = files[fi];
    const auto out_path = (std::filesystem::path(o.out_dir) / std::filesystem::path(path).filename()).string();
    coarsen_file(path, out_path, o, op);
    std::lock_guard<std::mutex> lock(mu);
    rep.bytes_read += static_cast<double>(std::filesystem::file_size(path));
    rep.bytes_written += static_cast<double>(std::filesystem::file_size(out_path));
    ++rep.files;
    bar.add(1);
  });
  coarsen_stats(o, op);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace mrplan
