// A fit's posterior drawn by an adaptive Metropolis chain (calibrate/posterior_draws): a normal posterior is
// reproduced, a cliff the curvature at the mode does not see is respected, and a profile keeps the
// rows, which the sampler then draws whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "calibrate/calibrated_builtins.hpp"
#include "calibrate/posterior_draws.hpp"
#include "model/errors.hpp"
#include "model/profile_parameters.hpp"
#include "model/profile_yaml.hpp"
#include "sim/monte_carlo.hpp"

using namespace mrplan;

TEST(PosteriorDraws, ANormalPosteriorIsReproduced) {
  // r = A theta - b: the posterior is N((A'A)^-1 A'b, (A'A)^-1), exactly the proposal's normal
  Eigen::MatrixXd A(3, 2);
  A << 2, 0, 1, 1, 0, 4;
  const Eigen::VectorXd b = Eigen::Vector3d(1, 2, 3);
  const Eigen::MatrixXd cov = (A.transpose() * A).inverse();
  const Eigen::VectorXd mode = cov * A.transpose() * b;
  const auto post = draw_posterior([&](const Eigen::VectorXd& t) { return Eigen::VectorXd(A * t - b); }, mode, cov, 200000, 10000, 7);
  ASSERT_EQ(post.draws.size(), 10000u);
  EXPECT_GT(post.acceptance, 0.15);  // adapted toward 0.234
  EXPECT_LT(post.acceptance, 0.4);
  Eigen::Vector2d mean = Eigen::Vector2d::Zero();
  for (const auto& t : post.draws) mean += t;
  mean /= 10000.0;
  Eigen::Matrix2d c = Eigen::Matrix2d::Zero();
  for (const auto& t : post.draws) c += (t - mean) * (t - mean).transpose();
  c /= 10000.0;
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(mean[i], mode[i], 0.05 * std::sqrt(cov(i, i)));
    EXPECT_NEAR(std::sqrt(c(i, i)), std::sqrt(cov(i, i)), 0.05 * std::sqrt(cov(i, i)));
  }
  EXPECT_NEAR(c(0, 1) / std::sqrt(c(0, 0) * c(1, 1)), cov(0, 1) / std::sqrt(cov(0, 0) * cov(1, 1)), 0.05);
}

TEST(PosteriorDraws, ACliffTheModeDoesNotSeeIsRespected) {
  // a unit normal prior, and data that refute theta above 0.5 (a rate hidden under compute at the
  // fit, exposed below it): the curvature at the mode, 0, is the prior's alone
  auto residuals = [](const Eigen::VectorXd& t) { return Eigen::VectorXd(Eigen::Vector2d(t[0], 200 * std::max(0.0, t[0] - 0.5))); };
  const auto post = draw_posterior(residuals, Eigen::VectorXd::Zero(1), Eigen::MatrixXd::Identity(1, 1), 100000, 5000, 3);
  double top = -1e9, below_zero = 0;
  for (const auto& t : post.draws) top = std::max(top, t[0]), below_zero += t[0] < 0 ? 1 : 0;
  EXPECT_LT(top, 0.52);
  // the unit normal cut at 0.5: P(theta < 0 | theta < 0.5) = 0.5 / Phi(0.5)
  EXPECT_NEAR(below_zero / 5000, 0.5 / 0.6915, 0.05);
}

TEST(PosteriorDraws, ABoundWhereTheFitGoesFlatCutsThePosterior) {
  // a unit normal prior and data that see theta only up to a bound at 0.5 (a value clamped there):
  // flat past it, the chain walks out along the prior's tail, each such row the bound's value
  auto clamped = [](const Eigen::VectorXd& t) { return Eigen::VectorXd(Eigen::Vector2d(t[0], 3 * (std::min(t[0], 0.5) - 0.4))); };
  const auto flat = draw_posterior(clamped, Eigen::VectorXd::Zero(1), Eigen::MatrixXd::Identity(1, 1), 100000, 5000, 3);
  double past = 0;
  for (const auto& t : flat.draws) past += t[0] > 0.5 ? 1 : 0;
  EXPECT_GT(past / 5000, 0.1);
  // a step past it refused (residuals that are not finite): the rows end at the bound
  auto cut = [&](const Eigen::VectorXd& t) {
    return t[0] > 0.5 ? Eigen::VectorXd::Constant(1, std::numeric_limits<double>::infinity()) : clamped(t);
  };
  const auto post = draw_posterior(cut, Eigen::VectorXd::Zero(1), Eigen::MatrixXd::Identity(1, 1), 100000, 5000, 3);
  double top = -1e9;
  for (const auto& t : post.draws) top = std::max(top, t[0]);
  EXPECT_LE(top, 0.5);
  EXPECT_GT(post.acceptance, 0.1);
}

TEST(PosteriorDraws, TheSameSeedGivesTheSameRows) {
  auto residuals = [](const Eigen::VectorXd& t) { return Eigen::VectorXd(t); };
  const auto a = draw_posterior(residuals, Eigen::VectorXd::Zero(2), Eigen::MatrixXd::Identity(2, 2), 2000, 50, 11);
  const auto b = draw_posterior(residuals, Eigen::VectorXd::Zero(2), Eigen::MatrixXd::Identity(2, 2), 2000, 50, 11);
  ASSERT_EQ(a.draws.size(), b.draws.size());
  for (size_t i = 0; i < a.draws.size(); ++i) EXPECT_EQ(a.draws[i], b.draws[i]);
}

namespace {

MachineProfile with_rows() {
  MachineProfile m = calibrated_builtin_profile("summit");
  m.fitted.clear(), m.correlations.clear();
  record_fit(m, {"comm.call_overhead_us", 100, 10, "test"});
  record_fit(m, {"compute.kernel_overhead_us", 50, 2, "test"});
  set_parameter(m, "comm.call_overhead_us", 100), set_parameter(m, "compute.kernel_overhead_us", 50);
  auto* block = record_correlations(m, {"comm.call_overhead_us", "compute.kernel_overhead_us"}, {100, 0, 0, 4});
  block->draws = {{90, 48}, {105, 51}, {130, 55}};
  return m;
}

}  // namespace

TEST(PosteriorDraws, AProfileKeepsTheRowsAndEachDrawIsOneOfThem) {
  const auto m = profile_from_yaml_text(profile_to_yaml(with_rows()), "p.yaml");
  ASSERT_EQ(m.correlations.size(), 1u);
  ASSERT_EQ(m.correlations[0].draws.size(), 3u);
  EXPECT_EQ(m.correlations[0].draws[2], (std::vector<double>{130, 55}));
  std::vector<int> seen(3, 0);
  for (const auto& p : draw_profiles(m, "cosmoflow-mrt", 300, 5, fitted_alone()).profiles) {
    const std::vector<double> pair = {std::round(p.comm.call_overhead_s * 1e6 * 1e6) / 1e6, std::round(p.compute.kernel_overhead_s * 1e6 * 1e6) / 1e6};
    const auto it = std::find(m.correlations[0].draws.begin(), m.correlations[0].draws.end(), pair);
    ASSERT_NE(it, m.correlations[0].draws.end()) << pair[0] << " " << pair[1];
    ++seen[static_cast<size_t>(it - m.correlations[0].draws.begin())];
  }
  for (const int s : seen) EXPECT_GT(s, 60);  // each about a third of 300
}

TEST(PosteriorDraws, TheReaderRefusesARowThatIsNotADraw) {
  auto refusal = [](const MachineProfile& m) {
    try {
      profile_from_yaml_text(profile_to_yaml(m), "p.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  auto m = with_rows();
  m.correlations[0].draws[1] = {105};
  EXPECT_NE(refusal(m).find("correlations[0].keys: draw 2 has 1 values; the block has 2 keys"), std::string::npos) << refusal(m);
  m = with_rows();
  m.correlations[0].draws[0][1] = -3;
  EXPECT_NE(refusal(m).find("draw 1: compute.kernel_overhead_us = -3 is not a finite value within the key's bounds"), std::string::npos)
      << refusal(m);
}
