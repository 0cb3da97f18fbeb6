#include <gtest/gtest.h>

#include <random>

#include "calibrate/allreduce_fit.hpp"
#include "model/allreduce_cost.hpp"
#include "model/profile_yaml.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

TEST(AllreduceFit, RecoversAlphaAndBandwidthFromNoisyRingTimings) {
  const LinkLevel truth{7e-6, 3.5e9};
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(0.0, 0.03);
  std::vector<AllreduceTiming> t;
  for (int p : {2, 4})
    for (double b = 4; b <= 256.0 * (1 << 20); b *= 2) t.push_back({b, p, ring_allreduce_s(b, p, truth) * (1 + noise(rng))});
  const auto fit = fit_ring_alpha_beta(t);
  EXPECT_NEAR(fit.link.alpha_s, truth.alpha_s, 0.05 * truth.alpha_s);
  EXPECT_NEAR(fit.link.bandwidth_Bps, truth.bandwidth_Bps, 0.05 * truth.bandwidth_Bps);
  EXPECT_GT(fit.alpha_std_error_s, 0);
  EXPECT_LT(fit.alpha_std_error_s, 0.05 * truth.alpha_s);
  EXPECT_GT(fit.r2, 0.99);
  ASSERT_EQ(fit.relative_residuals.size(), t.size());
}

TEST(AllreduceFit, ExactTimingsGiveExactParameters) {
  const LinkLevel truth{2e-6, 1e9};
  std::vector<AllreduceTiming> t;
  for (double b : {1e3, 1e5, 1e7}) t.push_back({b, 2, ring_allreduce_s(b, 2, truth)});
  const auto fit = fit_ring_alpha_beta(t);
  EXPECT_NEAR(fit.link.alpha_s, 2e-6, 1e-12);
  EXPECT_NEAR(fit.link.bandwidth_Bps, 1e9, 1e-3);
  for (double r : fit.relative_residuals) EXPECT_NEAR(r, 0, 1e-9);
}

TEST(AllreduceFit, RefusesOneRankOneSizeAndFlatTimings) {
  EXPECT_NE(error_of([] { fit_ring_alpha_beta({{1e3, 1, 1e-5}, {1e6, 1, 1e-3}}); }).find("mpirun -np 2"), std::string::npos);
  EXPECT_NE(error_of([] { fit_ring_alpha_beta({{1e3, 2, 1e-5}, {1e3, 2, 1.1e-5}}); }).find("two message sizes"), std::string::npos);
  EXPECT_NE(error_of([] { fit_ring_alpha_beta({{1e3, 2, 1e-3}, {1e6, 2, 1e-5}}); }).find("do not grow"), std::string::npos);
}

TEST(AllreduceFit, FittedProfileRoundTripsThroughYaml) {
  MachineProfile p;
  p.name = "local";
  AllreduceFit fit;
  fit.link = {3e-6, 2.5e9};
  fit.alpha_std_error_s = 1e-7;
  fit.bandwidth_std_error_Bps = 4e7;
  apply_allreduce_fit(p, fit, "test timings");
  apply_allreduce_fit(p, fit, "test timings");  // a second calibration replaces, not appends
  const auto q = profile_from_yaml_text(profile_to_yaml(p));
  EXPECT_DOUBLE_EQ(q.comm.intra_node.alpha_s, 3e-6);
  EXPECT_DOUBLE_EQ(q.comm.intra_node.bandwidth_Bps, 2.5e9);
  ASSERT_EQ(q.fitted.size(), 2u);
  EXPECT_EQ(q.fitted[1].key, "comm.intra_node.bandwidth_Bps");
  EXPECT_DOUBLE_EQ(q.fitted[1].std_error, 4e7);
  EXPECT_EQ(q.fitted[1].source, "test timings");
}
