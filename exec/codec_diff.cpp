// Differential codec (preprocessing paper, section IV, Fig. 4): DeepCAM's channels change smoothly
// along x, so each line along the last spatial axis becomes segments of a pivot value and 8-bit
// steps (sign, 3-bit exponent above the segment's base, 4-bit mantissa). Lossy: the encoder follows
// the decoder's FP32 sums (errors do not add up along a line); a step below the segment's base
// rounds to zero. A line of one value is stored once; a line the steps would not shrink stays raw.
//
// Bytes, little-endian: "MDIF", version 1, 0, 0, 0, channels (u32), voxels (u64), line length
// (u32), lines (u32); each line's byte offset (u32, from the end of the offsets); then each line:
// mode (0 raw: the floats; 1 constant: one float; 2 steps: segments (u16), then per segment its
// pivot (f32), base exponent (i8), steps (u8) and the steps).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "exec/codec_diff.hpp"
#include "exec/codec_bytes.hpp"
#include "exec/codec_diff_layout.hpp"
#include "model/errors.hpp"

namespace mrplan {

float round_to_half(float x) {
  const float a = std::fabs(x);
  if (a >= 6.103515625e-05f && a < 65504.f) {  // FP16's normal range: keep 10 mantissa bits, ties to even
    uint32_t u;
    std::memcpy(&u, &x, 4);
    u += 0xfff + ((u >> 13) & 1);
    u &= ~0x1fffu;
    std::memcpy(&x, &u, 4);
    return x;
  }
  if (!std::isfinite(x) || a == 0) return x;
  if (a >= 65520.f) return std::copysign(INFINITY, x);  // rounds beyond FP16's largest, 65504
  int e;
  std::frexp(a, &e);
  const float step = std::ldexp(1.f, std::max(e - 11, -24));  // 11 significant bits; subnormals below 2^-14
  return std::copysign(std::nearbyint(a / step) * step, x);
}

namespace {
constexpr uint8_t kVersion = 1;
using codec_bytes::get;
using codec_bytes::put;
}  // namespace

namespace diff {

Header read_header(const uint8_t* b, size_t size, SampleShape s, const std::string& where) {
  if (size < kHeaderBytes || std::memcmp(b, "MDIF", 4) != 0) fail_input(where, "diff", "not a differential sample (no MDIF header)");
  if (b[4] != kVersion) fail_input(where, "diff", fmt::format("differential version {}, this mrplan reads {}", b[4], kVersion));
  const Header h{get<uint32_t>(b + 8), get<uint32_t>(b + 20), get<uint32_t>(b + 24), get<uint64_t>(b + 12)};
  const uint64_t C = h.channels, V = h.voxels, W = h.line;
  if (C != static_cast<uint64_t>(s.channels) || V != static_cast<uint64_t>(s.voxels) || W != static_cast<uint64_t>(s.line) || W == 0 ||
      V % W || h.lines != C * (V / W))
    fail_input(where, "diff", fmt::format("holds {} positions x {} channels in lines of {}, the dataset says {} x {} in lines of {}", V, C, W,
                                          s.voxels, s.channels, s.line));
  if (size < kHeaderBytes + 4ull * h.lines) fail_input(where, "diff", "the line offsets run past the sample's bytes (truncated)");
  return h;
}

}  // namespace diff

namespace {

constexpr int kSegment = 64;  // values a segment covers at most: its base exponent stays local
using diff::constant_line;
using diff::kHeaderBytes;
using diff::raw_line;
using diff::step_value;
using diff::steps_line;

uint8_t step_code(float d, int base) {
  const uint8_t sign = d < 0 ? 0x80 : 0;
  const float a = std::fabs(d);
  if (a < std::ldexp(1.f, base) * 0.53f) return 0;  // nearer zero than the smallest step
  int e;
  const float f = std::frexp(a, &e);  // a = 2f 2^(e-1), 2f in [1, 2)
  int k = e - 1 - base, m = static_cast<int>(std::lround((2 * f - 1) * 16));
  if (k < 0) k = 0, m = 1;
  if (m == 16) m = 0, ++k;
  if (k > 7) k = 7, m = 15;
  if (k == 0 && m == 0) m = 1;  // 0x00 means zero
  return static_cast<uint8_t>(sign | k << 4 | m);
}

int exponent_of(float a) {
  int e;
  std::frexp(a, &e);
  return e - 1;
}

// One line as steps; false where a base exponent leaves int8 (the line stays raw).
bool encode_steps(const float* x, size_t n, std::vector<uint8_t>& out) {
  std::vector<uint8_t> body;
  uint16_t segments = 0;
  for (size_t i = 0; i < n;) {
    const size_t end = std::min(n, i + kSegment);
    float biggest = 0;
    for (size_t j = i + 1; j < end; ++j) biggest = std::max(biggest, std::fabs(x[j] - x[j - 1]));
    const int base = biggest > 0 ? exponent_of(biggest) - 7 : 0;
    if (base < -128 || base > 127 || segments == 65535) return false;
    put(body, x[i]), put(body, static_cast<int8_t>(base));
    const size_t count_at = body.size();
    body.push_back(0);
    float rec = x[i];
    size_t j = i + 1;
    for (; j < end; ++j) {
      const float d = x[j] - rec;
      if (std::fabs(d) > std::ldexp(31.f / 16.f, base + 7)) break;  // a jump beyond the top step: a new pivot
      const uint8_t code = step_code(d, base);
      rec += step_value(code, base);
      body.push_back(code);
    }
    body[count_at] = static_cast<uint8_t>(j - i - 1);
    ++segments;
    i = j;
  }
  put(out, segments);
  out.insert(out.end(), body.begin(), body.end());
  return true;
}

void encode_line(const float* x, size_t n, std::vector<uint8_t>& out) {
  const bool finite = std::all_of(x, x + n, [](float v) { return std::isfinite(v); });
  if (finite && std::all_of(x, x + n, [&](float v) { return std::memcmp(&v, x, 4) == 0; })) {
    out.push_back(constant_line), put(out, x[0]);
    return;
  }
  const size_t at = out.size();
  out.push_back(steps_line);
  if (finite && encode_steps(x, n, out) && out.size() - at < 1 + 4 * n) return;
  out.resize(at);
  out.push_back(raw_line);
  for (size_t i = 0; i < n; ++i) put(out, x[i]);
}

class DiffCodec final : public SampleCodec {
 public:
  Codec kind() const override { return Codec::diff; }
  bool lossless() const override { return false; }
  std::vector<uint8_t> encode(const float* sample, SampleShape shape) const override;
  void decode(const uint8_t* bytes, size_t size, SampleShape shape, const ValuePipeline& pipe, float* out,
              const std::string& where) const override;
};

std::vector<uint8_t> DiffCodec::encode(const float* sample, SampleShape s) const {
  const size_t C = static_cast<size_t>(s.channels), V = static_cast<size_t>(s.voxels), W = static_cast<size_t>(s.line);
  if (W == 0 || V % W) fail_input("", "diff", fmt::format("a line of {} does not divide {} positions", W, V));
  const size_t lines = C * (V / W);
  std::vector<uint8_t> out{'M', 'D', 'I', 'F', kVersion, 0, 0, 0};
  put(out, static_cast<uint32_t>(C)), put(out, static_cast<uint64_t>(V)), put(out, static_cast<uint32_t>(W)), put(out, static_cast<uint32_t>(lines));
  std::vector<uint8_t> body;
  std::vector<uint32_t> offsets;
  std::vector<float> line(W);
  for (size_t l = 0; l < lines; ++l) {  // channel-first: line l is channel l / rows, row l % rows
    const size_t c = l / (V / W), row = l % (V / W);
    for (size_t w = 0; w < W; ++w) line[w] = sample[(row * W + w) * C + c];
    offsets.push_back(static_cast<uint32_t>(body.size()));
    encode_line(line.data(), W, body);
  }
  for (uint32_t o : offsets) put(out, o);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

// Decodes one line into `out` (FP32 sums), checking every read against `end`.
void decode_line(const uint8_t* p, const uint8_t* end, size_t n, const ValuePipeline& pipe, float* out, const std::string& where) {
  auto need = [&](size_t bytes) {
    if (static_cast<size_t>(end - p) < bytes) fail_input(where, "diff", "a line runs past the sample's bytes (truncated or damaged)");
  };
  need(1);
  const uint8_t mode = *p++;
  if (mode == constant_line) {
    need(4);
    const float v = get<float>(p);
    if (pipe.check) pipe.check(v);
    std::fill(out, out + n, v);
  } else if (mode == raw_line) {
    need(4 * n);
    std::memcpy(out, p, 4 * n);
    if (pipe.check) std::for_each(out, out + n, pipe.check);
  } else if (mode == steps_line) {
    need(2);
    const uint16_t segments = get<uint16_t>(p);
    p += 2;
    size_t i = 0;
    for (uint16_t s = 0; s < segments; ++s) {
      need(6);
      float rec = get<float>(p);
      const int base = get<int8_t>(p + 4);
      const size_t steps = p[5];
      p += 6;
      need(steps);
      if (i + 1 + steps > n) fail_input(where, "diff", fmt::format("a line holds more than its {} values", n));
      if (pipe.check) pipe.check(rec);
      out[i++] = rec;
      for (size_t k = 0; k < steps; ++k) out[i++] = rec += step_value(*p++, base);
    }
    if (i != n) fail_input(where, "diff", fmt::format("a line holds {} of its {} values", i, n));
  } else {
    fail_input(where, "diff", fmt::format("line mode {} is not raw, constant or steps", mode));
  }
}

void DiffCodec::decode(const uint8_t* b, size_t size, SampleShape s, const ValuePipeline& pipe, float* out,
                       const std::string& where) const {
  const diff::Header h = diff::read_header(b, size, s, where);
  const uint32_t W = h.line, lines = h.lines;
  const uint64_t V = h.voxels, C = h.channels;
  const uint8_t* body = b + kHeaderBytes + 4ull * lines;
  const uint8_t* end = b + size;
  const uint64_t rows = V / W;
  for (uint64_t l = 0; l < lines; ++l) {
    const uint32_t off = get<uint32_t>(b + kHeaderBytes + 4 * l);
    if (off >= static_cast<uint64_t>(end - body)) fail_input(where, "diff", fmt::format("line {} starts past the sample's bytes", l));
    float* line = out + l * W;  // channel-first: channel l / rows, row l % rows
    decode_line(body + off, end, W, pipe, line, where);
    if (pipe.shift)
      for (uint32_t w = 0; w < W; ++w) line[w] = (line[w] - pipe.shift[l / rows]) * pipe.scale[l / rows];
  }
  const size_t n = static_cast<size_t>(V * C);
  if (pipe.log1p) pipe.log1p(out, n);
  if (pipe.half) std::transform(out, out + n, out, round_to_half);
}

}  // namespace

std::unique_ptr<SampleCodec> make_diff_codec() { return std::make_unique<DiffCodec>(); }

}  // namespace mrplan
