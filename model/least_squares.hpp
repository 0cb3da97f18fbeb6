#pragma once
// Nonlinear least squares (Levenberg-Marquardt, numerical Jacobian) and weighted linear least
// squares, both with standard errors from the residual variance.
#include <Eigen/Dense>
#include <functional>

namespace mrplan {

struct FitResult {
  Eigen::VectorXd params;
  Eigen::VectorXd std_errors;  // zero when there are no spare degrees of freedom; infinite for a parameter the residuals do not depend on
  // The parameters' covariance, s^2 (J'J)^+ (its diagonal: std_errors squared); rows and columns of
  // a parameter with an infinite or zero standard error are zero off the diagonal.
  Eigen::MatrixXd covariance;
  double rss = 0;
  double r2 = 0;               // 1 - rss / total sum of squares of the observations
  int iterations = 0;
  bool converged = false;
};

// residuals(params) returns r_i = model_i - observed_i. `observed` is used only for R^2.
FitResult levenberg_marquardt(const std::function<Eigen::VectorXd(const Eigen::VectorXd&)>& residuals,
                              const Eigen::VectorXd& start, const Eigen::VectorXd& observed, int max_iterations = 200);

// Standard error of g(x) from x's by the delta method, |g'(x)| se; a parameter the data do not
// pin (infinite se) stays unpinned through any transform, even where g is flat.
double delta_method_se(double se, double derivative);

// Minimise sum w_i (A_i x - b_i)^2.
FitResult weighted_linear_least_squares(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, const Eigen::VectorXd& w);

// The same for two terms that cannot be negative (costs, sizes): a term that comes out negative is
// dropped (0, standard error 0) and the other fitted alone, at 0 where it is negative too.
FitResult weighted_two_term_least_squares_dropping_negative(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, const Eigen::VectorXd& w);

}  // namespace mrplan
