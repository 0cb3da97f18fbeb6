#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "calibrate/calibrated_builtins.hpp"
#include "model/builtin_workloads.hpp"
#include "model/profile_parameters.hpp"
#include "model/workload_yaml.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/depth_warnings.hpp"
#include "sim/simulate.hpp"
#include "sim/sweep.hpp"

using namespace mrplan;

namespace {

// The warnings of a plan's prediction that contain `text`.
size_t count(const Record& r, const std::string& text) {
  size_t n = 0;
  for (const auto& w : r.warnings) n += w.find(text) != std::string::npos;
  return n;
}

}  // namespace

TEST(DepthWarnings, GlobalBatchFarFromTheCurvesReferenceWithoutCriticalBatch) {
  const auto& m = calibrated_builtin_profile("summit");
  Plan p = builtin_plan("cosmoflow-mrt@summit", 32);  // global batch 256: the curves' own
  EXPECT_EQ(count(simulate(p, m), "no critical batch"), 0u);
  p = plan_at_gpus(p, 32, Scaling::weak);
  for (auto& s : p.stages) s.models[0].local_batch = 64;  // 2048: 8x
  const auto r = simulate(p, m);
  EXPECT_EQ(count(r, "global batch 2048 is 8.0x the batch the learning curves of cosmoflow-mrt were fitted at (256)"), 2u);
  MachineProfile known = m;
  known.convergence["cosmoflow-mrt"].critical_batch = 1000;
  EXPECT_EQ(count(simulate(p, known), "no critical batch"), 0u);
}

TEST(DepthWarnings, CoarseCurvesUsedAtAnotherResolution) {
  const auto& m = calibrated_builtin_profile("perlmutter");
  EXPECT_EQ(count(simulate(builtin_plan("cosmoflow-mrt@perlmutter"), m), "fitted at resolution"), 0u);
  EXPECT_EQ(count(simulate(builtin_plan("cosmoflow-mrmf2@perlmutter"), m), "fitted at resolution 2; resolution 4 uses them"), 1u);
}

TEST(DepthWarnings, FitsTransferredFromAnotherMachine) {
  EXPECT_EQ(count(simulate(builtin_plan("cosmoflow-mrt@perlmutter"), calibrated_builtin_profile("perlmutter")), "transferred from cori-gpu"), 1u);
  EXPECT_EQ(count(simulate(builtin_plan("cosmoflow-mrt@summit"), calibrated_builtin_profile("summit")), "transferred from"), 0u);
}

TEST(DepthWarnings, ANetworkFromAFileThatTakesABuiltinsNameAndItsCurves) {
  const auto dir = std::filesystem::temp_directory_path() / "mrplan_depth_warnings";
  std::filesystem::create_directories(dir);
  const auto& m = calibrated_builtin_profile("summit");
  Plan p = builtin_plan("neuron-inverter-baseline@summit");
  auto write = [&](const std::string& text) {
    std::ofstream((dir / "net.yaml").string()) << text;
    p.workload = (dir / "net.yaml").string();
    return simulate(p, m);
  };
  const std::string same = workload_to_yaml(builtin_workload("neuron-inverter"));
  EXPECT_EQ(count(write(same), "whose learning curves were fitted for the built-in network"), 0u);
  std::string wider = same;
  const auto at = wider.find("kind: linear, filters: 512");
  ASSERT_NE(at, std::string::npos) << same;
  wider.replace(at, 26, "kind: linear, filters: 640");
  EXPECT_EQ(count(write(wider), "names its network 'neuron-inverter', whose learning curves were fitted for the built-in network"), 1u);
}

TEST(DepthWarnings, FixedEpochsWithoutAConvergenceModel) {
  MachineProfile m = calibrated_builtin_profile("summit");
  m.convergence.clear();
  Plan p = builtin_plan("cosmoflow-baseline@summit");
  p.stages[0].models[0].stop.kind = StopRule::Kind::epochs;
  p.stages[0].models[0].stop.epochs = 20;
  EXPECT_EQ(count(simulate(p, m), "no convergence model for cosmoflow-mrt: the plan's fixed stops are predicted, not whether it reaches"), 1u);
}

TEST(DepthWarnings, BatchNormGroupsThatDoNotSplitTheRanks) {
  const auto& m = calibrated_builtin_profile("summit");
  Plan p = builtin_plan("cosmoflow-coarse@summit", 32);
  p.batchnorm_group = 2;
  EXPECT_EQ(count(simulate(p, m), "batchnorm_group"), 0u);
  p.batchnorm_group = 3;
  EXPECT_EQ(count(simulate(p, m), "stage 'coarse': comm.batchnorm_group 3 does not divide its 32 GPUs: priced as if it did"), 1u);
  p.batchnorm_group = 64;
  EXPECT_EQ(count(simulate(p, m), "stage 'coarse': comm.batchnorm_group 64 is more than its 32 GPUs: priced as one group of 32"), 1u);
  // a pool made by the samples it must hold is read by the same rule (model/sync_batchnorm)
  p.batchnorm_group = 1;
  const int local = p.stages[0].models[0].local_batch;
  p.batchnorm_samples = 3 * local;
  const std::string three = fmt::format("stage 'coarse': comm.batchnorm_samples {} at local batch {} (pools of 3)", 3 * local, local);
  EXPECT_EQ(count(simulate(p, m), three + " does not divide its 32 GPUs: priced as if it did"), 1u);
  p.batchnorm_samples = 2 * local;
  EXPECT_EQ(count(simulate(p, m), "(pools of"), 0u);
  p.batchnorm_samples = 64 * local;
  EXPECT_EQ(count(simulate(p, m), "(pools of 64) is more than its 32 GPUs: priced as one group of 32"), 1u);
}

TEST(DepthWarnings, ALoaderThatRestartsOnAProfileWithoutItsStart) {
  MachineProfile m = calibrated_builtin_profile("cori-gpu");  // fitted: at its bound, 0
  const Plan p = builtin_plan("deepcam-coarse@cori-gpu");     // the reference's PyTorch DataLoader
  const std::string says = "io.persistent_workers is false, but machine 'cori-gpu' has no io.worker_start_ms";
  EXPECT_EQ(count(simulate(p, m), says), 0u);
  m.fitted.clear();
  EXPECT_EQ(count(simulate(p, m), says), 1u);
}

TEST(DepthWarnings, AHorovodPlanOnAProfileWithoutHorovodsCost) {
  MachineProfile m = calibrated_builtin_profile("summit");
  const Plan p = builtin_plan("cosmoflow-coarse@summit");  // TensorFlow + Horovod
  EXPECT_EQ(count(simulate(p, m), "horovod_call_overhead_us"), 0u);
  m.comm.horovod_call_overhead_s = 0;
  EXPECT_EQ(count(simulate(p, m), "comm.framework is horovod, but machine 'summit' has no comm.horovod_call_overhead_us: each allreduce "
                                  "call is priced at its call_overhead_us"),
            1u);
}

TEST(DepthWarnings, PooledBatchNormOnAMachineThatNeverFittedItsCost) {
  MachineProfile m = calibrated_builtin_profile("summit");
  Plan p = builtin_plan("cosmoflow-coarse@summit", 32);
  const std::string says = "the plan pools batch norm over 2 ranks, but machine 'summit' has no comm.sync_batchnorm_call_us";
  EXPECT_EQ(count(simulate(p, m), "comm.sync_batchnorm_call_us"), 0u);  // no pool
  p.batchnorm_group = 2;
  EXPECT_EQ(count(simulate(p, m), says), 1u);
  record_fit(m, {"comm.sync_batchnorm_call_us", 0, 1, "calibrate records: a.json"});  // fitted, at 0
  EXPECT_EQ(count(simulate(p, m), says), 0u);
}
