#include <gtest/gtest.h>

#include "calibrate/paper_calibration.hpp"
#include "model/io_cost.hpp"
#include "model/plan_yaml.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/simulate.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

MachineProfile node(double host_GB, double nvme_TB) {
  MachineProfile m;
  m.host_memory_bytes = host_GB * 1e9;
  m.io.page_cache_fraction = 0.5;
  m.io.nvme_capacity_bytes = nvme_TB * 1e12;
  m.io.nvme_bandwidth_Bps = 5e9;
  m.io.pfs.per_node_bandwidth_Bps = 10e9;
  m.io.pfs.aggregate_bandwidth_Bps = 20e9;
  return m;
}

IoJob job(double dataset_GB, int nodes, Staging s) {
  IoJob j;
  j.dataset_bytes = dataset_GB * 1e9;
  j.nodes = nodes;
  j.staging = s;
  return j;
}

}  // namespace

TEST(Staging, HostMemoryWhereTheShareFitsElseNvmeElseNothing) {
  const auto m = node(256, 1);
  EXPECT_EQ(tier_for_epoch(m, job(400, 4, Staging::host_memory), 0), IoTierKind::host_cache);  // 100 GB of 128 usable
  EXPECT_EQ(tier_for_epoch(m, job(800, 4, Staging::host_memory), 0), IoTierKind::nvme);        // 200 GB: memory too small
  EXPECT_EQ(tier_for_epoch(m, job(8000, 4, Staging::host_memory), 3), IoTierKind::pfs);        // 2 TB fits nowhere
  EXPECT_EQ(tier_for_epoch(m, job(400, 4, Staging::none), 0), IoTierKind::pfs);
  EXPECT_EQ(tier_for_epoch(m, job(400, 4, Staging::none), 1), IoTierKind::host_cache);
  // a node's share over the lesser of its link (10 GB/s) and its share of the aggregate (20/4 GB/s)
  EXPECT_DOUBLE_EQ(staging_s(m, job(400, 4, Staging::host_memory)), 100e9 / 5e9);
  EXPECT_DOUBLE_EQ(staging_s(m, job(400, 1, Staging::host_memory)), 400e9 / 10e9);  // to NVMe, at the node's link
  EXPECT_DOUBLE_EQ(staging_s(m, job(4000, 1, Staging::host_memory)), 0);            // 4 TB fits neither tier of one node
  EXPECT_DOUBLE_EQ(staging_s(m, job(400, 4, Staging::none)), 0);
}

TEST(Staging, ItsTimeIsPartOfTheTimeToTarget) {
  const auto& m = calibrated_builtin_profile("perlmutter");
  Plan p = builtin_plan("deepcam-mlperf@perlmutter", 256);
  const Record plain = simulate(p, m);
  p.staging = Staging::host_memory;
  const Record staged = simulate(p, m);
  ASSERT_TRUE(staged.staging_s.has_value());
  EXPECT_FALSE(plain.staging_s.has_value());
  double stages_s = 0;
  for (const auto& s : staged.stages) stages_s += s.time_s;
  EXPECT_NEAR(staged.totals.time_to_target_s, stages_s + *staged.staging_s, 1e-9);
  const auto pp = prepare(p, m);
  EXPECT_NEAR(totals(pp, model_epochs(pp)).time_s, staged.totals.time_to_target_s, 1e-6 * staged.totals.time_to_target_s);
}

TEST(Staging, PlanYamlSaysWhereAndReadsTheOlderKey) {
  Plan p = builtin_plan("cosmoflow-mlperf@perlmutter", 128);
  p.staging = Staging::host_memory;
  EXPECT_EQ(plan_from_yaml_text(plan_to_yaml(p)).staging, Staging::host_memory);
  auto yaml = plan_to_yaml(p);
  yaml.replace(yaml.find("staging: host_memory"), 20, "staged_to_nvme: true");
  EXPECT_EQ(plan_from_yaml_text(yaml).staging, Staging::nvme);
  yaml = plan_to_yaml(p);
  yaml.replace(yaml.find("staging: host_memory"), 20, "staging: tape");
  EXPECT_NE(error_of([&] {
              plan_from_yaml_text(yaml, "p.yaml");
            }).find("p.yaml: io.staging: unknown staging 'tape' (expected none, nvme or host_memory)"),
            std::string::npos);
}

TEST(Staging, ToNvmeOnAMachineWithoutIsRefused) {
  MachineProfile m = calibrated_builtin_profile("summit");
  Plan p = builtin_plan("cosmoflow-mrt@summit");
  p.staging = Staging::nvme;
  p.source_file = "p.yaml";
  EXPECT_GT(simulate(p, m).totals.time_to_target_s, 0);
  m.io.nvme_capacity_bytes = 0;
  EXPECT_NE(error_of([&] { simulate(p, m); }).find("p.yaml: io.staging: 'nvme', but machine 'summit' has no node NVMe"), std::string::npos);
}
