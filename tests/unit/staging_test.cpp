#include <gtest/gtest.h>

#include "calibrate/calibrated_builtins.hpp"
#include "calibrate/staging_fit.hpp"
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
  m.io.host_memory = {20e9, 0, host_GB * 1e9 / 2, 0};
  m.io.nvme = {5e9, 0, nvme_TB * 1e12, 0};
  m.io.pfs = {10e9, 20e9, 0, 0};
  m.gpu_memory_bytes = 40e9;
  m.compute.mem_bandwidth_Bps = 1000e9, m.compute.mem_efficiency = 0.8;
  return m;
}

IoJob job(double dataset_GB, int nodes, Staging s) {
  IoJob j;
  j.dataset_bytes = dataset_GB * 1e9;
  j.nodes = nodes;
  j.staging = s;
  return j;
}

std::pair<TierKind, TierKind> epochs(const MachineProfile& m, const IoJob& j) {
  const auto p = place_dataset(m, j);
  return {p.first_epoch, p.later_epochs};
}

double staged_s(const MachineProfile& m, const IoJob& j) { return staging_s(m, j, place_dataset(m, j)); }

const CodecRates kLut{4, 1e9, 8e9, 2};

IoJob on_device(double dataset_GB, int nodes, Staging s, double room_GB) {
  IoJob j = job(dataset_GB, nodes, s);
  j.ranks_on_node = 4, j.device_room_bytes = room_GB * 1e9;
  j.codec = &kLut, j.decoder = DecoderPlace::device;
  return j;
}

}  // namespace

// A node's share is dataset / nodes; host memory holds half of 256 GB, NVMe 1 TB.
TEST(Staging, HostMemoryWhereTheShareFitsElseNvmeElseNothing) {
  const auto m = node(256, 1);
  using enum TierKind;
  EXPECT_EQ(place_dataset(m, job(400, 4, Staging::host_memory)).staged, host_memory);  // 100 GB of 128
  EXPECT_EQ(epochs(m, job(400, 4, Staging::host_memory)), std::pair(host_memory, host_memory));
  EXPECT_EQ(epochs(m, job(800, 4, Staging::host_memory)), std::pair(nvme, nvme));  // 200 GB: memory too small
  EXPECT_EQ(place_dataset(m, job(8000, 4, Staging::host_memory)).staged, std::nullopt);  // 2 TB fits nowhere: streamed
  EXPECT_EQ(epochs(m, job(8000, 4, Staging::host_memory)), std::pair(pfs, pfs));
  EXPECT_EQ(epochs(m, job(400, 4, Staging::none)), std::pair(pfs, host_memory));  // the page cache after the first pass
  EXPECT_EQ(epochs(m, job(400, 4, Staging::nvme)), std::pair(nvme, host_memory));  // staged to NVMe, page-cached there too
  // a node's share over the lesser of its link (10 GB/s) and its share of the aggregate (20/4 GB/s)
  EXPECT_DOUBLE_EQ(staged_s(m, job(400, 4, Staging::host_memory)), 100e9 / 5e9);
  EXPECT_DOUBLE_EQ(staged_s(m, job(400, 1, Staging::host_memory)), 400e9 / 10e9);  // to NVMe, at the node's link
  EXPECT_DOUBLE_EQ(staged_s(m, job(4000, 1, Staging::host_memory)), 0);            // 4 TB fits neither tier of one node
  EXPECT_DOUBLE_EQ(staged_s(m, job(400, 4, Staging::none)), 0);
  EXPECT_EQ(placement_text(place_dataset(m, job(400, 4, Staging::none))), "pfs>host");
  EXPECT_EQ(placement_text(place_dataset(m, job(400, 4, Staging::nvme))), "staged nvme>host");
  EXPECT_EQ(placement_text(place_dataset(m, job(400, 4, Staging::host_memory))), "staged host");
}

// A weak-scaling submission's instances read the file system at once: a node's share of the
// aggregate (20 GB/s) is over all their nodes, not the job's alone; fewer than the job's change
// nothing.
TEST(Staging, NodesReadingAtOnceShareTheAggregate) {
  const auto m = node(256, 1);
  IoJob j = job(400, 4, Staging::host_memory);
  j.filesystem_nodes = 40;
  EXPECT_DOUBLE_EQ(staged_s(m, j), 100e9 / (20e9 / 40));
  j.local_batch = 1, j.sample_bytes = 1e9, j.device_bytes = 1;
  EXPECT_NEAR(io_per_iteration(m, j, TierKind::pfs).read_s, 1e9 / 0.5e9, 1e-12);
  j.filesystem_nodes = 2;
  EXPECT_DOUBLE_EQ(staged_s(m, j), 100e9 / 5e9);
  // through the plan (sim/model_costs): Perlmutter's first epochs read the file system
  const auto& perlmutter = calibrated_builtin_profile("perlmutter");
  Plan p = builtin_plan("deepcam-mlperf@perlmutter", 2048);
  const double alone = simulate(p, perlmutter).totals.time_to_target_s;
  p.filesystem_nodes = 512;  // its own nodes
  EXPECT_DOUBLE_EQ(simulate(p, perlmutter).totals.time_to_target_s, alone);
  p.filesystem_nodes = 100000;  // the aggregate over them below a node's own rate
  EXPECT_GT(simulate(p, perlmutter).totals.time_to_target_s, alone);
}

// Device memory: 4 GPUs with 10 GB each left beside the model hold 40 GB of a node's share, read at
// 4 x 800 GB/s; encoded samples only, for a device decoder, and nothing crosses the host link.
TEST(Staging, TheNearestTierTheShareFitsFromDeviceMemoryOut) {
  const auto m = node(256, 1);
  using enum TierKind;
  EXPECT_EQ(place_dataset(m, on_device(120, 4, Staging::nearest, 10)).staged, device_memory);  // 30 GB of 40
  EXPECT_EQ(place_dataset(m, on_device(200, 4, Staging::nearest, 10)).staged, host_memory);    // 50 GB: GPUs too small
  EXPECT_EQ(place_dataset(m, on_device(200, 4, Staging::device_memory, 10)).staged, host_memory);
  EXPECT_EQ(place_dataset(m, on_device(2000, 4, Staging::nearest, 10)).staged, nvme);          // 500 GB
  EXPECT_EQ(place_dataset(m, on_device(120, 4, Staging::nearest, -1)).staged, host_memory);    // the model alone overfills
  IoJob host_decoded = on_device(120, 4, Staging::nearest, 10);
  host_decoded.decoder = DecoderPlace::host;  // the GPU would hold what only the host can decode
  EXPECT_EQ(place_dataset(m, host_decoded).staged, host_memory);
  EXPECT_DOUBLE_EQ(tier_of(m, on_device(120, 4, Staging::nearest, 10), device_memory).capacity_per_node_bytes, 40e9);
  IoJob j = on_device(120, 4, Staging::nearest, 10);
  j.sample_bytes = 16e6, j.local_batch = 8;
  const auto it = io_per_iteration(m, j, device_memory);
  EXPECT_DOUBLE_EQ(it.read_s, 8 * 16e6 / 4 / (4 * 800e9 / 4));
  EXPECT_DOUBLE_EQ(it.h2d_s, 0);
  EXPECT_DOUBLE_EQ(it.device_s, 8 * 16e6 / 8e9);
  EXPECT_GT(io_per_iteration(m, j, host_memory).h2d_s, 0);
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
  p.staging = Staging::nearest;
  EXPECT_EQ(plan_from_yaml_text(plan_to_yaml(p)).staging, Staging::nearest);
  p.staging = Staging::host_memory;
  // the plan's text with its io.staging key replaced by `io`, and what reading it refuses
  auto with_io = [&](const std::string& io) {
    auto yaml = plan_to_yaml(p);
    return yaml.replace(yaml.find("staging: host_memory"), 20, io);
  };
  auto error_with = [&](const std::string& io) { return error_of([&] { plan_from_yaml_text(with_io(io), "p.yaml"); }); };
  EXPECT_EQ(plan_from_yaml_text(with_io("staged_to_nvme: true")).staging, Staging::nvme);
  EXPECT_NE(error_with("staging: tape")
                .find("p.yaml: io.staging: unknown staging 'tape' (expected none, nvme, host_memory, device_memory or nearest)"),
            std::string::npos);
  p.staging_async = true;
  EXPECT_TRUE(plan_from_yaml_text(plan_to_yaml(p)).staging_async);
  p.staging_async = false;
  EXPECT_EQ(plan_to_yaml(p).find("staging_async"), std::string::npos);  // a plan's text (and hash) as before
  EXPECT_EQ(plan_to_yaml(p).find("staging_oversampling"), std::string::npos);
  p.staging_oversampling = 2;
  EXPECT_EQ(plan_from_yaml_text(plan_to_yaml(p)).staging_oversampling, 2);
  p.staging_oversampling = 1;
  EXPECT_NE(error_with("staging: host_memory, staging_oversampling: 0")
                .find("p.yaml: io.staging_oversampling: must be >= 1 (the shares a node stages), got 0"),
            std::string::npos);
  p.filesystem_nodes = 1280;
  EXPECT_EQ(plan_from_yaml_text(plan_to_yaml(p)).filesystem_nodes, 1280);
  p.filesystem_nodes = 0;
  EXPECT_EQ(plan_to_yaml(p).find("filesystem_nodes"), std::string::npos);  // a plan's text (and hash) as before
  EXPECT_NE(error_with("staging: host_memory, filesystem_nodes: -3").find("p.yaml: io.filesystem_nodes: must be >= 0"), std::string::npos);
  EXPECT_NE(error_with("staging: none, staging_async: true")
                .find("p.yaml: io.staging_async: true needs a tier to stage to"),
            std::string::npos);
  EXPECT_NE(error_with("staging: device_memory")
                .find("p.yaml: io.staging: 'device_memory' keeps encoded samples on the GPU for a device decoder"),
            std::string::npos);
}

// A copy beside the first epoch: no phase before it; the first epoch reads the file system at the
// staging tool's pace and waits for its fixed part, where the workload's own staging fitted them.
TEST(Staging, AnAsynchronousCopyIsPaidByTheFirstEpoch) {
  auto m = node(256, 1);
  m.io.staging_node_Bps = 2e9, m.io.staging_fixed_s = 7;
  IoJob j = job(400, 4, Staging::host_memory);
  j.local_batch = 1, j.sample_bytes = 1e9, j.device_bytes = 1, j.workload = "deepcam";
  const auto sync = place_dataset(m, j);
  EXPECT_NEAR(staging_s(m, j, sync), 7 + 100e9 / 2e9, 1e-9);  // 100 GB a node at 2 GB/s
  EXPECT_EQ(staging_start_s(m, j, sync), 0);
  j.staging_oversampling = 2;  // two shares a node: twice the bytes, the same fixed part
  EXPECT_NEAR(staging_s(m, j, sync), 7 + 200e9 / 2e9, 1e-9);
  j.staging_oversampling = 1;
  j.staging_async = true;
  const auto async = place_dataset(m, j);
  EXPECT_TRUE(async.async);
  EXPECT_EQ(std::pair(async.first_epoch, async.later_epochs), std::pair(TierKind::pfs, TierKind::host_memory));
  EXPECT_EQ(placement_text(async), "async pfs>host");
  EXPECT_EQ(staging_s(m, j, async), 0);
  // not the workload's tool: the file system's node rate (10 GB/s), no fixed part
  EXPECT_EQ(staging_start_s(m, j, async), 0);
  EXPECT_NEAR(io_per_iteration(m, j, TierKind::pfs).read_s, 1e9 / 5e9, 1e-12);  // 20 GB/s shared by 4 nodes
  m.io.staging_workloads = {"deepcam"};
  EXPECT_EQ(staging_start_s(m, j, async), 7);
  EXPECT_NEAR(io_per_iteration(m, j, TierKind::pfs).read_s, 1e9 / 2e9, 1e-12);
  EXPECT_NEAR(io_per_iteration(m, j, TierKind::host_memory).read_s, 1e9 / 20e9, 1e-12);  // the later epochs: as staged
  // streamed where no tier holds the share: the loader's reads
  j = job(8000, 4, Staging::host_memory), j.staging_async = true;
  EXPECT_FALSE(place_dataset(m, j).async);
}

TEST(Staging, ToNvmeOnAMachineWithoutIsRefused) {
  MachineProfile m = calibrated_builtin_profile("summit");
  Plan p = builtin_plan("cosmoflow-mrt@summit");
  p.staging = Staging::nvme;
  p.source_file = "p.yaml";
  EXPECT_GT(simulate(p, m).totals.time_to_target_s, 0);
  m.io.nvme.capacity_per_node_bytes = 0;
  EXPECT_NE(error_of([&] { simulate(p, m); }).find("p.yaml: io.staging: 'nvme', but machine 'summit' has no node NVMe"), std::string::npos);
}

// calibrate/staging_fit: the staging tool's fixed part and node rate back from times made with them
TEST(StagingFit, TwoNodeCountsGiveTheFixedPartAndTheRateOneGivesTheRateAlone) {
  MachineProfile m = calibrated_builtin_profile("perlmutter");
  m.io.pfs.aggregate_bandwidth_Bps = 0;  // node-bound, as the fit's shares assume
  m.io.staging_fixed_s = 0, m.io.staging_node_Bps = 0;
  const Plan on128 = builtin_plan("cosmoflow-mlperf@perlmutter", 512), on256 = builtin_plan("cosmoflow-mlperf@perlmutter", 1024);
  MachineProfile truth = m;
  truth.io.staging_fixed_s = 40, truth.io.staging_node_Bps = 1.5e9;
  const double t128 = prepare(on128, truth).staging_s, t256 = prepare(on256, truth).staging_s;
  ASSERT_GT(t128, t256);
  const auto fit = fit_staging(m, {{"a", &on128, t128}, {"b", &on256, t256}, {"c", &on256, t256}}, "test");
  ASSERT_EQ(fit.fitted.size(), 2u);
  EXPECT_EQ(fit.fitted[0].key, "io.staging_node_GBps");
  EXPECT_NEAR(fit.fitted[0].value, 1.5, 1e-6);
  EXPECT_EQ(fit.fitted[1].key, "io.staging_fixed_s");
  EXPECT_NEAR(fit.fitted[1].value, 40, 1e-6);
  EXPECT_NEAR(fit.after_s[0], t128, 1e-6);
  EXPECT_TRUE(fit.notes.empty());
  // the fixed part two shares fit is the code's: its own source where one is given
  const auto tagged = fit_staging(m, {{"a", &on128, t128}, {"b", &on256, t256}}, "test", std::nullopt, "test; of a code");
  EXPECT_EQ(tagged.fitted[0].source, "test");
  EXPECT_EQ(tagged.fitted[1].source, "test; of a code");

  const auto one = fit_staging(m, {{"a", &on128, t128}, {"b", &on128, t128}}, "test");
  ASSERT_EQ(one.fitted.size(), 1u);  // the rate through no fixed part: the fixed 40 s spread over the share
  EXPECT_NEAR(one.fitted[0].value, (t128 - 40) * 1.5 / t128, 1e-6);
  ASSERT_EQ(one.notes.size(), 1u);
  EXPECT_NE(one.notes[0].find("io.staging_fixed_s"), std::string::npos);
}

// One node count with other machines' fixed part (code_priors): the rate through it, the fixed part
// kept with the prior's source, and its spread carried into the rate's (they trade off: a negative
// covariance). A prior longer than the runs' own staging is not used, and said.
TEST(StagingFit, OneNodeCountTakesTheFixedPartFromThePrior) {
  MachineProfile m = calibrated_builtin_profile("perlmutter");
  m.io.pfs.aggregate_bandwidth_Bps = 0;
  m.io.staging_fixed_s = 0, m.io.staging_node_Bps = 0;
  const Plan on128 = builtin_plan("cosmoflow-mlperf@perlmutter", 512);
  MachineProfile truth = m;
  truth.io.staging_fixed_s = 40, truth.io.staging_node_Bps = 1.5e9;
  const double t128 = prepare(on128, truth).staging_s;
  CodePrior fixed{"io.staging_fixed_s", 40, 0, 5, true, "the median of two"};
  const auto fit = fit_staging(m, {{"a", &on128, t128}, {"b", &on128, t128}}, "test", StagingPrior{fixed, "held near two"});
  ASSERT_EQ(fit.fitted.size(), 2u);
  EXPECT_NEAR(fit.fitted[0].value, 1.5, 1e-6);
  EXPECT_GT(fit.fitted[0].std_error, 0);  // the runs agree; the prior's 5 s does not
  EXPECT_EQ(fit.fitted[1].key, "io.staging_fixed_s");
  EXPECT_DOUBLE_EQ(fit.fitted[1].value, 40);
  EXPECT_DOUBLE_EQ(fit.fitted[1].std_error, 5);
  EXPECT_EQ(fit.fitted[1].source, "held near two");
  ASSERT_EQ(fit.covariance.size(), 4u);
  EXPECT_GT(fit.covariance[1], 0);  // a longer fixed part leaves a faster rate
  EXPECT_TRUE(fit.notes.empty());

  fixed.value = 2 * t128;
  const auto contradicted = fit_staging(m, {{"a", &on128, t128}}, "test", StagingPrior{fixed, "held near two"});
  ASSERT_EQ(contradicted.fitted.size(), 1u);
  ASSERT_FALSE(contradicted.notes.empty());
  EXPECT_NE(contradicted.notes[0].find("is not held near the median of two"), std::string::npos) << contradicted.notes[0];
}

TEST(StagingFit, ARunThatLoggedStagingForAPlanThatStagesNothingIsNamed) {
  const MachineProfile& m = calibrated_builtin_profile("perlmutter");
  const Plan plain = builtin_plan("deepcam-mlperf@perlmutter", 256);
  EXPECT_NE(error_of([&] { fit_staging(m, {{"runs/result_1.json", &plain, 30}}, "test"); }).find("runs/result_1.json"), std::string::npos);
}
