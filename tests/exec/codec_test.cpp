// Encoded samples: the lookup-table codec is lossless, refuses damaged bytes, and the loader reads
// an encoded or deflated copy of a dataset as exactly the raw one (bit for bit, log1p included).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>
#include <random>

#include "exec/codec_diff.hpp"
#include "exec/codec_lut.hpp"
#include "exec/codec_lut_layout.hpp"
#include "exec/cosmo_fields.hpp"
#include "exec/datagen.hpp"
#include "exec/encode_dataset.hpp"
#include "exec/hdf5_file.hpp"
#include "exec/loader.hpp"
#include "exec/run.hpp"
#include "model/errors.hpp"
#include "model/plan_yaml.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/scratch_data.hpp"
#include "tests/support/tiny_plan.hpp"

using namespace mrplan;
using mrplan::testing::error_of;
namespace fs = std::filesystem;

namespace {

// V voxels x 4 channels of counts drawn from `levels` values, channels coupled (as CosmoFlow's
// redshifts are: paper Fig. 5c): channel c is the first channel's level plus c.
std::vector<float> coupled_counts(int64_t voxels, int levels, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> x(static_cast<size_t>(voxels * 4));
  for (int64_t v = 0; v < voxels; ++v) {
    const int level = static_cast<int>(rng() % static_cast<uint64_t>(levels));
    for (int c = 0; c < 4; ++c) x[static_cast<size_t>(v * 4 + c)] = static_cast<float>(level * 3 + c);
  }
  return x;
}

std::vector<float> channel_first(const std::vector<float>& x, int64_t voxels, int64_t channels) {
  std::vector<float> out(x.size());
  for (int64_t v = 0; v < voxels; ++v)
    for (int64_t c = 0; c < channels; ++c) out[static_cast<size_t>(c * voxels + v)] = x[static_cast<size_t>(v * channels + c)];
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<float> decoded(const std::vector<uint8_t>& bytes, SampleShape s, const ValuePipeline& pipe = {}) {
  std::vector<float> out(static_cast<size_t>(s.voxels * s.channels));
  make_lut_codec()->decode(bytes.data(), bytes.size(), s, pipe, out.data(), "sample");
  return out;
}

}  // namespace

TEST(LutCodec, CoupledChannelsBecomeOneKeyPerVoxelAndComeBackBitForBit) {
  const SampleShape s{4096, 4};
  auto x = coupled_counts(s.voxels, 200, 1);
  x[5] = -0.0f;  // kept apart from +0
  const auto bytes = make_lut_codec()->encode(x.data(), s);
  EXPECT_LT(bytes.size(), static_cast<size_t>(s.voxels) * 2 + 4096);  // one 1-byte key per voxel, small tables
  EXPECT_EQ(bytes[6], 1);                                              // group keys of one byte: at most 200 groups
  const auto back = decoded(bytes, s);
  EXPECT_TRUE(same_bits(back, channel_first(x, s.voxels, s.channels)));
  EXPECT_TRUE(std::signbit(back[static_cast<size_t>(1 * s.voxels + 1)]));
}

TEST(LutCodec, RealBinnedSyntheticSamplesHaveThePapersTables) {
  // preprocessing paper V, Fig. 5: a few hundred unique counts, tens of thousands of four-channel
  // groups (16-bit group keys), ~4x against the int16 counts. 64^3 here (128^3 in docs/codecs.md).
  const int S = 64;
  const SampleShape s{int64_t{S} * S * S, 4, S};
  std::vector<int16_t> counts(static_cast<size_t>(s.voxels * 4));
  const float unit[4] = {0.f, 0.f, 0.f, 0.f};
  CosmoFieldGenerator(S, CosmoCounts::real).sample(cosmo_params_from_unit(unit), 3, counts.data());
  const std::vector<float> x(counts.begin(), counts.end());
  const auto bytes = make_lut_codec()->encode(x.data(), s);
  const auto h = lut::read_header(bytes.data(), bytes.size(), s, "sample");
  EXPECT_GT(h.values, 100u);
  EXPECT_LT(h.values, 1000u);
  EXPECT_EQ(h.group_key, 2);  // groups fit 16-bit keys, as the paper's do
  EXPECT_GT(h.groups, 2000u);
  EXPECT_GT(static_cast<double>(s.voxels * 4 * 2) / static_cast<double>(bytes.size()), 3.0);
  // the mini binning's counts are too spread for a group table to pay
  CosmoFieldGenerator(S, CosmoCounts::mini).sample(cosmo_params_from_unit(unit), 3, counts.data());
  const std::vector<float> m(counts.begin(), counts.end());
  const auto mini = make_lut_codec()->encode(m.data(), s);
  EXPECT_LT(static_cast<double>(s.voxels * 4 * 2) / static_cast<double>(mini.size()), 1.5);
}

TEST(LutCodec, UncoupledChannelsKeepAValueKeyEachAndStayLossless) {
  const SampleShape s{3000, 3};
  std::mt19937 rng(2);
  std::vector<float> x(static_cast<size_t>(s.voxels * s.channels));
  for (auto& v : x) v = static_cast<float>(rng() % 1000) * 0.25f;  // 1000 values, ~all groups distinct
  const auto bytes = make_lut_codec()->encode(x.data(), s);
  EXPECT_EQ(bytes[6], 0);  // no group table
  EXPECT_EQ(bytes[5], 2);  // two-byte value keys
  EXPECT_TRUE(same_bits(decoded(bytes, s), channel_first(x, s.voxels, s.channels)));
}

TEST(LutCodec, PreprocessingRunsOnTheUniqueValuesOnly) {
  const SampleShape s{1000, 4};
  const auto x = coupled_counts(s.voxels, 10, 3);
  const auto bytes = make_lut_codec()->encode(x.data(), s);
  size_t transformed = 0;
  ValuePipeline pipe;
  pipe.log1p = [&](float* v, size_t n) {
    transformed += n;
    for (size_t i = 0; i < n; ++i) v[i] = std::log1p(v[i]);
  };
  const auto out = decoded(bytes, s, pipe);
  EXPECT_EQ(transformed, 31u);  // levels 0..9 times 3 plus 0..3: the 31 values 0..30
  for (int64_t v = 0; v < s.voxels; ++v) EXPECT_EQ(out[static_cast<size_t>(2 * s.voxels + v)], std::log1p(x[static_cast<size_t>(v * 4 + 2)]));
  const float shift[4] = {1, 2, 3, 4}, scale[4] = {0.5f, 0.25f, 2, 1};
  ValuePipeline minmax;
  minmax.shift = shift, minmax.scale = scale;
  const auto mm = decoded(bytes, s, minmax);
  for (int64_t v = 0; v < s.voxels; ++v)
    for (int c = 0; c < 4; ++c)
      EXPECT_EQ(mm[static_cast<size_t>(c * s.voxels + v)], (x[static_cast<size_t>(v * 4 + c)] - shift[c]) * scale[c]);
  ValuePipeline refuse;
  refuse.check = [](float v) {
    if (v > 20) fail_input("f.h5", "3Dmap", "row 0 holds a big value");
  };
  EXPECT_NE(error_of([&] { decoded(bytes, s, refuse); }).find("f.h5: 3Dmap: row 0 holds a big value"), std::string::npos);
}

TEST(LutCodec, DamagedBytesAreRefusedNotDecoded) {
  const SampleShape s{512, 4};
  const auto x = coupled_counts(s.voxels, 50, 4);
  const auto good = make_lut_codec()->encode(x.data(), s);
  auto cut = good;
  cut.pop_back();
  EXPECT_NE(error_of([&] { decoded(cut, s); }).find("truncated or damaged"), std::string::npos);
  auto magic = good;
  magic[0] = 'X';
  EXPECT_NE(error_of([&] { decoded(magic, s); }).find("sample: lut: not a lookup-table sample"), std::string::npos);
  EXPECT_NE(error_of([&] { decoded(good, SampleShape{512, 3}); }).find("holds 512 voxels x 4 channels, the dataset says 512 x 3"),
            std::string::npos);
  auto key = good;
  key.back() = 0xff;  // a group key beyond the 51 groups
  EXPECT_NE(error_of([&] { decoded(key, s); }).find("sample: lut: its CRC-32 differs"), std::string::npos);
  auto other = good;
  other.back() = other.back() == 0 ? 1 : 0;  // another group that exists: it would decode to other values
  EXPECT_NE(error_of([&] { decoded(other, s); }).find("sample: lut: its CRC-32 differs from the one written at encoding"),
            std::string::npos);
  EXPECT_EQ(good[4], 2);  // version 2: the CRC at bytes 28-31
  EXPECT_NE(error_of([] { codec_from_name("zstd", "--codec"); }).find("unknown codec 'zstd': expected raw, deflate, lut or diff"),
            std::string::npos);
}

namespace {

struct EncodedData : ::testing::Test {
  static fs::path dir;
  static void SetUpTestSuite() {
    dir = mrplan::testing::scratch_dir("codec");
    DatagenOptions o;
    o.samples = 20, o.size = 16, o.samples_per_file = 8;
    mrplan::testing::make_two_resolutions(dir / "raw", o);
    for (Codec c : {Codec::lut, Codec::deflate}) {
      EncodeOptions e;
      e.in_dir = (dir / "raw").string(), e.out_dir = (dir / codec_name(c)).string(), e.codec = c, e.threads = 2, e.progress = false;
      const auto r = encode_dataset(e);
      EXPECT_EQ(r.files, 6);
      EXPECT_EQ(r.samples, 40);
    }
  }
  static void TearDownTestSuite() { fs::remove_all(dir); }
};
fs::path EncodedData::dir;

// Every batch the prefetcher makes of `folder`, flattened.
std::vector<float> batches(const fs::path& folder, const DataLayout& layout, Codec expected) {
  SampleStore store(folder.string(), layout);
  EXPECT_EQ(store.codec(), expected);
  std::vector<int64_t> ids(static_cast<size_t>(store.size()));
  std::iota(ids.begin(), ids.end(), 0);
  Prefetcher p(store, ids, 4, 2, true);
  std::vector<float> all;
  while (auto b = p.next()) {
    const auto x = b->x.contiguous();
    all.insert(all.end(), x.data_ptr<float>(), x.data_ptr<float>() + x.numel());
    const auto y = b->y.contiguous();
    all.insert(all.end(), y.data_ptr<float>(), y.data_ptr<float>() + y.numel());
  }
  return all;
}

}  // namespace

TEST_F(EncodedData, EveryCodecReadsBackAsTheRawDatasetBitForBit) {
  const auto layout = layout_for("cosmoflow-mrt");
  for (const char* res : {"res1", "res2"}) {
    const auto raw = batches(dir / "raw" / res, layout, Codec::raw);
    ASSERT_FALSE(raw.empty());
    EXPECT_TRUE(same_bits(raw, batches(dir / "lut" / res, layout, Codec::lut))) << res;
    EXPECT_TRUE(same_bits(raw, batches(dir / "deflate" / res, layout, Codec::deflate))) << res;
  }
  H5File h((dir / "deflate/res1/cosmo_0000.h5").string(), H5File::Mode::read);
  EXPECT_LT(h.stored_bytes("3Dmap"), H5File((dir / "raw/res1/cosmo_0000.h5").string(), H5File::Mode::read).stored_bytes("3Dmap"));
  EXPECT_EQ(h.dims("unitPar"), (std::vector<uint64_t>{8, 4}));  // labels copied as they are
}

// Left encoded for a device decoder, a batch holds each sample's bytes, the labels and the pipeline
// that read() applies: decoded with them, it is the decoded batch bit for bit.
TEST_F(EncodedData, BatchesLeftEncodedDecodeToTheDecodedOnes) {
  const auto layout = layout_for("cosmoflow-mrt");
  SampleStore store((dir / "lut/res1").string(), layout);
  const std::vector<int64_t> ids{3, 0, 7, 5, 1};
  Prefetcher decoded(store, ids, 2, 2, /*keep_partial=*/true);
  Prefetcher encoded(store, ids, 2, 2, /*keep_partial=*/true, nullptr, /*encoded=*/true);
  const auto codec = make_codec(Codec::lut);
  int batches = 0;
  while (auto d = decoded.next()) {
    auto e = encoded.next();
    ASSERT_TRUE(e.has_value());
    EXPECT_FALSE(e->x.defined());
    ASSERT_EQ(e->encoded.size(), static_cast<size_t>(d->x.size(0)));
    EXPECT_TRUE(torch::equal(e->y, d->y));
    const auto x = d->x.contiguous();
    std::vector<float> back(static_cast<size_t>(x.numel()));
    const int64_t per = x.numel() / x.size(0);
    for (size_t i = 0; i < e->encoded.size(); ++i) {
      const auto& s = e->encoded[i];
      EXPECT_NE(s.where.find("3Dmap row"), std::string::npos);
      codec->decode(s.bytes.data(), s.bytes.size(), s.shape, store.pipeline(s), back.data() + static_cast<int64_t>(i) * per, s.where);
    }
    EXPECT_EQ(std::memcmp(back.data(), x.data_ptr<float>(), back.size() * sizeof(float)), 0);
    ++batches;
  }
  EXPECT_EQ(batches, 3);
  EXPECT_FALSE(encoded.next().has_value());
  SampleStore raw((dir / "raw/res1").string(), layout);  // a raw folder has nothing to leave encoded
  Prefetcher plain(raw, ids, 2, 2, true, nullptr, /*encoded=*/true);
  EXPECT_TRUE(plain.next()->x.defined());
  EXPECT_NE(error_of([&] { std::vector<float> y(4); raw.read_encoded(0, y.data()); }).find("is stored raw, not encoded"), std::string::npos);
}

TEST_F(EncodedData, EncodingTwiceOrMixingCodecsIsRefused) {
  EncodeOptions e;
  e.in_dir = (dir / "lut").string(), e.out_dir = (dir / "twice").string(), e.progress = false;
  EXPECT_NE(error_of([&] { encode_dataset(e); }).find("is already encoded (lut): encode the raw dataset"), std::string::npos);
  e.in_dir = e.out_dir = (dir / "raw").string();
  EXPECT_NE(error_of([&] { encode_dataset(e); }).find("is the input folder"), std::string::npos);
  const auto mixed = dir / "mixed";
  fs::create_directories(mixed);
  fs::copy_file(dir / "raw/res1/cosmo_0000.h5", mixed / "cosmo_0000.h5");
  fs::copy_file(dir / "lut/res1/cosmo_0001.h5", mixed / "cosmo_0001.h5");
  EXPECT_NE(error_of([&] { SampleStore(mixed.string(), layout_for("cosmoflow-mrt")); }).find("cosmo_0001.h5: 3Dmap: is stored lut but"),
            std::string::npos);
}

// MRT on the lookup-table copy: the same losses and metrics, epoch by epoch, as on the raw data.
TEST_F(EncodedData, TrainingOnTheEncodedCopyGivesTheSameLosses) {
  const auto yaml = mrplan::testing::tiny_plan_yaml({.train_samples = 16, .validation_samples = 4},
                                                     "  - {name: coarse, resolution: 2, gpus: 1, local_batch: 4, stop: {epochs: 2}}\n"
                                                     "  - {name: dense, resolution: 1, gpus: 1, local_batch: 4, stop: {epochs: 1}}\n");
  auto losses = [&](const std::string& data) {
    Plan p = plan_from_yaml_text(yaml, "tiny.yaml");
    p.data_dir = (dir / data).string();
    RunOptions o;
    o.out_dir = (dir / ("run-" + data)).string(), o.threads = 1, o.quiet = true;
    std::vector<double> out;
    for (const auto& st : run_plan(p, o).stages)
      for (const auto& e : st.single().per_epoch) out.insert(out.end(), {e.loss.value_or(-1), e.metric.value_or(-1)});
    return out;
  };
  const auto raw = losses("raw");
  EXPECT_EQ(raw.size(), 6u);
  EXPECT_EQ(raw, losses("lut"));
}

TEST_F(EncodedData, APlanNamingAnotherCodecThanTheDataIsRefusedRawIncluded) {
  const auto yaml = mrplan::testing::tiny_plan_yaml({.method = "baseline", .train_samples = 16, .validation_samples = 4},
                                                     "  - {name: dense, resolution: 1, gpus: 1, local_batch: 4, stop: {epochs: 1}}\n");
  auto run_on_lut = [&](const std::string& io, const std::string& out) {
    Plan p = plan_from_yaml_text(yaml + io, "tiny.yaml");
    p.data_dir = (dir / "lut").string();
    RunOptions o;
    o.out_dir = (dir / out).string(), o.threads = 1, o.quiet = true;
    return error_of([&] { run_plan(p, o); });
  };
  EXPECT_NE(run_on_lut("io: {codec: raw}\n", "named-raw").find("is stored lut but the plan reads io.codec raw"), std::string::npos);
  EXPECT_EQ(run_on_lut("", "unnamed"), "<no error>");  // no io.codec: the data is read as it is stored
  Plan named = plan_from_yaml_text(yaml + "io: {codec: raw}\n", "tiny.yaml");
  EXPECT_TRUE(plan_from_yaml_text(plan_to_yaml(named), "again.yaml").codec_named);  // the refusal survives a written plan
  EXPECT_FALSE(plan_from_yaml_text(plan_to_yaml(plan_from_yaml_text(yaml, "t.yaml")), "again.yaml").codec_named);
}

TEST(DiffCodec, RoundsToHalfPrecisionAsFp16Does) {
  EXPECT_EQ(round_to_half(1.f / 3.f), 0.333251953125f);
  EXPECT_EQ(round_to_half(65504.f), 65504.f);
  EXPECT_TRUE(std::isinf(round_to_half(65520.f)));
  EXPECT_EQ(round_to_half(-2049.f), -2048.f);  // a tie: to even
  EXPECT_EQ(round_to_half(1e-8f), 0.f);
  EXPECT_EQ(round_to_half(5e-8f), std::ldexp(1.f, -24));  // FP16's smallest subnormal
}

TEST(DiffCodec, SmoothLinesShrinkAndComeBackCloseWithoutDrift) {
  const SampleShape s{2 * 400, 2, 400};  // 2 rows of 400 values, 2 channels
  std::vector<float> x(static_cast<size_t>(s.voxels * s.channels));
  for (int64_t v = 0; v < s.voxels; ++v) {
    x[static_cast<size_t>(v * 2)] = 280.f + 10.f * std::sin(static_cast<float>(v % 400) * 0.02f);  // smooth
    x[static_cast<size_t>(v * 2 + 1)] = v < 400 ? 7.f : (v % 400 < 200 ? 1.f : 1000.f);  // constant, then a jump
  }
  const auto codec = make_codec(Codec::diff);
  EXPECT_FALSE(codec->lossless());
  const auto bytes = codec->encode(x.data(), s);
  EXPECT_LT(bytes.size(), x.size() * 4 / 3);
  std::vector<float> out(x.size());
  codec->decode(bytes.data(), bytes.size(), s, {}, out.data(), "sample");
  const auto want = channel_first(x, s.voxels, s.channels);
  double worst = 0;
  for (int64_t v = 0; v < s.voxels; ++v) worst = std::max(worst, std::fabs(double(out[static_cast<size_t>(v)]) - want[static_cast<size_t>(v)]));
  EXPECT_LT(worst, 0.02);  // a step's 4-bit mantissa: 1/32 of the segment's largest step (0.2), not summed along the line
  for (int64_t v = s.voxels; v < 2 * s.voxels; ++v) EXPECT_EQ(out[static_cast<size_t>(v)], want[static_cast<size_t>(v)]);  // the jump is a new pivot
  ValuePipeline half;
  half.half = true;
  codec->decode(bytes.data(), bytes.size(), s, half, out.data(), "sample");
  EXPECT_EQ(out[0], round_to_half(out[0]));
}

TEST(DiffCodec, LinesThatCannotShrinkStayRawBitForBit) {
  const SampleShape s{64, 1, 64};
  std::mt19937 rng(5);
  std::vector<float> x(64);
  for (auto& v : x) v = std::ldexp(static_cast<float>(rng() % 1000 + 1), static_cast<int>(rng() % 60) - 30);  // no smoothness
  x[3] = std::numeric_limits<float>::quiet_NaN();
  const auto codec = make_codec(Codec::diff);
  const auto bytes = codec->encode(x.data(), s);
  std::vector<float> out(64);
  codec->decode(bytes.data(), bytes.size(), s, {}, out.data(), "sample");
  EXPECT_EQ(std::memcmp(out.data(), x.data(), 64 * sizeof(float)), 0);
  ValuePipeline refuse;
  refuse.check = [](float v) {
    if (std::isnan(v)) fail_input("c.h5", "climate/data", "row 0 holds NaN or infinity");
  };
  EXPECT_NE(error_of([&] { codec->decode(bytes.data(), bytes.size(), s, refuse, out.data(), "sample"); }).find("NaN"), std::string::npos);
  auto cut = bytes;
  cut.resize(cut.size() - 5);
  EXPECT_NE(error_of([&] { codec->decode(cut.data(), cut.size(), s, {}, out.data(), "sample"); }).find("truncated or damaged"),
            std::string::npos);
  auto mode = bytes;
  mode[28 + 4] = 9;  // the only line's mode
  EXPECT_NE(error_of([&] { codec->decode(mode.data(), mode.size(), s, {}, out.data(), "sample"); }).find("line mode 9 is not raw"),
            std::string::npos);
  EXPECT_NE(error_of([&] { codec->decode(bytes.data(), bytes.size(), SampleShape{64, 1, 32}, {}, out.data(), "sample"); })
                .find("in lines of 64, the dataset says 64 x 1 in lines of 32"),
            std::string::npos);
}

// DeepCAM on the differential copy: labels exact, inputs within FP16 and the codec's steps.
TEST(DiffCodec, TheLoaderReadsADeepcamCopyCloseToTheRawOne) {
  const auto dir = mrplan::testing::scratch_dir("codec-diff");
  DatagenOptions o;
  o.workload = "deepcam", o.samples = 4, o.size = 32, o.out_dir = (dir / "raw").string(), o.progress = false;
  generate_dataset(o);
  EncodeOptions e;
  e.in_dir = o.out_dir, e.out_dir = (dir / "diff").string(), e.codec = Codec::diff, e.workload = "deepcam", e.progress = false;
  const auto r = encode_dataset(e);
  EXPECT_EQ(r.values, 4 * 32 * 48 * 16);
  EXPECT_LT(r.sample_bytes_out, r.sample_bytes_in / 2);
  EXPECT_LT(r.values_off_10pct, r.values / 20);
  const auto layout = layout_for("deepcam");
  const auto raw = batches(dir / "raw", layout, Codec::raw), diff = batches(dir / "diff", layout, Codec::diff);
  ASSERT_EQ(raw.size(), diff.size());
  const size_t x_per_batch = 4 * 16 * 32 * 48;  // then the batch's labels
  int64_t far = 0;
  for (size_t i = 0; i < x_per_batch; ++i) far += std::fabs(raw[i] - diff[i]) > 0.01f;  // min-max normalised: [0, 1]
  EXPECT_LT(far, static_cast<int64_t>(x_per_batch / 100));
  EXPECT_TRUE(std::equal(raw.begin() + x_per_batch, raw.end(), diff.begin() + x_per_batch));
  fs::remove_all(dir);
}
