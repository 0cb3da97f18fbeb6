// `run --capture` refuses, naming the stage and key, the plans a captured step cannot run
// (exec/run_context: check_capture_plan); on this CPU build, --capture itself (tests/cli/cli_test.sh).
#include <gtest/gtest.h>

#include "exec/captured_step.hpp"
#include "exec/run_context.hpp"
#include "model/errors.hpp"
#include "model/plan_yaml.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/tiny_plan.hpp"

using namespace mrplan;

namespace {

Plan tiny(const std::string& stages, const std::string& method = "mrt") {
  return plan_from_yaml_text(mrplan::testing::tiny_plan_yaml({.method = method}, stages), "tiny.yaml");
}

}  // namespace

TEST(CaptureChecks, OneRankAdamPlansPassAndOthersAreNamed) {
  const std::string coarse = "  - {name: coarse, resolution: 2, gpus: 1, local_batch: 8, stop: {switch_rule: {patience: 1, epsilon: 10}, max_epochs: 5}}\n";
  EXPECT_NO_THROW(check_capture_plan(tiny(coarse + "  - {name: dense, resolution: 1, gpus: 1, local_batch: 8, stop: {epochs: 3}}\n")));
  EXPECT_EQ(mrplan::testing::error_of([&] {
              check_capture_plan(tiny(coarse + "  - {name: dense, resolution: 1, gpus: 4, local_batch: 8, stop: {epochs: 3}}\n"));
            }),
            "tiny.yaml: gpus: stage 'dense' trains on 4 GPUs: --capture needs one rank a model");
  EXPECT_EQ(mrplan::testing::error_of([&] {
              check_capture_plan(
                  tiny(coarse + "  - {name: dense, resolution: 1, gpus: 1, local_batch: 8, optimizer: sgd, stop: {epochs: 3}}\n"));
            }),
            "tiny.yaml: optimizer: stage 'dense' uses sgd: --capture runs Adam only (its state on the device, exec/fused_adam)");
  EXPECT_FALSE(captured_steps_compiled());  // Debian's CPU LibTorch: the stand-ins refuse
}
