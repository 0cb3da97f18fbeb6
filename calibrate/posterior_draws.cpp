#include "calibrate/posterior_draws.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

namespace mrplan {

namespace {

// A square root of a covariance (from its eigen-decomposition: a singular one has one too).
Eigen::MatrixXd root_of(const Eigen::MatrixXd& c) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(c);
  return eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).cwiseSqrt().asDiagonal();
}

}  // namespace

PosteriorDraws draw_posterior(const std::function<Eigen::VectorXd(const Eigen::VectorXd&)>& residuals, const Eigen::VectorXd& mode,
                              const Eigen::MatrixXd& covariance, size_t steps, size_t rows, uint64_t seed) {
  const auto n = mode.size();
  if (covariance.rows() != n || covariance.cols() != n) throw std::logic_error("draw_posterior: the covariance is not n x n");
  PosteriorDraws out;
  if (n == 0 || rows == 0 || steps < 2 * rows) return out;
  auto log_post = [&](const Eigen::VectorXd& t) {
    const double miss = residuals(t).squaredNorm();
    return std::isfinite(miss) ? -0.5 * miss : -std::numeric_limits<double>::infinity();
  };
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> unit(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  // a floor under the adapted covariance, so that no direction collapses to a point
  const double floor = 1e-8 * std::max(covariance.trace() / static_cast<double>(n), 1e-12);
  Eigen::VectorXd x = mode, mean = mode;
  Eigen::MatrixXd shape = covariance;
  Eigen::MatrixXd root = root_of(shape);
  double lp = log_post(x), log_scale = std::log(2.38 * 2.38 / static_cast<double>(n));
  const size_t burn_in = steps / 2, every = (steps - burn_in) / rows;
  size_t accepted = 0;
  for (size_t i = 1; i <= steps; ++i) {
    Eigen::VectorXd z(n);
    for (auto& v : z) v = unit(rng);
    const Eigen::VectorXd y = x + std::exp(0.5 * log_scale) * (root * z);
    const double ly = log_post(y);
    const double alpha = std::isfinite(ly) ? std::min(1.0, std::exp(ly - lp)) : 0.0;
    if (uniform(rng) < alpha) {
      x = y, lp = ly;
      if (i > burn_in) ++accepted;
    }
    // the step's scale toward an acceptance of 0.234, its shape toward the chain's covariance, by
    // steps that shrink as 1/i^0.6 (diminishing adaptation keeps the chain's limit the posterior), the
    // first shape weighing as a hundred steps
    const double gamma = std::pow(static_cast<double>(i) + 100.0, -0.6);
    log_scale += gamma * (alpha - 0.234);
    const Eigen::VectorXd d = x - mean;
    mean += gamma * d;
    shape += gamma * (d * d.transpose() - shape);
    if (i % 50 == 0) root = root_of(shape + floor * Eigen::MatrixXd::Identity(n, n));
    if (i > burn_in && (i - burn_in) % every == 0 && out.draws.size() < rows) out.draws.push_back(x);
  }
  out.acceptance = static_cast<double>(accepted) / static_cast<double>(steps - burn_in);
  return out;
}

}  // namespace mrplan
