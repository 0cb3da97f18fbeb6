// Inputs that used to be read as something else: wrapped integers, octal, duplicate keys, values
// out of range, runaway sweeps, ambiguous MLPerf log lines. Each is refused with a message naming
// the key and what was expected.
#include <gtest/gtest.h>

#include <regex>

#include "calibrate/mllog_events.hpp"
#include "calibrate/mllog_ingest.hpp"
#include "calibrate/calibrated_builtins.hpp"
#include "model/builtin_workloads.hpp"
#include "model/plan_diff.hpp"
#include "model/plan_yaml.hpp"
#include "model/profile_yaml.hpp"
#include "model/workload_yaml.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/sweep.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/plan_edit.hpp"

using namespace mrplan;
using mrplan::testing::error_of;
using mrplan::testing::plan_error;
using mrplan::testing::plan_text;
using mrplan::testing::plan_with;

namespace {

std::string profile_error(const std::string& from, const std::string& to) {
  auto t = profile_to_yaml(resolve_profile("summit"));
  const auto at = t.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  t.replace(at, from.size(), to);
  return error_of([&] { profile_from_yaml_text(t, "m.yaml"); });
}
std::string workload_error(const std::string& from, const std::string& to) {
  auto t = workload_to_yaml(builtin_workload("cosmoflow-mrt", {}));
  t = std::regex_replace(t, std::regex(from), to, std::regex_constants::format_first_only);
  return error_of([&] { workload_from_yaml_text(t, "w.yaml"); });
}

}  // namespace

TEST(StrictInputs, IntegersAreNeverNarrowedOrReadAsOctal) {
  EXPECT_EQ(plan_error("gpus: 32", "gpus: 4294967328"), "p.yaml: stages[0].gpus: 4294967328 is out of range (at most 2147483647)");
  EXPECT_EQ(plan_error("max_epochs: 300", "max_epochs: 4294967297"),
            "p.yaml: stages[0].stop.max_epochs: 4294967297 is out of range (at most 2147483647)");
  EXPECT_EQ(plan_error("gpus: 32", "gpus: 040"), "p.yaml: stages[0].gpus: expected a decimal integer (no leading zeros, no fraction), got '040'");
  EXPECT_EQ(plan_error("gpus: 32", "gpus: 0x20"), "p.yaml: stages[0].gpus: expected a decimal integer (no leading zeros, no fraction), got '0x20'");
  EXPECT_EQ(plan_error("gpus: 32", "gpus: 99999999999999999999"), "p.yaml: stages[0].gpus: '99999999999999999999' is out of range for an integer");
  EXPECT_EQ(plan_error("gpus: 32", "gpus: -3"), "p.yaml: stages[0].gpus: must be >= 1, got -3");
}

TEST(StrictInputs, AKeyGivenTwiceIsRefused) {
  EXPECT_EQ(plan_error("    gpus: 32\n", "    gpus: 32\n    gpus: 64\n"), "p.yaml: stages[0].gpus: given twice in the same map");
  EXPECT_EQ(plan_error("method: mrt", "method: mrt\nmethod: baseline"), "p.yaml: method: given twice in the same map");
}

TEST(StrictInputs, PlanValuesOutOfRange) {
  EXPECT_EQ(plan_error("value: 0.0025", "value: -0.1"),
            "p.yaml: target.value: -0.1 is below 0: a minimised val_mse can never reach it");
  EXPECT_EQ(plan_error("validation_samples: 1024", "validation_samples: -5"), "p.yaml: dataset.validation_samples: must be >= 0");
  EXPECT_EQ(plan_error("method: mrt", "method: mrt\ncheckpoint_every: -1"), "p.yaml: checkpoint_every: must be >= 0 (0: at stage ends only)");
  EXPECT_EQ(plan_error("bucket_mb: 25", "bucket_mb: 25, batchnorm_group: 0"),
            "p.yaml: comm.batchnorm_group: must be >= 1 (1: each rank its own batch-norm statistics)");
  EXPECT_EQ(plan_error("framework: horovod", "framework: tensorflow"),
            "p.yaml: comm.framework: unknown framework 'tensorflow' (expected ddp or horovod)");
  EXPECT_EQ(plan_error("h2d_overlapped: true", "h2d_overlapped: true, persistent_workers: sometimes"),
            "p.yaml: io.persistent_workers: expected true or false");
}

TEST(StrictInputs, ProfileValuesOutOfRange) {
  EXPECT_EQ(profile_error("capacity_per_node_GB: 1600", "capacity_per_node_GB: -3"),
            "m.yaml: io.tiers.nvme.capacity_per_node_GB: expected a number >= 0, got -3");
  EXPECT_EQ(profile_error("host_to_device_GBps", "host_memcpy_GBps: 20\n  host_to_device_GBps"),
            "m.yaml: io.host_memcpy_GBps: the storage tiers now have their own list: move it to "
            "io.tiers.host_memory.per_node_bandwidth_GBps (docs/profile-format.md)");
  EXPECT_EQ(profile_error("prefetch_depth: 2", "prefetch_depth: -2"), "m.yaml: io.prefetch_depth: must be >= 0, got -2");
  EXPECT_EQ(profile_error("transfer_efficiency: 0.41010919", "transfer_efficiency: -3"),
            "m.yaml: convergence.cosmoflow-mrt.transfer_efficiency: expected a number >= -1, got -3");
  EXPECT_EQ(profile_error("prefetch_depth: 2", "prefetch_depth: 2\n  prefetch_depth: 3"), "m.yaml: io.prefetch_depth: given twice in the same map");
  EXPECT_EQ(profile_error("collectives: nccl", "collectives: gloo"), "m.yaml: comm.collectives: unknown 'gloo' (expected alpha_beta or nccl)");
}

TEST(StrictInputs, WorkloadNonsense) {
  EXPECT_EQ(workload_error("bytes_per_element: 2", "bytes_per_element: 0"), "w.yaml: input.bytes_per_element: expected 1, 2, 4 or 8, got 0");
  EXPECT_EQ(workload_error("function: relu", "function: swishy"),
            "w.yaml: ops[3].function: unknown activation 'swishy' (expected relu, leaky_relu or tanh)");
  EXPECT_EQ(workload_error("ops:[^]*", "ops: []\n"), "w.yaml: ops: a network needs at least one op");
}

TEST(StrictInputs, ASweepAxisIsBounded) {
  EXPECT_EQ(error_of([] { parse_range("1:2000000000:1", "--switch"); }),
            "command line: --switch: '1:2000000000:1' gives 2000000000 values (at most 100000): use a larger STEP");
  EXPECT_EQ(parse_range("1:100000:1", "--switch").size(), 100000u);
}

TEST(StrictInputs, AmbiguousMlperfLogLinesAreRefusedWithTheLine) {
  const std::string head = ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1, \"event_type\": \"POINT_IN_TIME\", ";
  EXPECT_EQ(error_of([&] { parse_mllog_events(head + "\"key\": \"a\", \"key\": \"b\", \"value\": 1}\n", "r.txt"); }),
            "r.txt: line 1: the key 'key' appears twice in one object");
  EXPECT_EQ(error_of([&] { parse_mllog_events(head + "\"key\": \"epoch_start\", \"value\": null, \"metadata\": {\"epoch_num\": 1e20}}\n", "r.txt"); }),
            "r.txt: line 1: metadata.epoch_num is 1e+20: expected a whole epoch number from 0 to 1e9");
  EXPECT_EQ(error_of([&] { parse_mllog_events(head + "\"key\": 7, \"value\": 1}\n", "r.txt"); }),
            "r.txt: line 1: an :::MLLOG line needs a string 'key' and a number 'time_ms'");
}

TEST(PlanDiff, NamesEveryChangedFieldAndForceCoversPrefixes) {
  const auto was = plan_text();
  auto now = plan_with("learning_rate: 0.002\n    stop: {target", "learning_rate: 0.02\n    stop: {target");
  const auto changes = plan_changes(was, now);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].path, "stages[1].learning_rate");
  EXPECT_EQ(changes[0].was, "0.002");
  EXPECT_EQ(changes[0].now, "0.02");
  EXPECT_TRUE(changes_not_allowed(changes, {"stages[1]"}).empty());
  EXPECT_TRUE(changes_not_allowed(changes, {"stages[1].learning_rate"}).empty());
  EXPECT_EQ(changes_not_allowed(changes, {"stages[1].learning"}).size(), 1u);  // a prefix of a name is not the field
  EXPECT_EQ(changes_not_allowed(changes, {"stages[0]"}).size(), 1u);
  EXPECT_TRUE(plan_changes(was, was).empty());
}
