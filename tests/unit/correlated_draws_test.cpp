// A fit's parameters drawn together: the profile keeps their correlation (`correlations`), the
// sampler reproduces it, the reader refuses a block no draw can have, and an epochs-to-target fit
// at one batch keeps its curve through its runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "calibrate/calibrated_builtins.hpp"
#include "model/errors.hpp"
#include "model/profile_parameters.hpp"
#include "model/profile_yaml.hpp"
#include "sim/monte_carlo.hpp"

using namespace mrplan;

namespace {

// Two fitted parameters far from their bounds, with standard errors 10 and 2 and correlation `rho`.
MachineProfile two_correlated(double rho) {
  MachineProfile m = calibrated_builtin_profile("summit");
  m.fitted.clear(), m.correlations.clear();
  m.comm.call_overhead_s = 100e-6, m.compute.kernel_overhead_s = 50e-6;
  record_fit(m, {"comm.call_overhead_us", 100, 10, "test"});
  record_fit(m, {"compute.kernel_overhead_us", 50, 2, "test"});
  record_correlations(m, {"comm.call_overhead_us", "compute.kernel_overhead_us"}, {100, rho * 20, rho * 20, 4});
  return m;
}

std::string refusal(const MachineProfile& m) {
  try {
    profile_from_yaml_text(profile_to_yaml(m), "p.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(CorrelatedDraws, AKnownCovarianceIsReproduced) {
  for (const double rho : {-0.9, 0.0, 0.7}) {
    const auto m = two_correlated(rho);
    ASSERT_EQ(m.correlations.size(), 1u);
    EXPECT_NEAR(m.correlations[0].matrix[1], rho, 1e-12);
    const auto draws = draw_profiles(m, "cosmoflow-mrt", 20000, 5, fitted_alone());
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
    const double n = static_cast<double>(draws.profiles.size());
    for (const auto& p : draws.profiles) {
      const double a = p.comm.call_overhead_s * 1e6, b = p.compute.kernel_overhead_s * 1e6;
      sa += a, sb += b, saa += a * a, sbb += b * b, sab += a * b;
    }
    const double va = saa / n - sa * sa / n / n, vb = sbb / n - sb * sb / n / n, cab = sab / n - sa * sb / n / n;
    EXPECT_NEAR(sa / n, 100, 0.3);
    EXPECT_NEAR(std::sqrt(va), 10, 0.2);
    EXPECT_NEAR(std::sqrt(vb), 2, 0.04);
    EXPECT_NEAR(cab / std::sqrt(va * vb), rho, 0.02) << rho;
  }
}

TEST(CorrelatedDraws, TheBlockRoundTripsAndGoesWhenAKeyIsFittedAgain) {
  auto m = two_correlated(0.5);
  const auto back = profile_from_yaml_text(profile_to_yaml(m), "p.yaml");
  ASSERT_EQ(back.correlations.size(), 1u);
  EXPECT_EQ(back.correlations[0].keys, m.correlations[0].keys);
  EXPECT_NEAR(back.correlations[0].matrix[2], 0.5, 1e-12);
  record_fit(m, {"compute.kernel_overhead_us", 40, 1, "another fit"});
  EXPECT_TRUE(m.correlations.empty());
}

TEST(CorrelatedDraws, TheReaderRefusesABlockNoDrawCanHave) {
  auto m = two_correlated(0.5);
  m.correlations[0].matrix = {1, 1.5, 1.5, 1};
  EXPECT_NE(refusal(m).find("correlations[0].keys: the matrix is not a correlation matrix"), std::string::npos) << refusal(m);
  m = two_correlated(0.5);
  m.correlations[0].matrix = {1, 0.5, 0.5};
  EXPECT_NE(refusal(m).find("2 keys need a matrix of 4 numbers"), std::string::npos) << refusal(m);
  m = two_correlated(0.5);
  m.fitted[1].std_error = 0;
  EXPECT_NE(refusal(m).find("'compute.kernel_overhead_us' is not in `fitted` with a finite, positive std_error"), std::string::npos)
      << refusal(m);
  // three keys, each pair fine, together impossible (no vector is -0.9 from two that are 0.9 alike)
  m = two_correlated(0.9);
  m.compute.mem_efficiency = 0.5;
  record_fit(m, {"compute.mem_efficiency", 0.5, 0.05, "test"});
  m.correlations[0].keys.push_back("compute.mem_efficiency");
  m.correlations[0].matrix = {1, 0.9, 0.9, 0.9, 1, -0.9, 0.9, -0.9, 1};
  EXPECT_NE(refusal(m).find("not positive semi-definite"), std::string::npos) << refusal(m);
}

TEST(CorrelatedDraws, KeysWithoutAFiniteVarianceAreLeftOutOfTheBlock) {
  MachineProfile m = two_correlated(0.5);
  m.correlations.clear();
  record_correlations(m, {"comm.call_overhead_us", "compute.kernel_overhead_us"}, {100, 5, 5, std::numeric_limits<double>::infinity()});
  EXPECT_TRUE(m.correlations.empty());  // one key left: no block
}

// A log-space fit's block (the epochs-to-target curve's) is drawn log-normal: two factors whose logs
// move exactly against each other keep their product, each draws its own value as its median, and
// the scale survives the profile's YAML.
TEST(CorrelatedDraws, ALogSpaceBlockIsDrawnLogNormal) {
  MachineProfile m = two_correlated(0.0);
  m.correlations.clear();
  record_fit(m, {"comm.call_overhead_us", 100, 50, "test"});  // log sd 0.5 each
  record_fit(m, {"compute.kernel_overhead_us", 50, 25, "test"});
  const double v = 0.25;
  record_correlations(m, {"comm.call_overhead_us", "compute.kernel_overhead_us"}, {v, -v, -v, v}, DrawScale::log);
  const auto back = profile_from_yaml_text(profile_to_yaml(m), "p.yaml");
  ASSERT_EQ(back.correlations.size(), 1u);
  EXPECT_EQ(back.correlations[0].scale, DrawScale::log);
  std::vector<double> a;
  for (const auto& p : draw_profiles(back, "cosmoflow-mrt", 4001, 3, fitted_alone()).profiles) {
    EXPECT_NEAR(p.comm.call_overhead_s * p.compute.kernel_overhead_s * 1e12, 100 * 50, 1e-6);
    a.push_back(p.comm.call_overhead_s * 1e6);
  }
  std::sort(a.begin(), a.end());
  EXPECT_NEAR(a[a.size() / 2], 100, 3);
  EXPECT_NEAR(std::log(a[3600] / a[400]), 2 * 1.2816 * 0.5, 0.05);  // a log-normal's P90/P10: exp(2 z90 sd)
  auto bad = profile_to_yaml(m);
  bad.replace(bad.find("scale: log"), 10, "scale: cubic");
  try {
    profile_from_yaml_text(bad, "p.yaml");
    ADD_FAILURE() << "a block's unknown scale was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("correlations[0].scale: expected linear or log, got 'cubic'"), std::string::npos) << e.what();
  }
}
