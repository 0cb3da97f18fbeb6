// Lookup-table codec (preprocessing paper, section V): a CosmoFlow sample holds a few hundred
// unique values and, across its four redshift channels, tens of thousands of unique groups, so
// each voxel is a 1- or 2-byte key into the sample's own group table. Lossless (bit patterns are
// kept, -0 and 0 included). The reader's checks and log1p run on the unique values only.
//
// Bytes, little-endian: "MLUT", version 2, value key width, group key width (0: no group table,
// each voxel keeps one value key per channel), 0, channels (u32), voxels (u64), values (u32),
// groups (u32), the CRC-32 (zlib's) of every byte after the header (u32; version 1 has none); the
// values as float32 bits; the groups, `channels` value keys each; one key per voxel (a group key,
// or `channels` value keys).
#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "exec/codec_lut.hpp"
#include "exec/codec_bytes.hpp"
#include "exec/codec_lut_layout.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace lut {

namespace {
constexpr uint8_t kVersion = 2;

uint32_t crc_of(const uint8_t* bytes, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t at = 0; at < size;) {  // zlib takes 32-bit lengths
    const auto n = static_cast<uInt>(std::min<size_t>(size - at, 1u << 30));
    crc = crc32(crc, bytes + at, n);
    at += n;
  }
  return static_cast<uint32_t>(crc);
}
using codec_bytes::get;
}  // namespace

Header read_header(const uint8_t* b, size_t size, SampleShape shape, const std::string& where) {
  auto bad = [&](const std::string& why) { fail_input(where, "lut", why); };
  if (size < 28 || std::memcmp(b, "MLUT", 4) != 0) bad("not a lookup-table sample (no MLUT header)");
  if (b[4] != 1 && b[4] != kVersion) bad(fmt::format("lookup-table version {}, this mrplan reads 1 and {}", b[4], kVersion));
  Header h{b[5], b[6], get<uint32_t>(b + 8), get<uint32_t>(b + 20), get<uint32_t>(b + 24), get<uint64_t>(b + 12), b[4] == 1 ? 28u : kHeaderBytes};
  if (size < h.header_bytes) bad("not a lookup-table sample (its header is cut short)");
  const auto width_ok = [](uint8_t w) { return w == 1 || w == 2 || w == 4; };
  if (!width_ok(h.value_key) || (h.group_key && !width_ok(h.group_key))) bad("key widths are not 1, 2 or 4 bytes");
  if (h.channels != shape.channels || h.voxels != static_cast<uint64_t>(shape.voxels))
    bad(fmt::format("holds {} voxels x {} channels, the dataset says {} x {}", h.voxels, h.channels, shape.voxels, shape.channels));
  const uint64_t n = h.voxels * h.channels;
  if (h.values == 0 || h.values > n || h.groups > h.voxels || (h.group_key != 0) != (h.groups != 0))
    bad(fmt::format("{} values and {} groups for {} voxels", h.values, h.groups, h.voxels));
  const uint64_t expected = h.header_bytes + uint64_t{h.values} * 4 +
                            (h.group_key ? uint64_t{h.groups} * h.channels * h.value_key + h.voxels * h.group_key : n * h.value_key);
  if (expected != size) bad(fmt::format("{} bytes where its header needs {} (truncated or damaged)", size, expected));
  if (h.header_bytes == kHeaderBytes && crc_of(b + kHeaderBytes, size - kHeaderBytes) != get<uint32_t>(b + 28))
    bad("its CRC-32 differs from the one written at encoding (the sample is damaged)");
  return h;
}

ValueTable value_table(const uint8_t* b, const Header& h, const ValuePipeline& pipe) {
  std::vector<float> values(h.values);
  std::memcpy(values.data(), b + h.header_bytes, values.size() * 4);
  if (pipe.check)
    for (float v : values) pipe.check(v);
  if (pipe.log1p) pipe.log1p(values.data(), values.size());
  if (!pipe.shift) return {std::move(values), 0};
  ValueTable t{std::vector<float>(h.channels * values.size()), values.size()};
  for (size_t c = 0; c < h.channels; ++c)
    for (size_t i = 0; i < values.size(); ++i) t.values[c * t.stride + i] = (values[i] - pipe.shift[c]) * pipe.scale[c];
  return t;
}

}  // namespace lut

namespace {

using lut::Header;
using lut::kHeaderBytes;
using lut::kVersion;
using lut::crc_of;

uint8_t key_width(size_t count) { return count <= 256 ? 1 : count <= 65536 ? 2 : 4; }

void put_key(uint8_t* at, uint8_t width, uint32_t key) { std::memcpy(at, &key, width); }  // little-endian hosts

using codec_bytes::put;

uint32_t index_of(const std::vector<uint32_t>& sorted, uint32_t v) {
  return static_cast<uint32_t>(std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin());
}

class LutCodec final : public SampleCodec {
 public:
  Codec kind() const override { return Codec::lut; }
  bool lossless() const override { return true; }
  std::vector<uint8_t> encode(const float* sample, SampleShape shape) const override;
  void decode(const uint8_t* bytes, size_t size, SampleShape shape, const ValuePipeline& pipe, float* out,
              const std::string& where) const override;
};

std::vector<uint8_t> LutCodec::encode(const float* sample, SampleShape shape) const {
  const size_t V = static_cast<size_t>(shape.voxels), C = static_cast<size_t>(shape.channels), n = V * C;
  std::vector<uint32_t> bits(n);
  std::memcpy(bits.data(), sample, n * sizeof(float));
  std::vector<uint32_t> values = bits;
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::vector<uint32_t> index(n);
  for (size_t i = 0; i < n; ++i) index[i] = index_of(values, bits[i]);
  Header h{key_width(values.size()), 0, static_cast<uint32_t>(C), static_cast<uint32_t>(values.size()), 0, V};
  // groups of the channels' value keys, packed 16 bits a channel (paper Fig. 5c: four redshifts)
  std::vector<uint64_t> packed, groups;
  if (C <= 4 && values.size() <= 65536) {
    packed.resize(V);
    for (size_t v = 0; v < V; ++v)
      for (size_t c = 0; c < C; ++c) packed[v] |= uint64_t{index[v * C + c]} << (16 * c);
    groups = packed;
    std::sort(groups.begin(), groups.end());
    groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
    const size_t grouped = groups.size() * C * h.value_key + V * key_width(groups.size());
    if (groups.size() <= 65536 && grouped < n * h.value_key) h.group_key = key_width(groups.size()), h.groups = static_cast<uint32_t>(groups.size());
  }
  std::vector<uint8_t> out;
  out.insert(out.end(), {'M', 'L', 'U', 'T', kVersion, h.value_key, h.group_key, 0});
  put(out, h.channels), put(out, h.voxels), put(out, h.values), put(out, h.groups), put(out, uint32_t{0});  // the CRC, below
  for (uint32_t b : values) put(out, b);
  const size_t at = out.size();
  if (h.group_key) {
    out.resize(at + groups.size() * C * h.value_key + V * h.group_key);
    uint8_t* p = out.data() + at;
    for (uint64_t g : groups)
      for (size_t c = 0; c < C; ++c, p += h.value_key) put_key(p, h.value_key, static_cast<uint32_t>((g >> (16 * c)) & 0xffff));
    for (size_t v = 0; v < V; ++v, p += h.group_key) {
      const auto it = std::lower_bound(groups.begin(), groups.end(), packed[v]);
      put_key(p, h.group_key, static_cast<uint32_t>(it - groups.begin()));
    }
  } else {
    out.resize(at + n * h.value_key);
    for (size_t i = 0; i < n; ++i) put_key(out.data() + at + i * h.value_key, h.value_key, index[i]);
  }
  const uint32_t crc = crc_of(out.data() + kHeaderBytes, out.size() - kHeaderBytes);
  std::memcpy(out.data() + 28, &crc, 4);  // little-endian hosts, as put()
  return out;
}

template <class K>
uint32_t key_at(const uint8_t* p, size_t i) {
  K k;
  std::memcpy(&k, p + i * sizeof(K), sizeof(K));
  return k;
}

uint32_t key_at(const uint8_t* p, size_t i, uint8_t width) {
  return width == 1 ? key_at<uint8_t>(p, i) : width == 2 ? key_at<uint16_t>(p, i) : key_at<uint32_t>(p, i);
}

void LutCodec::decode(const uint8_t* b, size_t size, SampleShape shape, const ValuePipeline& pipe, float* out,
                      const std::string& where) const {
  const Header h = lut::read_header(b, size, shape, where);
  const size_t V = h.voxels, C = h.channels;
  const auto table = lut::value_table(b, h, pipe);
  const auto value = [&](size_t c, uint32_t key) {
    if (key >= h.values) fail_input(where, "lut", fmt::format("value key {} beyond the table's {} values", key, h.values));
    return table.values[c * table.stride + key];
  };
  const uint8_t* p = lut::keys_of(b, h);
  if (!h.group_key) {
    for (size_t v = 0; v < V; ++v)
      for (size_t c = 0; c < C; ++c) out[c * V + v] = value(c, key_at(p, v * C + c, h.value_key));
    return;
  }
  std::vector<float> groups(size_t{h.groups} * C);
  for (size_t g = 0; g < h.groups; ++g)
    for (size_t c = 0; c < C; ++c) groups[g * C + c] = value(c, key_at(p, g * C + c, h.value_key));
  p += groups.size() * h.value_key;
  for (size_t v = 0; v < V; ++v) {
    const uint32_t g = key_at(p, v, h.group_key);
    if (g >= h.groups) fail_input(where, "lut", fmt::format("voxel {}: group key {} beyond the table's {} groups", v, g, h.groups));
    for (size_t c = 0; c < C; ++c) out[c * V + v] = groups[g * C + c];
  }
}

}  // namespace

std::unique_ptr<SampleCodec> make_lut_codec() { return std::make_unique<LutCodec>(); }

}  // namespace mrplan
