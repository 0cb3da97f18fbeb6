#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "calibrate/builtin_mlperf_fit.hpp"
#include "calibrate/calibrated_builtins.hpp"
#include "model/profile_yaml.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/simulate.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

bool has_logs() { return std::filesystem::is_directory(MRPLAN_MLPERF_LOGS); }

bool lent_by(const MachineProfile& p, const std::string& donor) {
  return std::any_of(p.fitted.begin(), p.fitted.end(), [&](const FittedParameter& f) { return f.source.starts_with("lent by " + donor); });
}

}  // namespace

TEST(BuiltinMlperfFit, ReadsTheMachinesFoldersAndRefusesWhatItDoesNotKnow) {
  const auto fits = read_mlperf_fits("m:\n  - {logs: v1.0/X/sys/cosmoflow, framework: horovod, precision: amp}\n  - {logs: v1.0/X/sys/deepcam}\n", "f.yaml");
  ASSERT_EQ(fits.at("m").size(), 2u);
  EXPECT_EQ(fits.at("m")[0].framework, CommFramework::horovod);
  EXPECT_EQ(fits.at("m")[0].precision, Precision::amp);
  EXPECT_FALSE(fits.at("m")[1].framework.has_value());
  EXPECT_EQ(error_of([] { read_mlperf_fits("m:\n  - {logs: a, framework: mpi}\n", "f.yaml"); }),
            "f.yaml: m[0].framework: unknown framework 'mpi' (expected ddp or horovod)");
  EXPECT_NE(error_of([] { read_mlperf_fits("m:\n  - {logs: a, gpus: 4}\n", "f.yaml"); }).find("gpus"), std::string::npos);
  EXPECT_NE(error_of([] {
              MachineProfile p = calibrated_builtin_profile("summit");
              fit_to_mlperf_logs(p, {{"v9.9/nobody/none/cosmoflow", {}, {}}}, "/nonexistent");
            }).find("/nonexistent/v9.9/nobody/none/cosmoflow: no result_*.txt logs of summit here"),
            std::string::npos);
}

TEST(BuiltinMlperfFit, TheFitIsTheSameBytesTwice) {
  if (!has_logs()) GTEST_SKIP() << "no MLPerf logs at " << MRPLAN_MLPERF_LOGS;
  const auto own = read_mlperf_fits(
      "perlmutter:\n"
      "  - {logs: v1.0/LBNL/perlmutter_256x4_ngc21.09_mxnet/cosmoflow, framework: horovod, precision: amp}\n", "t.yaml")
                       .at("perlmutter");  // one folder: under the sanitizers a fit of all twelve takes minutes
  auto fitted = [&] {
    MachineProfile p = calibrated_builtin_profile(before_mlperf("perlmutter"));
    p.name = "perlmutter";
    const auto s = fit_to_mlperf_logs(p, own, MRPLAN_MLPERF_LOGS);
    EXPECT_EQ(s.own_runs, 3);
    EXPECT_GE(s.population_runs, 15);  // every other system's CosmoFlow runs
    return profile_to_yaml(p);
  };
  const auto once = fitted();
  EXPECT_TRUE(once == fitted());  // (not EXPECT_EQ: two whole profiles)
  EXPECT_NE(once.find("source: \"calibrate records: v1.0/LBNL/perlmutter_256x4_ngc21.09_mxnet/cosmoflow/result_1.txt"), std::string::npos);
}

TEST(BuiltinMlperfFit, AnA100WithoutRunsBorrowsTheFittedA100sAndBeatsTheV100sOnEveryMethodPlan) {
  if (!has_logs()) GTEST_SKIP() << "no MLPerf logs at " << MRPLAN_MLPERF_LOGS;
  EXPECT_TRUE(lent_by(calibrated_builtin_profile("cori-a100"), "perlmutter"));
  EXPECT_FALSE(lent_by(calibrated_builtin_profile("summit"), "perlmutter"));  // another GPU
  for (const auto& app : builtin_plan_names()) {
    if (app.find("mrt") == std::string::npos && app.find("mrmf") == std::string::npos) continue;
    auto time_on = [&](const std::string& m) { return simulate(builtin_plan(app + "@" + m, 32), calibrated_builtin_profile(m)).totals.time_to_target_s; };
    for (const char* a100 : {"perlmutter", "cori-a100"})
      for (const char* v100 : {"summit", "cori-gpu"}) EXPECT_LT(time_on(a100), time_on(v100)) << app << ": " << a100 << " against " << v100;
  }
}
