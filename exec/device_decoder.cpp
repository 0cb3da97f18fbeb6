// The device decoders' host side: header and value table on the host (a few hundred values), the
// encoded bytes copied once to the GPU, the kernels, then the status read back. A fault or a value
// the check refuses is named by the host decoder, which re-reads the sample: one set of messages.
#include "exec/device_decoder.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "exec/codec_diff_layout.hpp"
#include "exec/codec_lut_layout.hpp"
#include "exec/device_kernels.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(fmt::format("device decoder: {}: {}", what, cudaGetErrorString(e)));
}

// Device (or pinned host) memory that grows to what a sample needs and is kept for the next one.
template <class T, bool Pinned = false>
struct Grown {
  T* data = nullptr;
  size_t count = 0;
  T* at_least(size_t n) {
    if (n <= count) return data;
    release();
    check(Pinned ? cudaMallocHost(reinterpret_cast<void**>(&data), n * sizeof(T))
                 : cudaMalloc(reinterpret_cast<void**>(&data), n * sizeof(T)),
          "allocating decoder buffers");
    count = n;
    return data;
  }
  void release() {
    if (data) Pinned ? cudaFreeHost(data) : cudaFree(data);
    data = nullptr, count = 0;
  }
};

// Where a table goes after `n` bytes: the next 4-byte boundary.
size_t table_offset(size_t n) { return (n + 3) / 4 * 4; }

}  // namespace

std::string device_decoding_unavailable() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return fmt::format("no GPU here (cudaGetDeviceCount: {})", cudaGetErrorString(e));
  return n > 0 ? "" : "no GPU here (cudaGetDeviceCount: 0 devices)";
}

struct DeviceDecoder::State {
  Codec codec;
  std::unique_ptr<SampleCodec> host;  // names the faults the kernels find
  int device = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, copied = nullptr, done = nullptr;
  Grown<uint8_t, true> staging;  // pinned: a value table's copy
  Grown<uint8_t> bytes;
  Grown<float> groups;
  Grown<DeviceStatus> status;
  Grown<DeviceStatus, true> status_back;
  Timing last;

  ~State() {
    staging.release(), bytes.release(), groups.release(), status.release(), status_back.release();
    for (auto* e : {start, copied, done})
      if (e) cudaEventDestroy(e);
    if (stream) cudaStreamDestroy(stream);
  }
  // Copies `n` bytes, then `floats` from `table` at the next 4-byte boundary, to the GPU; returns
  // where the bytes are there. From pinned memory (a loader's own buffers) the copy runs at the
  // link's rate; from pageable memory the driver stages it.
  uint8_t* upload(const uint8_t* p, size_t n, const float* table = nullptr, size_t floats = 0) {
    const size_t table_at = table_offset(n);
    uint8_t* d = bytes.at_least(table_at + floats * sizeof(float));
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    check(cudaMemcpyAsync(d, p, n, cudaMemcpyHostToDevice, stream), "copying the sample to the GPU");
    if (floats) {
      std::memcpy(staging.at_least(floats * sizeof(float)), table, floats * sizeof(float));
      check(cudaMemcpyAsync(d + table_at, staging.data, floats * sizeof(float), cudaMemcpyHostToDevice, stream),
            "copying the table to the GPU");
    }
    check(cudaEventRecord(copied, stream), "cudaEventRecord");
    last.copied_bytes = table_at + floats * sizeof(float);
    return d;
  }
  static const float* table_of(const uint8_t* d, size_t n) { return reinterpret_cast<const float*>(d + table_offset(n)); }
  DeviceStatus* fresh_status() {
    const DeviceStatus clear{0, 0, INFINITY, -INFINITY};
    DeviceStatus* d = status.at_least(1);
    *status_back.at_least(1) = clear;
    check(cudaMemcpyAsync(d, status_back.data, sizeof clear, cudaMemcpyHostToDevice, stream), "clearing the decoder status");
    return d;
  }
  DeviceStatus decode_lut(const uint8_t* b, size_t size, SampleShape shape, const ValuePipeline& pipe, float* out,
                          const std::string& where);
  DeviceStatus decode_diff(const uint8_t* b, size_t size, SampleShape shape, const ValuePipeline& pipe, float* out,
                           const std::string& where);
  DeviceStatus finish(DeviceStatus* d) {
    check(cudaGetLastError(), "launching the decoder");
    check(cudaEventRecord(done, stream), "cudaEventRecord");
    check(cudaMemcpyAsync(status_back.data, d, sizeof(DeviceStatus), cudaMemcpyDeviceToHost, stream), "reading the decoder status");
    check(cudaStreamSynchronize(stream), "decoding on the GPU");
    float copy_ms = 0, decode_ms = 0;
    check(cudaEventElapsedTime(&copy_ms, start, copied), "cudaEventElapsedTime");
    check(cudaEventElapsedTime(&decode_ms, copied, done), "cudaEventElapsedTime");
    last.copy_s = copy_ms * 1e-3, last.decode_s = decode_ms * 1e-3;
    return *status_back.data;
  }
};

DeviceDecoder::DeviceDecoder(Codec c, int device) : s_(std::make_unique<State>()) {
  s_->codec = c;
  s_->host = make_codec(c);  // InputError for raw and deflate
  if (const auto why = device_decoding_unavailable(); !why.empty()) throw std::runtime_error("device decoder: " + why);
  if (device >= 0) check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaGetDevice(&s_->device), "cudaGetDevice");
  check(cudaStreamCreateWithFlags(&s_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  for (auto* e : {&s_->start, &s_->copied, &s_->done}) check(cudaEventCreate(e), "cudaEventCreate");
}

DeviceDecoder::~DeviceDecoder() = default;

DeviceDecoder::Timing DeviceDecoder::last() const { return s_->last; }

DeviceStatus DeviceDecoder::State::decode_lut(const uint8_t* b, size_t size, SampleShape shape, const ValuePipeline& pipe, float* out,
                                              const std::string& where) {
  const auto h = lut::read_header(b, size, shape, where);
  const auto t = lut::value_table(b, h, pipe);  // the check and log1p run here, on the unique values
  const uint8_t* keys = lut::keys_of(b, h);
  const size_t key_bytes = size - static_cast<size_t>(keys - b);
  DeviceStatus* st = fresh_status();
  const uint8_t* d = upload(keys, key_bytes, t.values.data(), t.values.size());
  LutLaunch a;
  a.keys = d, a.voxels = h.voxels, a.channels = h.channels, a.values = h.values, a.groups = h.groups;
  a.value_key = h.value_key, a.group_key = h.group_key, a.table = table_of(d, key_bytes), a.stride = t.stride;
  if (h.group_key) a.group_values = groups.at_least(size_t{h.groups} * h.channels);
  launch_lut(a, out, st, stream);
  return finish(st);
}

DeviceStatus DeviceDecoder::State::decode_diff(const uint8_t* b, size_t size, SampleShape shape, const ValuePipeline& pipe, float* out,
                                               const std::string& where) {
  const auto h = diff::read_header(b, size, shape, where);
  std::vector<float> min_max;  // shift, then scale, per channel
  if (pipe.shift)
    min_max.insert(min_max.end(), pipe.shift, pipe.shift + h.channels), min_max.insert(min_max.end(), pipe.scale, pipe.scale + h.channels);
  DeviceStatus* st = fresh_status();
  const uint8_t* d = upload(b, size, min_max.data(), min_max.size());
  DiffLaunch a;
  a.sample = d, a.size = size, a.line = h.line, a.lines = h.lines, a.rows = h.voxels / h.line;
  if (pipe.shift) a.shift = table_of(d, size), a.scale = a.shift + h.channels;
  a.check = static_cast<bool>(pipe.check), a.log1p = static_cast<bool>(pipe.log1p), a.half = pipe.half;
  launch_diff(a, out, st, stream);
  return finish(st);
}

namespace {

// Whether the check passes every value the kernel saw: it bounds an interval, so the least and
// greatest value and any NaN stand for all of them.
bool check_passes(const ValuePipeline& pipe, const DeviceStatus& st) {
  if (!pipe.check || st.lo > st.hi) return true;
  try {
    pipe.check(st.lo), pipe.check(st.hi);
    if (st.nonfinite) pipe.check(NAN);
  } catch (const InputError&) {
    return false;
  }
  return true;
}

}  // namespace

void DeviceDecoder::decode(const uint8_t* b, size_t size, SampleShape shape, const ValuePipeline& pipe, float* device_out,
                           const std::string& where) {
  State& s = *s_;
  check(cudaSetDevice(s.device), "cudaSetDevice");
  const DeviceStatus st = s.codec == Codec::lut ? s.decode_lut(b, size, shape, pipe, device_out, where)
                                                : s.decode_diff(b, size, shape, pipe, device_out, where);
  if (!st.bad && check_passes(pipe, st)) return;
  std::vector<float> scratch(static_cast<size_t>(shape.voxels * shape.channels));
  s.host->decode(b, size, shape, pipe, scratch.data(), where);  // throws the host decoder's message
  fail_input(where, codec_name(s.codec), "the device decoder finds this sample damaged and the host decoder does not: report it");
}

DeviceFloats::DeviceFloats(size_t count) : count_(count) {
  check(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(float)), "cudaMalloc");
}
DeviceFloats::~DeviceFloats() { cudaFree(data_); }
std::vector<float> DeviceFloats::to_host() const {
  std::vector<float> v(count_);
  check(cudaMemcpy(v.data(), data_, count_ * sizeof(float), cudaMemcpyDeviceToHost), "copying back from the GPU");
  return v;
}

}  // namespace mrplan
