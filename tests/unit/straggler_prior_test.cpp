#include <gtest/gtest.h>

#include <cmath>

#include "calibrate/straggler_prior.hpp"
#include "model/profile_parameters.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

std::pair<std::string, MachineProfile> fitted_at_two_counts(const std::string& file, double cv, double std_error) {
  MachineProfile p;
  p.compute.step_time_cv = cv;
  p.fitted.push_back({"compute.step_time_cv", cv, std_error, "calibrate records: " + file + ".small.json, " + file + ".large.json"});
  return {file, p};
}

}  // namespace

// The median of the other machines' fits, and a width that one machine unlike the others (a step
// that does not grow) does not blow up: the median absolute deviation of the logs.
TEST(StragglerPrior, MedianAndTheLogsMedianDeviation) {
  const auto prior = straggler_prior({fitted_at_two_counts("a.yaml", 0.18, 0.01), fitted_at_two_counts("b.yaml", 0.10, 0.01),
                                      fitted_at_two_counts("c.yaml", 0.0003, 0.0001)});
  EXPECT_DOUBLE_EQ(prior.value, 0.10);
  EXPECT_NEAR(prior.log_sd, 1.4826 * std::log(1.8), 1e-9);  // deviations: log 1.8, 0, log(333)
  EXPECT_EQ(prior.source, "the median of the step-time spreads fitted in a.yaml, b.yaml, c.yaml");
}

// No narrower than the fits pin their own values.
TEST(StragglerPrior, NoNarrowerThanOneFit) {
  const auto one = straggler_prior({fitted_at_two_counts("a.yaml", 0.1, 0.03)});
  EXPECT_DOUBLE_EQ(one.value, 0.1);
  EXPECT_NEAR(one.log_sd, 0.3, 1e-12);
  const auto alike = straggler_prior({fitted_at_two_counts("a.yaml", 0.1, 0.02), fitted_at_two_counts("b.yaml", 0.1, 0.04)});
  EXPECT_NEAR(alike.log_sd, 0.3, 1e-12);
}

// A profile whose spread no fit at two GPU counts gave is refused with its file: a value held near
// another machine's at one count, or typed in, is not a measurement.
TEST(StragglerPrior, RefusesWhatNoTwoCountFitGave) {
  const std::string expected = "no step-time spread fitted by calibrate records";
  MachineProfile typed;
  typed.compute.step_time_cv = 0.1;
  EXPECT_NE(error_of([&] { straggler_prior({{"typed.yaml", typed}}); }).find("typed.yaml: fitted: " + expected), std::string::npos);
  auto [file, held] = fitted_at_two_counts("held.yaml", 0.1, 0.01);
  held.fitted.back().source = "calibrate records at one GPU count, near the median of a.yaml: x.json";
  EXPECT_NE(error_of([&] { straggler_prior({fitted_at_two_counts("a.yaml", 0.1, 0.01), {file, held}}); }).find("held.yaml: fitted: " + expected),
            std::string::npos);
  EXPECT_NE(error_of([] { straggler_prior({}); }).find("give at least one fitted profile"), std::string::npos);
}
