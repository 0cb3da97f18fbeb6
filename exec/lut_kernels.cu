// The lookup-table decoder's kernels (preprocessing paper, section V): the group table first (each
// group's values, channel by channel), then one thread a voxel writing its channels, so that each
// channel's writes are contiguous across a warp.
#include <algorithm>

#include "exec/device_kernels.hpp"

namespace mrplan {

namespace {

// Keys are packed without alignment (a 1-byte group table can leave 2-byte voxel keys odd).
__device__ uint32_t key_at(const uint8_t* p, size_t i, int width) {
  const uint8_t* q = p + i * width;
  uint32_t k = q[0];
  if (width > 1) k |= uint32_t{q[1]} << 8;
  if (width > 2) k |= uint32_t{q[2]} << 16 | uint32_t{q[3]} << 24;
  return k;
}

__global__ void group_values(LutLaunch a, DeviceStatus* status) {
  const size_t n = size_t{a.groups} * a.channels;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint32_t key = key_at(a.keys, i, a.value_key);
    if (key >= a.values) {
      status->bad = 1;
      continue;
    }
    a.group_values[i] = a.table[(i % a.channels) * a.stride + key];
  }
}

__global__ void grouped_voxels(LutLaunch a, float* out, DeviceStatus* status) {
  const uint8_t* keys = a.keys + size_t{a.groups} * a.channels * a.value_key;
  for (uint64_t v = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; v < a.voxels; v += uint64_t{gridDim.x} * blockDim.x) {
    const uint32_t g = key_at(keys, v, a.group_key);
    if (g >= a.groups) {
      status->bad = 1;
      continue;
    }
    for (uint32_t c = 0; c < a.channels; ++c) out[c * a.voxels + v] = a.group_values[size_t{g} * a.channels + c];
  }
}

__global__ void keyed_voxels(LutLaunch a, float* out, DeviceStatus* status) {
  for (uint64_t v = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; v < a.voxels; v += uint64_t{gridDim.x} * blockDim.x)
    for (uint32_t c = 0; c < a.channels; ++c) {
      const uint32_t key = key_at(a.keys, v * a.channels + c, a.value_key);
      if (key >= a.values) {
        status->bad = 1;
        continue;
      }
      out[c * a.voxels + v] = a.table[c * a.stride + key];
    }
}

unsigned blocks_for(uint64_t n, unsigned threads) {
  return static_cast<unsigned>(std::min<uint64_t>((n + threads - 1) / threads, 65535 * 8));
}

}  // namespace

void launch_lut(const LutLaunch& a, float* out, DeviceStatus* status, cudaStream_t stream) {
  constexpr unsigned kThreads = 256;
  if (a.group_key == 0) {
    keyed_voxels<<<blocks_for(a.voxels, kThreads), kThreads, 0, stream>>>(a, out, status);
    return;
  }
  group_values<<<blocks_for(uint64_t{a.groups} * a.channels, kThreads), kThreads, 0, stream>>>(a, status);
  grouped_voxels<<<blocks_for(a.voxels, kThreads), kThreads, 0, stream>>>(a, out, status);
}

}  // namespace mrplan
