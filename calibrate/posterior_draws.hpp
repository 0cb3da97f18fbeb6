#pragma once
// Draws from a fit's posterior where its normal (Laplace) approximation is poor: parameters the data
// only bound (a rate hidden under compute at one GPU count) sit on a cliff the curvature at the
// optimum does not see, so draws from that normal cross it and give times the records refute, and
// importance sampling from it finds almost no weight (one effective draw in 4000 on HoreKa's
// DeepCAM). A random-walk Metropolis chain whose step adapts to the chain's own covariance and to an
// acceptance of 0.234 walks the posterior instead: Andrieu and Thoms, "A tutorial on adaptive MCMC",
// Stat. Comput. 18 (2008), Algorithm 4.
#include <cstdint>
#include <functional>
#include <vector>

#include <Eigen/Dense>

namespace mrplan {

struct PosteriorDraws {
  std::vector<Eigen::VectorXd> draws;  // equally weighted, each a whole parameter vector
  double acceptance = 0;               // of the steps after the burn-in
};

// `rows` draws of theta from the posterior exp(-|r(theta)|^2 / 2), from a chain of `steps` started at
// its mode `mode` with the normal approximation there, `covariance`, as its first step's shape: the
// first half burns in, the second gives the rows, evenly spaced. A step whose residuals are not
// finite is refused: the posterior is cut there (a bound past which a clamped value fits as well as
// the bound). Deterministic in `seed`.
PosteriorDraws draw_posterior(const std::function<Eigen::VectorXd(const Eigen::VectorXd&)>& residuals, const Eigen::VectorXd& mode,
                              const Eigen::MatrixXd& covariance, size_t steps, size_t rows, uint64_t seed);

}  // namespace mrplan
