#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "model/learning_curve.hpp"
#include "model/least_squares.hpp"

using namespace mrplan;

TEST(SwitchRule, FiresExactlyWhereTheDefinitionSays) {
  // min loss improves by 0.1 per epoch for 10 epochs, then by 0.0001
  std::vector<double> loss;
  double l = 2.0;
  for (int e = 1; e <= 30; ++e) {
    l -= e <= 10 ? 0.1 : 0.0001;
    loss.push_back(l);
  }
  // patience 3, eps 0.01: min(l_1..l_{e-3}) - min(l_1..l_e) < 0.01 first at e = 13
  auto s = switch_epoch(loss, {3, 0.01});
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, 13);
  // a spike does not reset the running minimum
  loss[11] = 5.0;
  EXPECT_EQ(*switch_epoch(loss, {3, 0.01}), 13);
  // never fires while improving fast enough
  EXPECT_FALSE(switch_epoch(std::vector<double>{5, 4, 3, 2, 1}, {2, 0.5}));
}
TEST(SwitchRule, ModelledCurveMatchesClosedForm) {
  // exp curve: reduction over T epochs at e is A e^{-e/tau} (e^{T/tau} - 1)
  LearningCurve c{CurveForm::exp, 0.0, 1.0, 10.0};
  const SwitchRule rule{5, 1e-3};
  const auto s = predicted_switch_epoch(c, rule, 1.0, 500);
  ASSERT_TRUE(s);
  const double exact = 10.0 * std::log((std::exp(0.5) - 1.0) / 1e-3);  // where the reduction equals epsilon
  EXPECT_EQ(*s, std::ceil(exact));
}
TEST(LearningCurve, EpochsToReachAndTransferUShape) {
  ConvergenceParams p;
  p.dense_metric = {CurveForm::exp, 0.0, 1.0, 10.0};
  p.coarse_loss = {CurveForm::exp, 0.0, 1.0, 5.0};
  p.transfer_efficiency = 0.5;
  p.overtrain_epochs = 30;
  p.overtrain_penalty = 1.0;
  EXPECT_EQ(*epochs_to_reach(p.dense_metric, std::exp(-3.0) + 1e-12, 100), 30);
  const double e0 = 40;
  EXPECT_DOUBLE_EQ(dense_epochs_after_transfer(p, e0, 0), e0);
  EXPECT_NEAR(dense_epochs_after_transfer(p, e0, 1000), e0 * 0.5 + 970, 1e-9);
  // diminishing returns before the plateau, a penalty after it
  EXPECT_GT(dense_epochs_after_transfer(p, e0, 5), dense_epochs_after_transfer(p, e0, 20));
  EXPECT_LT(dense_epochs_after_transfer(p, e0, 30), dense_epochs_after_transfer(p, e0, 50));
}
TEST(LeastSquares, LevenbergMarquardtRecoversPowerLaw) {
  // L(e) = 0.05 + 2 (1+e)^-0.7 with 1% noise
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 0.01);
  const int n = 60;
  Eigen::VectorXd e(n), y(n);
  for (int i = 0; i < n; ++i) {
    e[i] = i;
    y[i] = (0.05 + 2.0 * std::pow(1.0 + i, -0.7)) * (1 + noise(rng));
  }
  auto res = [&](const Eigen::VectorXd& x) {
    Eigen::VectorXd r(n);
    for (int i = 0; i < n; ++i) r[i] = curve_value({CurveForm::power, x[0], x[1], x[2]}, e[i]) - y[i];
    return r;
  };
  Eigen::VectorXd x0(3);
  x0 << 0.0, 1.0, 0.3;
  const auto fit = levenberg_marquardt(res, x0, y);
  EXPECT_NEAR(fit.params[0], 0.05, 0.02);
  EXPECT_NEAR(fit.params[1], 2.0, 0.1);
  EXPECT_NEAR(fit.params[2], 0.7, 0.05);
  EXPECT_GT(fit.r2, 0.99);
  EXPECT_GT(fit.std_errors[2], 0.0);
}
// A parameter behind a clamp moves no residual: its standard error is infinite, not zero, and the
// parameter the data do see keeps its finite one.
TEST(LeastSquares, ParameterTheResidualsIgnoreIsNotIdentified) {
  const std::vector<double> x{1, 2, 3, 4, 5}, y{2.1, 3.9, 6.2, 7.8, 10.1};
  auto res = [&](const Eigen::VectorXd& p) {
    Eigen::VectorXd r(5);
    for (int i = 0; i < 5; ++i) r[i] = p[0] * x[i] + std::min(0.0, p[1]) - y[i];  // p[1] >= 0 never shows
    return r;
  };
  Eigen::VectorXd x0(2);
  x0 << 1.0, 0.5;
  Eigen::VectorXd obs = Eigen::Map<const Eigen::VectorXd>(y.data(), 5);
  const auto fit = levenberg_marquardt(res, x0, obs);
  EXPECT_NEAR(fit.params[0], 2.0, 0.05);
  EXPECT_TRUE(std::isfinite(fit.std_errors[0]));
  EXPECT_GT(fit.std_errors[0], 0.0);
  EXPECT_TRUE(std::isinf(fit.std_errors[1]));
}
TEST(LeastSquares, WeightedLinearRecoversAlphaBeta) {
  // t(n) = alpha + n * beta, relative noise; weights 1/t^2 as for timings
  const double alpha = 4e-6, beta = 1.0 / 12e9;
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0.0, 0.02);
  std::vector<double> sizes;
  for (double n = 4; n <= 256e6; n *= 2) sizes.push_back(n);
  Eigen::MatrixXd A(sizes.size(), 2);
  Eigen::VectorXd b(sizes.size()), w(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double t = (alpha + sizes[i] * beta) * (1 + noise(rng));
    A(i, 0) = 1, A(i, 1) = sizes[i], b[i] = t, w[i] = 1.0 / (t * t);
  }
  const auto fit = weighted_linear_least_squares(A, b, w);
  EXPECT_NEAR(fit.params[0], alpha, 0.1 * alpha);
  EXPECT_NEAR(1.0 / fit.params[1], 12e9, 0.05 * 12e9);
}

#include "model/error_summary.hpp"

TEST(ErrorSummary, QuantilesInterpolateBetweenOrderStatistics) {
  // |e| sorted: 0.1 0.2 0.3 0.4 0.5; median = 0.3; p90 at position 3.6 -> 0.4 + 0.6 * 0.1
  const auto s = summarize_abs_errors({-0.3, 0.1, 0.5, -0.2, 0.4});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.median_abs, 0.3);
  EXPECT_NEAR(s.p90_abs, 0.46, 1e-12);
  EXPECT_EQ(summarize_abs_errors({}).count, 0);
}

TEST(ErrorSummary, MedianKeepsSignAndAveragesTheMiddlePair) {
  EXPECT_DOUBLE_EQ(median({3.0, -1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0.0);
}

TEST(ErrorSummary, BackToBackSpreadLeavesDriftAndAColdFirstStepOut) {
  // pairs on a base that drifts 1 -> 5 -> 2 -> 10, the first of each 0.3 slower on average:
  // differences 0.4 0.2 0.4 0.2 -> var = 4 * 0.1^2 / 3, spread = sqrt(var / 2) / mean
  const std::vector<double> t{1.4, 1, 5.2, 5, 2.4, 2, 10.2, 10};
  const double mean = (1.4 + 1 + 5.2 + 5 + 2.4 + 2 + 10.2 + 10) / 8;
  EXPECT_NEAR(back_to_back_spread(t), std::sqrt(4 * 0.01 / 3 / 2) / mean, 1e-12);
  EXPECT_DOUBLE_EQ(back_to_back_spread({1, 2, 3}), 0.0);  // one pair: no spread to tell
  EXPECT_NEAR(back_to_back_spread({1, 1, 2, 2, 3, 3}), 0.0, 1e-15);  // drift alone is no jitter
}
