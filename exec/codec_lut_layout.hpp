#pragma once
// The lookup-table codec's bytes (layout in exec/codec_lut.cpp), read alike by the host decoder and
// the device decoder (exec/device_decoder.cu).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "exec/sample_codec.hpp"

namespace mrplan::lut {

inline constexpr size_t kHeaderBytes = 32;  // version 2: a CRC-32 of the bytes after the header (version 1: 28, none)

struct Header {
  uint8_t value_key = 0, group_key = 0;  // key widths in bytes; group_key 0: no group table
  uint32_t channels = 0, values = 0, groups = 0;
  uint64_t voxels = 0;
  size_t header_bytes = kHeaderBytes;
};

// The header of a sample of `size` bytes, checked against the dataset's shape, the byte count it
// implies and (version 2) the CRC-32 of the rest: a key flipped would decode to another valid value
// and train silently on it (issue 44). InputError naming `where`.
Header read_header(const uint8_t* bytes, size_t size, SampleShape shape, const std::string& where);

// Each key's value after the reader's checks and preprocessing; min-max differs per channel, so
// channel c's table starts at c * stride (stride 0: one table serves every channel).
struct ValueTable {
  std::vector<float> values;
  size_t stride = 0;
};
ValueTable value_table(const uint8_t* bytes, const Header& h, const ValuePipeline& pipe);

// Where the keys start: the group table's value keys (if any), then one key per voxel.
inline const uint8_t* keys_of(const uint8_t* bytes, const Header& h) { return bytes + h.header_bytes + size_t{h.values} * 4; }

}  // namespace mrplan::lut
