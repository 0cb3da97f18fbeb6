#include <gtest/gtest.h>

#include <cmath>

#include "calibrate/straggler_prior.hpp"
#include "model/profile_parameters.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

const std::string kCode = "cosmoflow-mlperf with ddp";

std::pair<std::string, MachineProfile> fitted_at_two_counts(const std::string& file, double cv, double std_error,
                                                            const std::string& code = kCode) {
  MachineProfile p;
  p.compute.step_time_cv = cv;
  p.fitted.push_back({"compute.step_time_cv", cv, std_error, spread_source("calibrate records: " + file + ".small.json, " + file + ".large.json", code)});
  return {file, p};
}

Plan plan_of(const std::string& workload, CommFramework framework) {
  Plan p;
  p.workload = workload, p.framework = framework;
  return p;
}

}  // namespace

// The median of the other machines' fits, and a width that one machine unlike the others (a step
// that does not grow) does not blow up: the median absolute deviation of the logs.
TEST(StragglerPrior, MedianAndTheLogsMedianDeviation) {
  const auto prior = straggler_prior({fitted_at_two_counts("a.yaml", 0.18, 0.01), fitted_at_two_counts("b.yaml", 0.10, 0.01),
                                      fitted_at_two_counts("c.yaml", 0.0003, 0.0001)},
                                     kCode);
  EXPECT_DOUBLE_EQ(prior.value, 0.10);
  EXPECT_NEAR(prior.log_sd, 1.4826 * std::log(1.8), 1e-9);  // deviations: log 1.8, 0, log(333)
  EXPECT_EQ(prior.source, "the median of the step-time spreads of cosmoflow-mlperf with ddp fitted in a.yaml, b.yaml, c.yaml");
  EXPECT_TRUE(prior.left_out.empty());
}

// No narrower than the fits pin their own values.
TEST(StragglerPrior, NoNarrowerThanOneFit) {
  const auto one = straggler_prior({fitted_at_two_counts("a.yaml", 0.1, 0.03)}, kCode);
  EXPECT_DOUBLE_EQ(one.value, 0.1);
  EXPECT_NEAR(one.log_sd, 0.3, 1e-12);
  const auto alike = straggler_prior({fitted_at_two_counts("a.yaml", 0.1, 0.02), fitted_at_two_counts("b.yaml", 0.1, 0.04)}, kCode);
  EXPECT_NEAR(alike.log_sd, 0.3, 1e-12);
}

// A rank's jitter per step is its code's: another workload's or another allreduce library's spread
// is left out, with its reason; where none is left, the command is refused.
TEST(StragglerPrior, OnlyTheSameCodesSpreads) {
  const auto prior = straggler_prior({fitted_at_two_counts("a.yaml", 0.2, 0.02), fitted_at_two_counts("mx.yaml", 0.001, 0.01, "cosmoflow-mlperf with horovod"),
                                      fitted_at_two_counts("dc.yaml", 0.001, 0.01, "deepcam with ddp")},
                                     kCode);
  EXPECT_DOUBLE_EQ(prior.value, 0.2);
  ASSERT_EQ(prior.left_out.size(), 2u);
  EXPECT_EQ(prior.left_out[0], "mx.yaml: its step-time spread is cosmoflow-mlperf with horovod's, not cosmoflow-mlperf with ddp's");
  EXPECT_EQ(prior.left_out[1], "dc.yaml: its step-time spread is deepcam with ddp's, not cosmoflow-mlperf with ddp's");
  auto mixed = fitted_at_two_counts("mixed.yaml", 0.1, 0.01);
  mixed.second.fitted.back().source = spread_source("calibrate records: x.json, y.json", std::nullopt);
  const std::string error = error_of([&] { straggler_prior({mixed}, kCode); });
  EXPECT_NE(error.find("mixed.yaml: --straggler-from: no profile given has a step-time spread of cosmoflow-mlperf with ddp: mixed.yaml: its "
                       "step-time spread is of runs of several codes, not cosmoflow-mlperf with ddp's"),
            std::string::npos)
      << error;
}

// The code of a fit's runs: their workload (a file by its stem) and allreduce library, where all share them.
TEST(StragglerPrior, TheCodeOfTheRuns) {
  EXPECT_EQ(code_of({plan_of("deepcam", CommFramework::ddp), plan_of("/home/u/deepcam.yaml", CommFramework::ddp)}), "deepcam with ddp");
  EXPECT_EQ(code_of({plan_of("cosmoflow-mlperf", CommFramework::horovod)}), "cosmoflow-mlperf with horovod");
  EXPECT_EQ(code_of({plan_of("deepcam", CommFramework::ddp), plan_of("deepcam", CommFramework::horovod)}), std::nullopt);
  EXPECT_EQ(code_of({plan_of("deepcam", CommFramework::ddp), plan_of("cosmoflow-mlperf", CommFramework::ddp)}), std::nullopt);
}

// A profile whose spread no fit at two GPU counts gave is refused with its file: a value held near
// another machine's at one count, or typed in, is not a measurement.
TEST(StragglerPrior, RefusesWhatNoTwoCountFitGave) {
  const std::string expected = "no step-time spread fitted by calibrate records";
  MachineProfile typed;
  typed.compute.step_time_cv = 0.1;
  EXPECT_NE(error_of([&] { straggler_prior({{"typed.yaml", typed}}, kCode); }).find("typed.yaml: fitted: " + expected), std::string::npos);
  auto [file, held] = fitted_at_two_counts("held.yaml", 0.1, 0.01);
  held.fitted.back().source = "calibrate records at one GPU count, near the median of a.yaml: x.json";
  EXPECT_NE(error_of([&] { straggler_prior({fitted_at_two_counts("a.yaml", 0.1, 0.01), {file, held}}, kCode); }).find("held.yaml: fitted: " + expected),
            std::string::npos);
  EXPECT_NE(error_of([] { straggler_prior({}, kCode); }).find("give at least one fitted profile"), std::string::npos);
}
