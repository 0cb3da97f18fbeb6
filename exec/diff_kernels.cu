// The differential decoder's kernel (preprocessing paper, section IV): a warp a line. Segments
// restart from their own pivot, so once their starts are known each lane sums one segment's steps
// in FP32, in the host decoder's order: the same bits. Lane 0 walks the segment headers 32 at a
// time to find those starts.
#include <cuda_fp16.h>

#include <cstring>

#include "exec/codec_diff_layout.hpp"
#include "exec/device_kernels.hpp"

namespace mrplan {

namespace {

constexpr int kWarps = 8;  // lines a block decodes
constexpr unsigned kAll = 0xffffffffu;

// Fields are packed without alignment.
__device__ uint32_t u32_at(const uint8_t* p) { return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24; }
__device__ float f32_at(const uint8_t* p) { return __uint_as_float(u32_at(p)); }

struct Checked {  // what a check sees of the values it is given
  float lo = INFINITY, hi = -INFINITY;
  int nonfinite = 0;
  __device__ void see(float v) {
    if (isnan(v)) nonfinite = 1;
    lo = fminf(lo, v), hi = fmaxf(hi, v);
  }
};

// The reader's preprocessing of one decoded value, in the host decoder's order.
__device__ float finish(const DiffLaunch& a, uint64_t channel, float v) {
  if (a.shift) v = (v - a.shift[channel]) * a.scale[channel];
  if (a.log1p) v = log1pf(v);
  if (a.half) v = __half2float(__float2half_rn(v));
  return v;
}

// Where value i of a line sits in a warp's shared buffer: one float of padding every 32, so that
// segments 64 values apart (the encoder's longest) fall in different banks.
__host__ __device__ constexpr uint32_t padded(uint32_t i) { return i + (i >> 5); }
constexpr uint32_t kMaxStagedLine = 1408;  // within 48 KB a block (8 lines); longer lines go straight to global memory

// A line's values as decoded (before the reader's preprocessing): into the warp's shared buffer,
// or straight to the output where the line is too long for it.
struct LineOut {
  float* staged;  // null: `global`
  float* global;
  __device__ void put(uint32_t i, float v) const {
    if (staged) staged[padded(i)] = v;
    else global[i] = v;
  }
};

// One line of `a.line` values from `p` (its mode byte) with `room` bytes before the sample ends;
// false where the bytes are damaged.
__device__ bool decode_line(const DiffLaunch& a, const uint8_t* p, uint64_t room, uint64_t channel, const LineOut& out, Checked& seen,
                            uint32_t* seg_at, uint32_t* seg_out) {
  const unsigned lane = threadIdx.x % 32;
  const uint32_t W = a.line;
  const uint8_t mode = p[0];
  if (mode == diff::constant_line) {
    if (room < 5) return false;
    const float v = f32_at(p + 1);
    seen.see(v);
    for (uint32_t w = lane; w < W; w += 32) out.global[w] = finish(a, channel, v);
    return true;
  }
  if (mode == diff::raw_line) {
    if (room < 1 + 4ull * W) return false;
    for (uint32_t w = lane; w < W; w += 32) {
      const float v = f32_at(p + 1 + 4ull * w);
      seen.see(v);
      out.global[w] = finish(a, channel, v);
    }
    return true;
  }
  if (mode != diff::steps_line || room < 3) return false;
  const uint32_t segments = uint32_t{p[1]} | uint32_t{p[2]} << 8;
  uint64_t at = 3;    // lane 0: the next segment's byte
  uint32_t done = 0;  // lane 0: values placed so far
  int bad = 0;
  for (uint32_t first = 0; first < segments; first += 32) {
    const uint32_t count = min(32u, segments - first);
    if (lane == 0)
      for (uint32_t k = 0; k < count && !bad; ++k) {
        const uint32_t steps = at + 6 <= room ? p[at + 5] : 0;
        if (at + 6 + steps > room || done + 1 + steps > W) {
          bad = 1;
          break;
        }
        seg_at[k] = static_cast<uint32_t>(at), seg_out[k] = done;
        at += 6 + steps, done += 1 + steps;
      }
    if (__shfl_sync(kAll, bad, 0)) return false;
    __syncwarp();
    if (lane < count) {
      const uint8_t* q = p + seg_at[lane];
      float rec = f32_at(q);
      const int base = static_cast<int8_t>(q[4]);
      const uint32_t steps = q[5], o = seg_out[lane];
      seen.see(rec);
      out.put(o, rec);
      for (uint32_t k = 0; k < steps; ++k) out.put(o + 1 + k, rec += diff::step_value(q[6 + k], base));
    }
    __syncwarp();
  }
  if (__shfl_sync(kAll, done, 0) != W) return false;
  if (out.staged)  // the warp writes the line out contiguously
    for (uint32_t w = lane; w < W; w += 32) out.global[w] = finish(a, channel, out.staged[padded(w)]);
  else
    for (uint32_t w = lane; w < W; w += 32) out.global[w] = finish(a, channel, out.global[w]);
  return true;
}

__device__ Checked warp_reduce(Checked c) {
  for (int d = 16; d > 0; d /= 2) {
    c.lo = fminf(c.lo, __shfl_xor_sync(kAll, c.lo, d));
    c.hi = fmaxf(c.hi, __shfl_xor_sync(kAll, c.hi, d));
    c.nonfinite |= __shfl_xor_sync(kAll, c.nonfinite, d);
  }
  return c;
}

// Float min and max through the integer atomics: non-negative floats order as signed integers,
// negative ones in reverse as unsigned.
__device__ void atomic_lo(float* at, float v) {
  if (v >= 0) atomicMin(reinterpret_cast<int*>(at), __float_as_int(v));
  else atomicMax(reinterpret_cast<unsigned*>(at), __float_as_uint(v));
}
__device__ void atomic_hi(float* at, float v) {
  if (v >= 0) atomicMax(reinterpret_cast<int*>(at), __float_as_int(v));
  else atomicMin(reinterpret_cast<unsigned*>(at), __float_as_uint(v));
}

__global__ void __launch_bounds__(kWarps * 32) diff_lines(DiffLaunch a, float* out, DeviceStatus* status) {
  __shared__ uint32_t seg_at[kWarps][32], seg_out[kWarps][32];
  __shared__ Checked block_seen[kWarps];
  extern __shared__ float staged_lines[];  // kWarps lines of padded(line) floats, where lines are short enough
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint64_t l = blockIdx.x * uint64_t{kWarps} + warp;
  Checked seen;
  if (l < a.lines) {
    const uint64_t body = diff::kHeaderBytes + 4ull * a.lines;
    const uint64_t off = u32_at(a.sample + diff::kHeaderBytes + 4 * l);
    const LineOut line{a.line <= kMaxStagedLine ? staged_lines + warp * padded(a.line) : nullptr, out + l * a.line};
    const bool ok = off < a.size - body &&
                    decode_line(a, a.sample + body + off, a.size - body - off, l / a.rows, line, seen, seg_at[warp], seg_out[warp]);
    if (!ok && lane == 0) status->bad = 1;
  }
  if (!a.check) return;
  seen = warp_reduce(seen);
  if (lane == 0) block_seen[warp] = seen;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < kWarps; ++w) {
    seen.lo = fminf(seen.lo, block_seen[w].lo), seen.hi = fmaxf(seen.hi, block_seen[w].hi);
    seen.nonfinite |= block_seen[w].nonfinite;
  }
  if (seen.nonfinite) status->nonfinite = 1;
  if (seen.lo <= seen.hi) atomic_lo(&status->lo, seen.lo), atomic_hi(&status->hi, seen.hi);
}

}  // namespace

void launch_diff(const DiffLaunch& a, float* out, DeviceStatus* status, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((uint64_t{a.lines} + kWarps - 1) / kWarps);
  const size_t staged = a.line <= kMaxStagedLine ? kWarps * padded(a.line) * sizeof(float) : 0;
  diff_lines<<<blocks, kWarps * 32, staged, stream>>>(a, out, status);
}

}  // namespace mrplan
