// Sample codecs (preprocessing paper, sections IV-V): encode and decode throughput per codec in GB/s
// of decoded floats, against the raw path's own work on the host (transpose and check) and its
// copy of the floats to the GPU. Samples at the paper's sizes: CosmoFlow 128^3 x 4 counts, DeepCAM
// 768 x 1152 x 16. Device rows run where a GPU is (device_decoding_unavailable() says why not).
//   build/default/bench/mrplan_codec_bench [--benchmark_filter=Device]
#include <benchmark/benchmark.h>
#ifndef MRPLAN_NO_CUDA
#include <cuda_runtime_api.h>
#endif

#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>

#include "exec/climate_fields.hpp"
#include "exec/cosmo_fields.hpp"
#include "exec/device_decoder.hpp"

using namespace mrplan;

namespace {

struct Sample {
  SampleShape shape;
  std::vector<float> values;  // channel-last, as stored
  ValuePipeline pipe;         // the loader's checks and preprocessing for this workload
  std::vector<float> shift, scale;
};

void refuse_nonfinite(float v) {
  if (!std::isfinite(v) || std::fabs(v) > 1e15f) throw std::runtime_error("a value the loader refuses");
}

const Sample& cosmoflow() {
  static const Sample s = [] {
    const int S = 128;
    Sample x{{int64_t{S} * S * S, 4, S}, {}, {}, {}, {}};
    std::vector<int16_t> counts(static_cast<size_t>(x.shape.voxels * 4));
    const float unit[4] = {0.1f, -0.2f, 0.3f, 0.0f};
    CosmoFieldGenerator(S, CosmoCounts::real).sample(cosmo_params_from_unit(unit), 1, counts.data());
    x.values.assign(counts.begin(), counts.end());
    x.pipe.check = [](float v) {
      refuse_nonfinite(v);
      if (v < 0) throw std::runtime_error("a negative count");
    };
    x.pipe.log1p = [](float* v, size_t n) {
      for (size_t i = 0; i < n; ++i) v[i] = std::log1p(v[i]);
    };
    return x;
  }();
  return s;
}

const Sample& deepcam() {
  static const Sample s = [] {
    const int H = 768, W = 1152;
    Sample x{{int64_t{H} * W, kClimateChannels, W}, std::vector<float>(static_cast<size_t>(H) * W * kClimateChannels), {}, {}, {}};
    std::vector<int16_t> labels(static_cast<size_t>(H) * W);
    ClimateFieldGenerator(H, W).sample(1, x.values.data(), labels.data());
    for (int c = 0; c < kClimateChannels; ++c) {
      float lo = INFINITY, hi = -INFINITY;
      for (size_t i = static_cast<size_t>(c); i < x.values.size(); i += kClimateChannels)
        lo = std::min(lo, x.values[i]), hi = std::max(hi, x.values[i]);
      x.shift.push_back(lo), x.scale.push_back(1.f / (hi - lo));
    }
    x.pipe.check = refuse_nonfinite;
    x.pipe.shift = x.shift.data(), x.pipe.scale = x.scale.data(), x.pipe.half = true;
    return x;
  }();
  return s;
}

const Sample& sample_for(Codec c) { return c == Codec::lut ? cosmoflow() : deepcam(); }

const std::vector<uint8_t>& encoded(Codec c) {
  static std::map<Codec, std::vector<uint8_t>> done;
  auto& e = done[c];
  if (e.empty()) e = make_codec(c)->encode(sample_for(c).values.data(), sample_for(c).shape);
  return e;
}

double decoded_bytes(const Sample& s) { return static_cast<double>(s.values.size() * sizeof(float)); }

void label(benchmark::State& state, Codec c) {
  state.counters["ratio"] = decoded_bytes(sample_for(c)) / static_cast<double>(encoded(c).size());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * decoded_bytes(sample_for(c))));
}

void Encode(benchmark::State& state, Codec c) {
  const auto codec = make_codec(c);
  const Sample& s = sample_for(c);
  for (auto _ : state) benchmark::DoNotOptimize(codec->encode(s.values.data(), s.shape));
  label(state, c);
}

void HostDecode(benchmark::State& state, Codec c) {
  const auto codec = make_codec(c);
  const Sample& s = sample_for(c);
  std::vector<float> out(s.values.size());
  for (auto _ : state) codec->decode(encoded(c).data(), encoded(c).size(), s.shape, s.pipe, out.data(), "bench");
  label(state, c);
}

// The raw path's work beyond reading the bytes (exec/sample_store.cpp): transpose to channel-first,
// check, min-max, then the preprocessing over the sample.
void HostRaw(benchmark::State& state, Codec like) {
  const Sample& s = sample_for(like);
  const int64_t C = s.shape.channels, V = s.shape.voxels;
  std::vector<float> out(s.values.size());
  for (auto _ : state) {
    for (int64_t v = 0; v < V; ++v)
      for (int64_t c = 0; c < C; ++c) {
        const float x = s.values[static_cast<size_t>(v * C + c)];
        s.pipe.check(x);
        out[static_cast<size_t>(c * V + v)] = s.pipe.shift ? (x - s.pipe.shift[c]) * s.pipe.scale[c] : x;
      }
    if (s.pipe.log1p) s.pipe.log1p(out.data(), out.size());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * decoded_bytes(s)));
}

bool skip_without_gpu(benchmark::State& state) {
  const auto why = device_decoding_unavailable();
  if (!why.empty()) state.SkipWithError(why.c_str());
  return !why.empty();
}

// Wall time of decode(): the host's header and table work, the encoded bytes' copy, the kernels;
// `pinned`: the encoded bytes in pinned memory, as a loader reading into its own pinned buffers
// has them (else decode() copies them to its pinned buffer first). Counters: the copy's and the
// kernels' own rates (CUDA events), decoded bytes per second.
void DeviceDecode(benchmark::State& state, Codec c, bool pinned) {
  if (skip_without_gpu(state)) return;
  const Sample& s = sample_for(c);
  DeviceDecoder d(c);
  DeviceFloats out(s.values.size());
  const auto& e = encoded(c);
  void* in = nullptr;
#ifndef MRPLAN_NO_CUDA
  if (pinned && cudaMallocHost(&in, e.size()) != cudaSuccess) return state.SkipWithError("cudaMallocHost failed");
#endif
  if (in) std::memcpy(in, e.data(), e.size());
  double copy_s = 0, kernel_s = 0;
  for (auto _ : state) {
    d.decode(in ? static_cast<const uint8_t*>(in) : e.data(), e.size(), s.shape, s.pipe, out.data(), "bench");
    copy_s += d.last().copy_s, kernel_s += d.last().decode_s;
  }
#ifndef MRPLAN_NO_CUDA
  if (in) cudaFreeHost(in);
#endif
  label(state, c);
  const double n = static_cast<double>(state.iterations());
  state.counters["kernel_GBps"] = decoded_bytes(s) * n / kernel_s / 1e9;
  state.counters["copied_MB"] = static_cast<double>(d.last().copied_bytes) / 1e6;
  state.counters["copy_GBps"] = static_cast<double>(d.last().copied_bytes) * n / copy_s / 1e9;
}

// What the raw path sends instead: the decoded floats from pinned host memory to the GPU.
void DeviceRawCopy(benchmark::State& state, Codec like) {
  if (skip_without_gpu(state)) return;
#ifndef MRPLAN_NO_CUDA
  const Sample& s = sample_for(like);
  const size_t bytes = s.values.size() * sizeof(float);
  DeviceFloats out(s.values.size());
  void* pinned = nullptr;
  if (cudaMallocHost(&pinned, bytes) != cudaSuccess) return state.SkipWithError("cudaMallocHost failed");
  std::memcpy(pinned, s.values.data(), bytes);
  for (auto _ : state)
    if (cudaMemcpy(out.data(), pinned, bytes, cudaMemcpyHostToDevice) != cudaSuccess) state.SkipWithError("cudaMemcpy failed");
  cudaFreeHost(pinned);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * decoded_bytes(s)));
#else
  static_cast<void>(like);
#endif
}

}  // namespace

BENCHMARK_CAPTURE(Encode, lut_cosmoflow128, Codec::lut)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Encode, diff_deepcam, Codec::diff)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(HostRaw, cosmoflow128, Codec::lut)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(HostDecode, lut_cosmoflow128, Codec::lut)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(HostRaw, deepcam, Codec::diff)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(HostDecode, diff_deepcam, Codec::diff)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(DeviceRawCopy, cosmoflow128, Codec::lut)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(DeviceDecode, lut_cosmoflow128, Codec::lut, false)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(DeviceDecode, lut_cosmoflow128_pinned, Codec::lut, true)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(DeviceRawCopy, deepcam, Codec::diff)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(DeviceDecode, diff_deepcam, Codec::diff, false)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(DeviceDecode, diff_deepcam_pinned, Codec::diff, true)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_MAIN();
