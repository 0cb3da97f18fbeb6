// The device decoders against the host ones: the same bits, the same checks and the same messages.
// Each test but the first is skipped where no GPU is (they run on a lent one: docs/codecs.md).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "exec/climate_fields.hpp"
#include "exec/codec_diff.hpp"
#include "exec/device_decoder.hpp"
#include "model/errors.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

#define REQUIRE_GPU()                                                                      \
  do {                                                                                     \
    if (const auto why = device_decoding_unavailable(); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

std::vector<float> on_host(Codec c, const std::vector<uint8_t>& bytes, SampleShape s, const ValuePipeline& pipe) {
  std::vector<float> out(static_cast<size_t>(s.voxels * s.channels));
  make_codec(c)->decode(bytes.data(), bytes.size(), s, pipe, out.data(), "sample");
  return out;
}

std::vector<float> on_device(DeviceDecoder& d, const std::vector<uint8_t>& bytes, SampleShape s, const ValuePipeline& pipe) {
  DeviceFloats out(static_cast<size_t>(s.voxels * s.channels));
  d.decode(bytes.data(), bytes.size(), s, pipe, out.data(), "sample");
  return out.to_host();
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Counts as CosmoFlow's are: `levels` values, channels coupled (paper Fig. 5c), channel-last;
// `jitter`: one value in eight one count up, which multiplies the groups.
std::vector<float> counts(int64_t voxels, int channels, int levels, uint64_t seed, bool jitter = false) {
  std::mt19937_64 rng(seed);
  std::vector<float> x(static_cast<size_t>(voxels * channels));
  for (int64_t v = 0; v < voxels; ++v) {
    const auto level = static_cast<int>(rng() % static_cast<uint64_t>(levels));
    for (int c = 0; c < channels; ++c)
      x[static_cast<size_t>(v * channels + c)] = static_cast<float>(level * 3 + c + (jitter && rng() % 8 == 0));
  }
  return x;
}

// The loader's CosmoFlow pipeline: counts are finite, >= 0, then log1p.
ValuePipeline counts_pipeline() {
  ValuePipeline p;
  p.check = [](float v) {
    if (!std::isfinite(v) || v < 0) fail_input("f.h5", "full", fmt::format("row 0 holds the count {}", v));
  };
  p.log1p = [](float* v, size_t n) {
    for (size_t i = 0; i < n; ++i) v[i] = std::log1p(v[i]);
  };
  return p;
}

}  // namespace

TEST(DeviceDecoder, SaysWhyWhereItCannotRun) {
  const auto why = device_decoding_unavailable();
  if (why.empty()) {
    EXPECT_NO_THROW(DeviceDecoder{Codec::lut});
  } else {
    try {  // not an input error: the machine lacks what the decoder needs
      DeviceDecoder d(Codec::lut);
      ADD_FAILURE() << "a decoder without a GPU";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("device decoder: " + why), std::string::npos);
    }
  }
  EXPECT_NE(error_of([] { DeviceDecoder d(Codec::deflate); }).find("is HDF5 storage, read as a plain dataset"), std::string::npos);
}

TEST(DeviceDecoder, LookupTablesDecodeBitForBitAsOnTheHost) {
  REQUIRE_GPU();
  DeviceDecoder d(Codec::lut);
  const auto codec = make_codec(Codec::lut);
  const float shift[5] = {1, 2, 3, 4, 5}, scale[5] = {0.5f, 0.25f, 2, 1, 3};
  ValuePipeline min_max;
  min_max.shift = shift, min_max.scale = scale;
  struct Case {
    int64_t voxels;
    int channels, levels;
    bool jitter;
    int value_key, group_key;  // the widths the case gives (0: no groups)
  };
  for (const Case k : {Case{4099, 4, 40, false, 1, 1}, Case{70001, 4, 3000, true, 2, 2}, Case{3001, 5, 2000, false, 2, 0},
                       Case{20011, 4, 0, false, 4, 0}}) {
    auto x = counts(k.voxels, k.channels, std::max(k.levels, 1), static_cast<uint64_t>(k.voxels), k.jitter);
    if (k.levels == 0)
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f;  // every value apart: over 65536 of them
    const SampleShape s{k.voxels, k.channels};
    const auto bytes = codec->encode(x.data(), s);
    ASSERT_EQ(bytes[5], k.value_key);
    ASSERT_EQ(bytes[6], k.group_key);
    for (const auto& pipe : {ValuePipeline{}, counts_pipeline(), min_max})
      EXPECT_TRUE(same_bits(on_device(d, bytes, s, pipe), on_host(Codec::lut, bytes, s, pipe))) << k.voxels << " voxels";
    uint32_t values = 0;
    std::memcpy(&values, bytes.data() + 20, 4);
    EXPECT_LE(d.last().copied_bytes, bytes.size() - 4 * values + 4 * values * static_cast<size_t>(k.channels) + 3);  // keys and the table
  }
}

TEST(DeviceDecoder, DifferentialLinesDecodeBitForBitAsOnTheHost) {
  REQUIRE_GPU();
  DeviceDecoder d(Codec::diff);
  // 6912 lines of 576 (many blocks; staged in shared memory), and lines of 2048 (written straight)
  for (const auto& [H, W] : {std::pair{384, 576}, std::pair{24, 2048}}) {
    ClimateFieldGenerator gen(H, W);
    std::vector<float> x(static_cast<size_t>(H * W * kClimateChannels));
    std::vector<int16_t> labels(static_cast<size_t>(H * W));
    gen.sample(7, x.data(), labels.data());
    for (int w = 0; w < W; ++w) x[static_cast<size_t>((5 * W + w) * kClimateChannels + 3)] = 2.5f;  // a constant line
    for (int w = 0; w < W; ++w)  // an abrupt line, kept raw, with denormals
      x[static_cast<size_t>((9 * W + w) * kClimateChannels + 4)] = std::ldexp(static_cast<float>(w % 7 + 1), (w * 37) % 200 - 140);
    const SampleShape s{int64_t{H} * W, kClimateChannels, W};
    const auto bytes = make_codec(Codec::diff)->encode(x.data(), s);
    std::vector<float> shift(kClimateChannels), scale(kClimateChannels);
    for (int c = 0; c < kClimateChannels; ++c) shift[static_cast<size_t>(c)] = -1.f - c, scale[static_cast<size_t>(c)] = 1.f / (3.f + c);
    ValuePipeline loader;  // DeepCAM's: checked, min-max, FP16
    loader.check = [](float v) {
      if (!std::isfinite(v)) fail_input("c.h5", "climate/data", "row 0 holds NaN or infinity");
    };
    loader.shift = shift.data(), loader.scale = scale.data(), loader.half = true;
    for (const auto& pipe : {ValuePipeline{}, loader})
      EXPECT_TRUE(same_bits(on_device(d, bytes, s, pipe), on_host(Codec::diff, bytes, s, pipe))) << H << " x " << W;
    EXPECT_EQ(d.last().copied_bytes, (bytes.size() + 3) / 4 * 4 + 2 * kClimateChannels * sizeof(float));
  }
}

TEST(DeviceDecoder, DamagedSamplesAndRefusedValuesGiveTheHostDecodersMessages) {
  REQUIRE_GPU();
  const SampleShape s{512, 4};
  const auto x = counts(s.voxels, 4, 50, 4);
  const auto good = make_codec(Codec::lut)->encode(x.data(), s);
  DeviceDecoder lut(Codec::lut);
  DeviceFloats out(static_cast<size_t>(s.voxels * s.channels));
  const auto device_error = [&](DeviceDecoder& d, const std::vector<uint8_t>& b, SampleShape shape, const ValuePipeline& pipe) {
    return error_of([&] { d.decode(b.data(), b.size(), shape, pipe, out.data(), "sample"); });
  };
  auto key = good;
  key.back() = 0xff;  // a group key beyond the table
  EXPECT_NE(device_error(lut, key, s, {}).find("sample: lut: voxel 511: group key 255 beyond the table's"), std::string::npos);
  auto cut = good;
  cut.pop_back();
  EXPECT_NE(device_error(lut, cut, s, {}).find("truncated or damaged"), std::string::npos);
  ValuePipeline big = counts_pipeline();
  big.check = [](float v) {
    if (v > 100) fail_input("f.h5", "full", "row 0 holds a big value");
  };
  EXPECT_NE(device_error(lut, good, s, big).find("f.h5: full: row 0 holds a big value"), std::string::npos);

  const SampleShape line{64, 1, 64};
  std::vector<float> smooth(64), rough(64);
  for (int i = 0; i < 64; ++i)
    smooth[static_cast<size_t>(i)] = 280.f + std::sin(i * 0.1f),
    rough[static_cast<size_t>(i)] = std::ldexp(1.f + i % 5, (i * 13) % 60 - 30);
  rough[3] = std::numeric_limits<float>::quiet_NaN();
  DeviceDecoder diff(Codec::diff);
  const auto codec = make_codec(Codec::diff);
  ValuePipeline finite;
  finite.check = [](float v) {
    if (!std::isfinite(v)) fail_input("c.h5", "climate/data", "row 0 holds NaN or infinity");
  };
  EXPECT_NE(device_error(diff, codec->encode(rough.data(), line), line, finite).find("c.h5: climate/data: row 0 holds NaN"),
            std::string::npos);
  auto steps = codec->encode(smooth.data(), line);
  ASSERT_EQ(steps[28 + 4], 2);  // the only line is steps
  auto mode = steps;
  mode[28 + 4] = 9;
  EXPECT_NE(device_error(diff, mode, line, {}).find("line mode 9 is not raw, constant or steps"), std::string::npos);
  auto short_line = steps;
  short_line.resize(short_line.size() - 3);
  EXPECT_NE(device_error(diff, short_line, line, {}).find("truncated or damaged"), std::string::npos);
  auto count = steps;
  count[28 + 4 + 1 + 2 + 5] = 200;  // the first segment claims more steps than the line holds
  EXPECT_NE(device_error(diff, count, line, {}), "<no error>");
  EXPECT_EQ(device_error(diff, count, line, {}), error_of([&] { on_host(Codec::diff, count, line, {}); }));
}

// Damaged bytes anywhere: the device decoder gives the host decoder's values, or its message;
// under compute-sanitizer no kernel reads past the sample.
TEST(DeviceDecoder, RandomDamageEndsAsOnTheHost) {
  REQUIRE_GPU();
  std::mt19937_64 rng(11);
  const SampleShape cube{4096, 4};
  const auto lut_bytes = make_codec(Codec::lut)->encode(counts(cube.voxels, 4, 300, 5, true).data(), cube);
  const SampleShape lines{16 * 96, 2, 96};
  std::vector<float> field(static_cast<size_t>(lines.voxels * lines.channels));
  for (size_t i = 0; i < field.size(); ++i)
    field[i] = 280.f + 5.f * std::sin(static_cast<float>(i % 192) * 0.05f) + (i % 997 == 0 ? 50.f : 0.f);
  const auto diff_bytes = make_codec(Codec::diff)->encode(field.data(), lines);
  const float shift[2] = {270, 260}, scale[2] = {0.05f, 0.02f};
  ValuePipeline deepcam;  // checked, min-max, FP16
  deepcam.check = [](float v) {
    if (!std::isfinite(v)) fail_input("c.h5", "climate/data", "row 0 holds NaN or infinity");
  };
  deepcam.shift = shift, deepcam.scale = scale, deepcam.half = true;
  for (const auto& [c, good, s, pipe] :
       {std::tuple{Codec::lut, lut_bytes, cube, counts_pipeline()}, std::tuple{Codec::diff, diff_bytes, lines, deepcam}}) {
    DeviceDecoder d(c);
    DeviceFloats out(static_cast<size_t>(s.voxels * s.channels));
    int refused = 0;
    for (int trial = 0; trial < 300; ++trial) {
      auto bytes = good;
      for (int k = 0; k < 1 + trial % 3; ++k) bytes[rng() % bytes.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
      if (trial % 10 == 0) bytes.resize(rng() % bytes.size());
      const std::string host = error_of([&] { on_host(c, bytes, s, pipe); });
      const std::string device = error_of([&] { d.decode(bytes.data(), bytes.size(), s, pipe, out.data(), "sample"); });
      EXPECT_EQ(device, host) << codec_name(c) << " trial " << trial;
      if (host == "<no error>") {
        EXPECT_TRUE(same_bits(out.to_host(), on_host(c, bytes, s, pipe))) << codec_name(c) << " trial " << trial;
      }
      refused += host != "<no error>";
    }
    EXPECT_GT(refused, 30) << codec_name(c);  // the damage reaches the checks, not only the values
  }
}
