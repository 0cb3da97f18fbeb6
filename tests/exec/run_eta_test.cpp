#include <gtest/gtest.h>

#include "exec/run_eta.hpp"
#include "model/builtin_workloads.hpp"
#include "model/plan_yaml.hpp"
#include "sim/simulate.hpp"
#include "tests/support/tiny_plan.hpp"

using namespace mrplan;

namespace {

Plan two_stages(const std::string& second) {
  return plan_from_yaml_text(mrplan::testing::tiny_plan_yaml({.name = "eta"}, "  - {name: coarse, resolution: 2, gpus: 1, local_batch: 8, stop: {epochs: 2}}\n  - " + second + "\n"));
}

}  // namespace

TEST(RunEta, InTheLastStageTheMeanEpochTimesTheEpochsLeft) {
  const auto p = two_stages("{name: dense, resolution: 1, gpus: 1, local_batch: 8, stop: {epochs: 3}}");
  const auto eta = time_left(p, epoch_work(p, plan_network(p)), 1, 0, 1, 2.0);  // 1 of 3 done
  EXPECT_DOUBLE_EQ(eta.seconds, 2 * 2.0);
  EXPECT_FALSE(eta.upper_bound);
  EXPECT_EQ(eta_text(eta), "ETA 4.0 s");
}

TEST(RunEta, ALaterStageIsPricedByItsWorkAndARuleStopIsABound) {
  const auto p = two_stages("{name: dense, resolution: 1, gpus: 2, local_batch: 8, stop: {target: true, max_epochs: 10}}");
  const auto spec = plan_network(p);
  auto work = [&](const ModelRun& m) {
    const auto t = model_run_table(p, spec, m);
    return (t.total_fwd_flops() + t.total_bwd_flops()) * 32.0 / (m.gpus * m.local_batch);
  };
  const double ratio = work(p.stages[1].models[0]) / work(p.stages[0].models[0]);
  EXPECT_GT(ratio, 1);  // 8x the voxels on 2 ranks
  const auto eta = time_left(p, epoch_work(p, spec), 0, 0, 2, 1.5);
  EXPECT_NEAR(eta.seconds, 10 * 1.5 * ratio, 1e-9 * eta.seconds);
  EXPECT_TRUE(eta.upper_bound);
  EXPECT_EQ(eta_text({7300, true}), "ETA <= 2.0 h");
  EXPECT_EQ(eta_text({150, false}), "ETA 2.5 min");
}
