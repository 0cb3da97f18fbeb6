#include <gtest/gtest.h>

#include <cmath>

#include "calibrate/code_priors.hpp"
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
  p.fitted.push_back({"compute.step_time_cv", cv, std_error, code_source("calibrate records: " + file + ".small.json, " + file + ".large.json", code)});
  return {file, p};
}

Plan plan_of(const std::string& workload, CommFramework framework) {
  Plan p;
  p.workload = workload, p.framework = framework;
  return p;
}

// The spread of `p`: the one prior a profile of spreads gives.
CodePrior spread(const CodePriors& p) {
  EXPECT_EQ(p.priors.size(), 1u);
  return *p.of("compute.step_time_cv");
}

}  // namespace

// The median of the other machines' fits, and a width that one machine unlike the others (a step
// that does not grow) does not blow up: the median absolute deviation of the logs.
TEST(CodePriors, MedianAndTheLogsMedianDeviation) {
  const auto priors = code_priors({fitted_at_two_counts("a.yaml", 0.18, 0.01), fitted_at_two_counts("b.yaml", 0.10, 0.01),
                                   fitted_at_two_counts("c.yaml", 0.0003, 0.0001)},
                                  kCode);
  const auto prior = spread(priors);
  EXPECT_DOUBLE_EQ(prior.value, 0.10);
  EXPECT_NEAR(prior.log_sd, 1.4826 * std::log(1.8), 1e-9);  // deviations: log 1.8, 0, log(333)
  EXPECT_EQ(prior.source, "the median of the step-time spreads of cosmoflow-mlperf with ddp fitted in a.yaml, b.yaml, c.yaml");
  EXPECT_TRUE(priors.left_out.empty());
  EXPECT_FALSE(prior.additive);  // each fit pins its value: machines differ by factors
}

// Fits whose standard errors pass their values do not tell them from 0 (NVIDIA's DeepCAM steps, which
// do not grow with the ranks): their prior is read in the key's unit, where a factor's would put 10x
// one of them at one sigma.
TEST(CodePriors, FitsThatDoNotExcludeZeroMakeAnAdditivePrior) {
  const auto prior =
      spread(code_priors({fitted_at_two_counts("a.yaml", 0.001, 0.0023), fitted_at_two_counts("b.yaml", 0.001, 0.0025)}, kCode));
  EXPECT_TRUE(prior.additive);
  EXPECT_DOUBLE_EQ(prior.value, 0.001);
  EXPECT_DOUBLE_EQ(prior.sd, 0.0024);  // the fits' median standard error: their values agree
}

// No narrower than the fits pin their own values; one machine says nothing of how machines differ
// (the width of a value with no prior: a factor of 10).
TEST(CodePriors, NoNarrowerThanOneFit) {
  const auto one = spread(code_priors({fitted_at_two_counts("a.yaml", 0.1, 0.03)}, kCode));
  EXPECT_DOUBLE_EQ(one.value, 0.1);
  EXPECT_NEAR(one.log_sd, std::log(10.0), 1e-12);
  const auto alike = spread(code_priors({fitted_at_two_counts("a.yaml", 0.1, 0.02), fitted_at_two_counts("b.yaml", 0.1, 0.04)}, kCode));
  EXPECT_NEAR(alike.log_sd, 0.3, 1e-12);
}

// A rank's jitter per step is its code's: another workload's or another allreduce library's spread
// is left out, with its reason; where none is left, the command is refused.
TEST(CodePriors, OnlyTheSameCodesFits) {
  const auto priors = code_priors({fitted_at_two_counts("a.yaml", 0.2, 0.02), fitted_at_two_counts("mx.yaml", 0.001, 0.01, "cosmoflow-mlperf with horovod"),
                                   fitted_at_two_counts("dc.yaml", 0.001, 0.01, "deepcam with ddp")},
                                  kCode);
  EXPECT_DOUBLE_EQ(spread(priors).value, 0.2);
  ASSERT_EQ(priors.left_out.size(), 2u);
  EXPECT_EQ(priors.left_out[0], "mx.yaml: its fits are cosmoflow-mlperf with horovod's, not cosmoflow-mlperf with ddp's");
  EXPECT_EQ(priors.left_out[1], "dc.yaml: its fits are deepcam with ddp's, not cosmoflow-mlperf with ddp's");
  auto mixed = fitted_at_two_counts("mixed.yaml", 0.1, 0.01);
  mixed.second.fitted.back().source = code_source("calibrate records: x.json, y.json", std::nullopt);
  const std::string error = error_of([&] { code_priors({mixed}, kCode); });
  EXPECT_NE(error.find("mixed.yaml: --priors-from: no profile given has fits of cosmoflow-mlperf with ddp at two GPU counts: mixed.yaml: its "
                       "fits are of runs of several codes, not cosmoflow-mlperf with ddp's"),
            std::string::npos)
      << error;
}

// The code of a fit's runs: their workload (a file by its stem) and allreduce library, where all share them.
TEST(CodePriors, TheCodeOfTheRuns) {
  EXPECT_EQ(code_of({plan_of("deepcam", CommFramework::ddp), plan_of("/home/u/deepcam.yaml", CommFramework::ddp)}), "deepcam with ddp");
  EXPECT_EQ(code_of({plan_of("cosmoflow-mlperf", CommFramework::horovod)}), "cosmoflow-mlperf with horovod");
  EXPECT_EQ(code_of({plan_of("deepcam", CommFramework::ddp), plan_of("deepcam", CommFramework::horovod)}), std::nullopt);
  EXPECT_EQ(code_of({plan_of("deepcam", CommFramework::ddp), plan_of("cosmoflow-mlperf", CommFramework::ddp)}), std::nullopt);
}

// A profile whose spread no fit at two GPU counts gave is refused with its file: a value held near
// another machine's at one count, or typed in, is not a measurement.
TEST(CodePriors, RefusesWhatNoTwoCountFitGave) {
  const std::string expected = "no step-time spread, warm-up, validation pass's or staging's fixed part fitted by calibrate records";
  MachineProfile typed;
  typed.compute.step_time_cv = 0.1;
  EXPECT_NE(error_of([&] { code_priors({{"typed.yaml", typed}}, kCode); }).find("typed.yaml: fitted: " + expected), std::string::npos);
  auto [file, held] = fitted_at_two_counts("held.yaml", 0.1, 0.01);
  held.fitted.back().source = "calibrate records at one GPU count, near the median of a.yaml: x.json";
  EXPECT_NE(error_of([&] { code_priors({fitted_at_two_counts("a.yaml", 0.1, 0.01), {file, held}}, kCode); }).find("held.yaml: fitted: " + expected),
            std::string::npos);
  EXPECT_NE(error_of([] { code_priors({}, kCode); }).find("give at least one fitted profile"), std::string::npos);
}

// Each parameter one GPU count cannot fit gets its own prior from the profiles that fitted it:
// staging's fixed part in seconds too, where a fit at 0 s is a value (a staging tool that starts at once).
TEST(CodePriors, EachParameterFromTheProfilesThatFittedIt) {
  auto a = fitted_at_two_counts("a.yaml", 0.1, 0.01), b = fitted_at_two_counts("b.yaml", 0.2, 0.01);
  const std::string two = code_source("calibrate records: x.json, y.json", kCode);
  a.second.fitted.push_back({"io.staging_fixed_s", 40, 2, two});
  b.second.fitted.push_back({"io.staging_fixed_s", 0, 4, two});
  b.second.fitted.push_back({"compute.eval_pass_ms", 100, 10, two});
  const auto priors = code_priors({a, b}, kCode);
  ASSERT_EQ(priors.priors.size(), 3u);
  const CodePrior* fixed = priors.of("io.staging_fixed_s");
  ASSERT_NE(fixed, nullptr);
  EXPECT_DOUBLE_EQ(fixed->value, 20);                // the median of 40 and 0
  EXPECT_NEAR(fixed->sd, 1.4826 * 20, 1e-9);         // their deviations from it, wider than the fits' 2-4 s
  EXPECT_EQ(fixed->source, "the median of the staging's fixed parts of cosmoflow-mlperf with ddp fitted in a.yaml, b.yaml");
  const CodePrior* pass = priors.of("compute.eval_pass_ms");
  ASSERT_NE(pass, nullptr);
  EXPECT_DOUBLE_EQ(pass->value, 100);
  EXPECT_NEAR(pass->log_sd, std::log(10.0), 1e-12);  // one machine's: as wide as no prior
  EXPECT_EQ(priors.of("node_sharing.step_time_cv"), priors.of("compute.step_time_cv"));
}

// A workload's first-epoch warm-up is its code's: its prior keeps the workload's key and is read in
// seconds, where a fit may end near 0 (a code that warms up at once).
TEST(CodePriors, AWarmUpByItsWorkloadsKey) {
  auto a = fitted_at_two_counts("a.yaml", 0.1, 0.01), b = fitted_at_two_counts("b.yaml", 0.2, 0.01);
  const std::string two = code_source("calibrate records: x.json, y.json", kCode);
  a.second.fitted.push_back({"compute.warmup_s.cosmoflow-mlperf", 0.01, 0.02, two});
  b.second.fitted.push_back({"compute.warmup_s.cosmoflow-mlperf", 12, 3, two});
  const auto priors = code_priors({a, b}, kCode);
  const CodePrior* warm = priors.of("compute.warmup_s.cosmoflow-mlperf");
  ASSERT_NE(warm, nullptr);
  EXPECT_EQ(warm->key, "compute.warmup_s.cosmoflow-mlperf");
  EXPECT_TRUE(warm->additive);
  EXPECT_DOUBLE_EQ(warm->value, (0.01 + 12) / 2);
  EXPECT_NEAR(warm->sd, 1.4826 * (12 - 0.01) / 2, 1e-9);
  EXPECT_EQ(warm->source, "the median of the warm-ups of cosmoflow-mlperf with ddp fitted in a.yaml, b.yaml");
  EXPECT_TRUE(is_code_parameter("compute.warmup_s.deepcam"));
}

// A value held near a prior says so in its source, and a prediction can name the prior back.
TEST(CodePriors, AHeldValueNamesItsPrior) {
  const auto priors = code_priors({fitted_at_two_counts("a.yaml", 0.1, 0.01)}, kCode);
  MachineProfile p;
  p.fitted.push_back({"compute.step_time_cv", 0.1, 0.01, held_source(priors.priors[0], "calibrate records: run.json")});
  p.fitted.push_back({"compute.efficiency.conv", 0.5, 0.01, "calibrate records: run.json"});
  EXPECT_EQ(p.fitted[0].source, "calibrate records at one GPU count, near the median of the step-time spread of cosmoflow-mlperf with ddp "
                                "fitted in a.yaml: run.json");
  const auto held = held_near_priors(p);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].key, "compute.step_time_cv");
  EXPECT_EQ(held[0].prior, "the median of the step-time spread of cosmoflow-mlperf with ddp fitted in a.yaml");
  EXPECT_FALSE(has_fits_of(p, kCode));  // held, not fitted at two counts: never passed on as a prior
}

// The ML framework is part of the code: NVIDIA's NGC build and upstream PyTorch run different DeepCAMs
// (their staging scripts start 11 s and 43-46 s after the job), so each takes its own fits; runs that
// name no framework (a user's own) take their workload's and library's on any.
TEST(CodePriors, TheFrameworkIsPartOfTheCode) {
  Plan ngc = plan_of("deepcam", CommFramework::ddp), upstream = ngc;
  ngc.software = "pytorch nvidia release", upstream.software = "pytorch";
  EXPECT_EQ(code_of({ngc}), "deepcam with ddp on pytorch nvidia release");
  EXPECT_EQ(code_of({ngc, upstream}), std::nullopt);
  const auto fits = std::vector{fitted_at_two_counts("eos.yaml", 0.001, 0.001, "deepcam with ddp on pytorch nvidia release"),
                                fitted_at_two_counts("horeka.yaml", 0.2, 0.02, "deepcam with ddp on pytorch")};
  const auto mine = code_priors(fits, "deepcam with ddp on pytorch");
  EXPECT_DOUBLE_EQ(spread(mine).value, 0.2);
  ASSERT_EQ(mine.left_out.size(), 1u);
  EXPECT_EQ(mine.left_out[0], "eos.yaml: its fits are deepcam with ddp on pytorch nvidia release's, not deepcam with ddp on pytorch's");
  const auto any = code_priors(fits, "deepcam with ddp");
  EXPECT_TRUE(any.left_out.empty());
  EXPECT_NEAR(spread(any).value, std::sqrt(0.001 * 0.2), 1e-12);  // the median of both, in log space: a factor's
  EXPECT_TRUE(has_fits_of(fits[1].second, "deepcam with ddp"));
  EXPECT_FALSE(has_fits_of(fits[1].second, "deepcam with ddp on pytorch nvidia release"));
}
