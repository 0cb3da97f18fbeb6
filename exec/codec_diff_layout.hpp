#pragma once
// The differential codec's bytes (layout in exec/codec_diff.cpp), read alike by the host decoder
// and the device decoder (exec/device_decoder.cu): the header and the value of a step.
#include <math.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "exec/sample_codec.hpp"

#ifdef __CUDACC__
#define MRPLAN_HOST_DEVICE __host__ __device__
#else
#define MRPLAN_HOST_DEVICE
#endif

namespace mrplan::diff {

inline constexpr size_t kHeaderBytes = 28;
enum LineMode : uint8_t { raw_line = 0, constant_line = 1, steps_line = 2 };

struct Header {
  uint32_t channels = 0, line = 0, lines = 0;  // line: values a line holds
  uint64_t voxels = 0;
};

// The header of a sample of `size` bytes, checked against the dataset's shape, with room for the
// line offsets after it; InputError naming `where`.
Header read_header(const uint8_t* bytes, size_t size, SampleShape shape, const std::string& where);

// A step: sign, exponent k above the segment's base, mantissa m: (1 + m/16) 2^(base + k); the codes
// 0x00 and 0x80 are zero.
MRPLAN_HOST_DEVICE inline float step_value(uint8_t code, int base) {
  if ((code & 0x7f) == 0) return 0.f;
  const int e = base + ((code >> 4) & 7);
  if (e > -127 && e < 128) {  // a normal float: its bits directly (the decoders' inner loop)
    const uint32_t u = uint32_t{code & 0x80u} << 24 | static_cast<uint32_t>(e + 127) << 23 | uint32_t{code & 15u} << 19;
    float v;
    memcpy(&v, &u, 4);
    return v;
  }
  const float v = ldexpf(1.f + static_cast<float>(code & 15) / 16.f, e);
  return code & 0x80 ? -v : v;
}

}  // namespace mrplan::diff
