#pragma once
// The device decoders' kernels (exec/lut_kernels.cu, exec/diff_kernels.cu), launched on `stream`
// by exec/device_decoder.cpp. Each raises `status->bad` on a fault the host decoder would refuse,
// and never reads past the bytes it is given.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace mrplan {

struct DeviceStatus {
  int bad = 0;           // a damaged sample: the host decoder names the fault
  int nonfinite = 0;     // checked values that are NaN (infinities are in lo and hi)
  float lo = 0, hi = 0;  // the least and greatest checked value (a check bounds an interval)
};

// Lookup table (codec_lut_layout.hpp): `table` holds each key's value, channel c's at c * stride.
struct LutLaunch {
  const uint8_t* keys = nullptr;  // the group table's value keys (if any), then one key per voxel
  uint64_t voxels = 0;
  uint32_t channels = 0, values = 0, groups = 0;
  int value_key = 1, group_key = 0;
  const float* table = nullptr;
  size_t stride = 0;
  float* group_values = nullptr;  // groups x channels scratch, where there are groups
};
void launch_lut(const LutLaunch& a, float* out, DeviceStatus* status, cudaStream_t stream);

// Differential (codec_diff_layout.hpp): the whole sample, header included, and what the reader
// does to each value.
struct DiffLaunch {
  const uint8_t* sample = nullptr;
  size_t size = 0;
  uint32_t line = 0, lines = 0;
  uint64_t rows = 0;                               // lines per channel
  const float *shift = nullptr, *scale = nullptr;  // per channel, or none
  bool check = false, log1p = false, half = false;
};
void launch_diff(const DiffLaunch& a, float* out, DeviceStatus* status, cudaStream_t stream);

}  // namespace mrplan
