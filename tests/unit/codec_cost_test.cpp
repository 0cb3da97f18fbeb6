// The plan's codec in the I/O model (preprocessing paper): fewer bytes read and staged, the decoder's
// rate on the host or its time in the device's step, FP16 halving the host-to-device copy.
#include <gtest/gtest.h>

#include "calibrate/calibrated_builtins.hpp"
#include "model/io_cost.hpp"
#include "model/plan_yaml.hpp"
#include "model/profile_yaml.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/simulate.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

MachineProfile node() {
  MachineProfile m;
  m.name = "node";
  m.io.pfs.per_node_bandwidth_Bps = 10e9, m.io.pfs.aggregate_bandwidth_Bps = 1e12, m.io.pfs.per_file_latency_s = 0;
  m.io.host_decode_Bps = 2e9, m.io.host_to_device_Bps = 20e9, m.io.host_to_device_efficiency = 0.5;
  m.io.codecs["lut"] = CodecRates{4, 1e9, 8e9, 2};
  return m;
}

IoJob batch(const MachineProfile& m, Codec c, DecoderPlace d) {
  IoJob j;
  j.sample_bytes = 16e6, j.device_bytes = 32e6, j.local_batch = 8, j.ranks_on_node = 4;
  j.codec = codec_rates(m, c, d), j.decoder = d;
  return j;
}

}  // namespace

TEST(CodecCost, HostDecoderReadsLessDecodesAtItsRateAndCopiesHalf) {
  const auto m = node();
  const auto raw = io_per_iteration(m, batch(m, Codec::raw, DecoderPlace::host), TierKind::pfs);
  EXPECT_DOUBLE_EQ(raw.read_s, 8 * 16e6 / (10e9 / 4));
  EXPECT_DOUBLE_EQ(raw.decode_s, 8 * 16e6 / 2e9);
  EXPECT_DOUBLE_EQ(raw.h2d_s, 8 * 32e6 / 10e9);
  const auto lut = io_per_iteration(m, batch(m, Codec::lut, DecoderPlace::host), TierKind::pfs);
  EXPECT_DOUBLE_EQ(lut.read_s, raw.read_s / 4);
  EXPECT_DOUBLE_EQ(lut.decode_s, 8 * 16e6 / 1e9);  // the raw bytes it emits, at the codec's own rate
  EXPECT_DOUBLE_EQ(lut.h2d_s, raw.h2d_s / 2);      // FP16 output
  EXPECT_DOUBLE_EQ(lut.device_s, 0);
}

TEST(CodecCost, DeviceDecoderMovesTheEncodedBytesAndDecodesInTheStep) {
  const auto m = node();
  const auto dev = io_per_iteration(m, batch(m, Codec::lut, DecoderPlace::device), TierKind::pfs);
  EXPECT_DOUBLE_EQ(dev.decode_s, 0);
  EXPECT_DOUBLE_EQ(dev.h2d_s, 8 * 16e6 / 4 / 10e9);
  EXPECT_DOUBLE_EQ(dev.device_s, 8 * 16e6 / 8e9);
}

TEST(CodecCost, MissingRatesNameTheProfileKey) {
  auto m = node();
  EXPECT_NE(error_of([&] { codec_rates(m, Codec::diff, DecoderPlace::host); })
                .find("node: io.codecs.diff: the profile has no rates for codec 'diff': run `mrplan calibrate io --codec diff`"),
            std::string::npos);
  m.io.codecs["lut"].device_decode_Bps = 0;
  EXPECT_NE(error_of([&] { codec_rates(m, Codec::lut, DecoderPlace::device); })
                .find("node: io.codecs.lut.device_decode_GBps: unknown: the plan decodes 'lut' on the device"),
            std::string::npos);
}

TEST(CodecCost, ProfileAndPlanKeepTheCodecThroughYaml) {
  auto m = calibrated_builtin_profile("summit");
  m.io.codecs["lut"] = CodecRates{3.5, 1.5e9, 0, 2};
  const auto back = profile_from_yaml_text(profile_to_yaml(m), "p.yaml");
  ASSERT_EQ(back.io.codecs.count("lut"), 1u);
  EXPECT_DOUBLE_EQ(back.io.codecs.at("lut").ratio, 3.5);
  EXPECT_DOUBLE_EQ(back.io.codecs.at("lut").host_decode_Bps, 1.5e9);
  EXPECT_DOUBLE_EQ(back.io.codecs.at("lut").output_bytes_per_value, 2);
  auto yaml = profile_to_yaml(m);
  yaml.replace(yaml.find("lut:"), 4, "zstd:");
  EXPECT_NE(error_of([&] { profile_from_yaml_text(yaml, "p.yaml"); }).find("unknown codec 'zstd'"), std::string::npos);

  Plan p = builtin_plan("cosmoflow-mrt@summit", 64);
  EXPECT_EQ(plan_to_yaml(p).find("codec"), std::string::npos);  // a raw plan's text is as before
  p.codec = Codec::lut, p.decoder = DecoderPlace::device;
  const auto q = plan_from_yaml_text(plan_to_yaml(p));
  EXPECT_EQ(q.codec, Codec::lut);
  EXPECT_EQ(q.decoder, DecoderPlace::device);
  auto bad = plan_to_yaml(p);
  bad.replace(bad.find("codec: lut"), 10, "codec: raw");
  EXPECT_NE(error_of([&] { plan_from_yaml_text(bad, "p.yaml"); }).find("p.yaml: io.decoder: 'raw' is read by HDF5 on the host"),
            std::string::npos);
}

// An I/O-bound plan: a codec that reads a quarter of the bytes, decoding faster than the file system
// delivers, shortens every epoch; the training itself is unchanged.
TEST(CodecCost, ACodecShortensAnIoBoundRunAndOnlyItsIo) {
  auto m = calibrated_builtin_profile("summit");
  m.io.pfs.per_node_bandwidth_Bps = 0.2e9;  // starve the input pipeline
  m.host_memory_bytes = 1e9, m.io.nvme.capacity_per_node_bytes = 0;
  m.io.host_memory.capacity_per_node_bytes = 0.5e9;
  Plan p = builtin_plan("cosmoflow-mrt@summit", 64);
  const Record raw = simulate(p, m);
  m.io.codecs["lut"] = CodecRates{4, 50e9, 0, 4};
  p.codec = Codec::lut;
  const Record lut = simulate(p, m);
  EXPECT_LT(lut.totals.time_to_target_s, 0.6 * raw.totals.time_to_target_s);
  EXPECT_DOUBLE_EQ(lut.stages[0].single().compute_s, raw.stages[0].single().compute_s);
  EXPECT_DOUBLE_EQ(lut.stages[0].single().epochs, raw.stages[0].single().epochs);
}
