// `--set KEY=VALUE`: dotted keys into the plan and the profile, read back by their own readers.
#include <gtest/gtest.h>

#include "calibrate/calibrated_builtins.hpp"
#include "model/yaml_overrides.hpp"
#include "sim/builtin_plans.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

TEST(YamlOverrides, PlanAndMachineKeysLandWhereTheirPathsSay) {
  const Plan base = builtin_plan("cosmoflow-mrt@summit", 64);
  const auto o = parse_overrides({"stages.1.local_batch=16", "io.codec=lut", "dataset.train_samples=4096", "machine.io.host_decode_GBps=0.5",
                                  "machine.io.codecs.lut={ratio: 4, host_decode_GBps: 2}"});
  ASSERT_EQ(o.plan.size(), 3u);
  ASSERT_EQ(o.machine.size(), 2u);
  const Plan p = with_overrides(base, o);
  EXPECT_EQ(p.stages[1].models[0].local_batch, 16);
  EXPECT_EQ(p.stages[0].models[0].local_batch, base.stages[0].models[0].local_batch);
  EXPECT_EQ(p.codec, Codec::lut);
  EXPECT_EQ(p.train_samples, 4096);
  const auto m = with_overrides(calibrated_builtin_profile("summit"), o);
  EXPECT_DOUBLE_EQ(m.io.host_decode_Bps, 0.5e9);
  EXPECT_DOUBLE_EQ(m.io.codecs.at("lut").ratio, 4);
  EXPECT_DOUBLE_EQ(m.io.codecs.at("lut").host_decode_Bps, 2e9);
}

TEST(YamlOverrides, BadKeysAndValuesAreRefusedByNameAndByTheReader) {
  const Plan base = builtin_plan("cosmoflow-mrt@summit", 64);
  EXPECT_NE(error_of([] { parse_overrides({"stages"}); }).find("--set: stages: expected KEY=VALUE"), std::string::npos);
  EXPECT_NE(error_of([&] { with_overrides(base, parse_overrides({"stages.5.gpus=2"})); }).find("index 5 is past the list's 2 entries"),
            std::string::npos);
  EXPECT_NE(error_of([&] { with_overrides(base, parse_overrides({"stages.x.gpus=2"})); }).find("'x' is a list here: expected an index"),
            std::string::npos);
  EXPECT_NE(error_of([&] { with_overrides(base, parse_overrides({"name.x=2"})); }).find("'x' is below a single value"), std::string::npos);
  EXPECT_NE(error_of([&] { with_overrides(base, parse_overrides({"stages.0.local_batch=0"})); }).find("stages[0].local_batch: must be >= 1"),
            std::string::npos);
  EXPECT_NE(error_of([&] { with_overrides(base, parse_overrides({"stages.0.lr=0.1"})); }).find("lr"), std::string::npos);  // unknown key
}
