// The built-in plans, workloads and machines are data/*.yaml read by the user's readers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "model/builtin_profiles.hpp"
#include "model/builtin_workloads.hpp"
#include "model/plan_scaling.hpp"
#include "model/plan_yaml.hpp"
#include "model/workload_yaml.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/simulate.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

std::vector<std::string> yaml_stems(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(MRPLAN_SOURCE_DIR) + "/data/" + folder))
    if (e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

size_t count_kind(const NetworkSpec& s, OpKind kind) {
  return static_cast<size_t>(std::count_if(s.ops.begin(), s.ops.end(), [&](const Op& o) { return o.kind == kind; }));
}

const Op& op_named(const NetworkSpec& s, const std::string& name) {
  for (const auto& o : s.ops)
    if (o.name == name) return o;
  throw std::out_of_range(name);
}

}  // namespace

TEST(BuiltinData, NamesAreTheDataFolders) {
  EXPECT_EQ(builtin_plan_names(), yaml_stems("plans"));
  EXPECT_EQ(builtin_workload_names(), yaml_stems("workloads"));
  EXPECT_EQ(builtin_profile_names(), yaml_stems("machines"));
}

TEST(BuiltinData, EveryPlanTakesItsMachineFromItsNameAndRoundTrips) {
  for (const auto& app : builtin_plan_names())
    for (const auto& machine : builtin_profile_names()) {
      const Plan p = builtin_plan(app + "@" + machine);
      EXPECT_EQ(p.name, app + "@" + machine);
      EXPECT_EQ(p.machine, machine);
      EXPECT_EQ(plan_to_yaml(plan_from_yaml_text(plan_to_yaml(p), "again.yaml")), plan_to_yaml(p)) << app;
      EXPECT_NO_THROW(plan_network(p)) << app;
    }
}

TEST(BuiltinData, EveryWorkloadRoundTripsWithItsSizeRules) {
  for (const auto& name : builtin_workload_names()) {
    const auto spec = builtin_workload(name);
    EXPECT_EQ(workload_to_yaml(workload_from_yaml_text(workload_to_yaml(spec), "again.yaml")), workload_to_yaml(spec)) << name;
  }
}

// MRT IV-B keeps CosmoFlow's global batch 256; IV-C keeps DeepCAM's local batches 2 and 8.
TEST(BuiltinData, ScalingKeepsTheGlobalOrTheLocalBatch) {
  const Plan cosmo = builtin_plan("cosmoflow-mrt@summit", 64);
  EXPECT_EQ(cosmo.scaling, Scaling::strong);
  for (const auto& s : cosmo.stages) EXPECT_EQ(s.gpus() * s.models[0].local_batch, 256);
  const Plan deepcam = builtin_plan("deepcam-mrt@summit", 128);  // the paper's: coarse keeps 512, dense its local 2
  EXPECT_EQ(deepcam.scaling, Scaling::weak);
  EXPECT_EQ(deepcam.stages[0].scaling, Scaling::strong);
  EXPECT_EQ(deepcam.stages[0].models[0].local_batch, 4);
  EXPECT_EQ(deepcam.stages[1].models[0].local_batch, 2);
  EXPECT_EQ(deepcam.stages[1].gpus(), 128);
  const Plan all_weak = plan_at_gpus(builtin_plan("deepcam-mrt@summit"), 128, Scaling::weak);  // the optimizer's: every local batch kept
  EXPECT_EQ(all_weak.stages[0].models[0].local_batch, 8);
  const Plan mrmf = builtin_plan("cosmoflow-mrmf@summit", 64);  // each fusion model: half the GPUs, global 128
  EXPECT_EQ(mrmf.stages[0].models[0].gpus, 32);
  EXPECT_EQ(mrmf.stages[0].models[0].local_batch, 4);
  EXPECT_NE(error_of([] { builtin_plan("cosmoflow-mrt@summit", 512); }).find("global batch 256, which 512 GPUs cannot split evenly"),
            std::string::npos);
  EXPECT_NE(error_of([] { builtin_plan("neuron-inverter-mrmf@summit", 1); }).find("1 GPUs leave no GPU for model 'high'"),
            std::string::npos);
  EXPECT_EQ(plan_at_gpus(builtin_plan("cosmoflow-mrt@summit"), 512, Scaling::weak).stages[0].models[0].local_batch, 8);
}

TEST(BuiltinData, UnknownNamesListTheKnownOnes) {
  EXPECT_NE(error_of([] { builtin_plan("resnet-mrt@summit"); }).find("APP one of: cosmoflow-baseline, cosmoflow-coarse"), std::string::npos);
  EXPECT_NE(error_of([] { builtin_workload("resnet"); }).find("known: cosmoflow-mlperf, cosmoflow-mrt, deepcam, neuron-inverter"),
            std::string::npos);
}

// The MRT model pools after its first five convolutions while the input allows (min_size 8..128).
TEST(WorkloadOptions, SizeLeavesOutTheOpsItCannotAffordAndWidthScalesConvolutions) {
  EXPECT_EQ(count_kind(builtin_workload("cosmoflow-mrt"), OpKind::avg_pool), 5u);
  EXPECT_EQ(count_kind(builtin_workload("cosmoflow-mrt", {.size = 32}), OpKind::avg_pool), 3u);
  EXPECT_EQ(count_kind(builtin_workload("cosmoflow-mrt", {.size = 16}), OpKind::avg_pool), 2u);
  EXPECT_EQ(count_kind(builtin_workload("cosmoflow-mlperf", {.size = 16}), OpKind::conv), 3u);
  const auto half = builtin_workload("cosmoflow-mrt", {.size = 32, .width = 0.5});
  EXPECT_EQ(half.input_spatial, (std::vector<int64_t>{32, 32, 32}));
  EXPECT_EQ(op_named(half, "conv1").filters, 8);
  EXPECT_EQ(op_named(half, "fc1").filters, 2048);  // fully connected layers keep their width
  const auto dc = builtin_workload("deepcam", {.size = 128, .width = 0.125});
  EXPECT_EQ(dc.input_spatial, (std::vector<int64_t>{128, 192}));
  EXPECT_EQ(op_named(dc, "conv1").filters, 4);
  EXPECT_EQ(op_named(dc, "block3.skip").filters, 91);  // lround(728 / 8)
  EXPECT_EQ(op_named(dc, "last_deconv").filters, 3);   // the classes: fixed_filters
  EXPECT_NE(error_of([] { builtin_workload("deepcam", {.size = 0, .width = 0}); }).find("deepcam: width: 0 is out of range (above 0, at most 1024)"), std::string::npos);
  EXPECT_NE(error_of([] { builtin_workload("deepcam", {.size = 2'000'000'000}); }).find("deepcam: size: 2000000000 gives an input extent outside"),
            std::string::npos);
}

// A user's workload takes the plan's workload_options as the built-ins do.
TEST(WorkloadOptions, ApplyToAUsersWorkloadFile) {
  const auto dir = std::filesystem::temp_directory_path() / "mrplan-workload-options";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "net.yaml") << "name: net\ninput: {channels: 2, spatial: [64, 32]}\nops:\n"
                                     "  - {name: conv1, kind: conv, filters: 10, kernel: 3}\n"
                                     "  - {name: pool1, kind: max_pool, kernel: 2, stride: 2, min_size: 48}\n"
                                     "  - {name: head, kind: conv, filters: 3, kernel: 1, fixed_filters: true}\n";
  Plan p = builtin_plan("cosmoflow-baseline@summit");
  p.workload = (dir / "net.yaml").string();
  p.workload_options = {.size = 32, .width = 0.5};
  const auto spec = plan_network(p);
  EXPECT_EQ(spec.input_spatial, (std::vector<int64_t>{32, 16}));
  ASSERT_EQ(spec.ops.size(), 2u);
  EXPECT_EQ(spec.ops[0].filters, 5);
  EXPECT_EQ(spec.ops[1].filters, 3);
  EXPECT_EQ(error_of([] { workload_from_yaml_text("name: n\ninput: {channels: 1, spatial: [8]}\nops:\n  - {name: a, kind: flatten, min_size: -1}\n", "w.yaml"); }),
            "w.yaml: ops[0].min_size: must be >= 0 (0: always present)");
}
