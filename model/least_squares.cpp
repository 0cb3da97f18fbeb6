#include "model/least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mrplan {

namespace {

double r_squared(double rss, const Eigen::VectorXd& observed) {
  if (observed.size() == 0) return 0;
  const double mean = observed.mean();
  const double tss = (observed.array() - mean).square().sum();
  return tss > 0 ? 1.0 - rss / tss : 1.0;
}

// The covariance s^2 (J'J)^+ and the standard errors of a fit of m residuals in n parameters.
void add_errors(FitResult& out, const Eigen::MatrixXd& J, double rss, Eigen::Index m, Eigen::Index n) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  out.covariance = Eigen::MatrixXd::Zero(n, n);
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(J, Eigen::ComputeFullV);
  const auto& sv = svd.singularValues();
  const double tol = 1e-10 * (sv.size() > 0 ? sv(0) : 0.0);
  const auto rank = static_cast<Eigen::Index>((sv.array() > tol).count());
  // as many residuals as directions the parameters move them in: a fit through every point has no
  // spread left to say how well it knows them
  if (m <= rank) {
    out.std_errors = Eigen::VectorXd::Constant(n, kInf);
    out.covariance.diagonal().setConstant(kInf);
    return;
  }
  // (J^T J)^+ from the same decomposition: V diag(1/sigma^2) V^T over the directions J moves
  const double s2 = rss / static_cast<double>(m - rank);
  const auto& V = svd.matrixV();
  for (Eigen::Index k = 0; k < sv.size(); ++k)
    if (sv(k) > tol) out.covariance += V.col(k) * V.col(k).transpose() * (s2 / (sv(k) * sv(k)));
  out.std_errors = out.covariance.diagonal().cwiseMax(0.0).cwiseSqrt();
  // A parameter the residuals do not move (a clamp it sits behind, a run that cannot see it) is
  // not known at all: the pseudo-inverse would call it exact.
  for (Eigen::Index k = 0; k < n; ++k) {
    if (k < sv.size() && sv(k) > tol) continue;
    for (Eigen::Index i = 0; i < n; ++i)
      if (std::abs(V(i, k)) > 1e-6) out.std_errors[i] = kInf;
  }
  for (Eigen::Index i = 0; i < n; ++i)
    if (!std::isfinite(out.std_errors[i]) || out.std_errors[i] == 0) {
      out.covariance.row(i).setZero(), out.covariance.col(i).setZero();
      out.covariance(i, i) = out.std_errors[i] * out.std_errors[i];
    }
}

Eigen::MatrixXd jacobian(const std::function<Eigen::VectorXd(const Eigen::VectorXd&)>& f, const Eigen::VectorXd& x,
                         const Eigen::VectorXd& fx) {
  Eigen::MatrixXd J(fx.size(), x.size());
  for (Eigen::Index j = 0; j < x.size(); ++j) {
    Eigen::VectorXd xp = x;
    const double h = 1e-7 * std::max(1.0, std::abs(x[j]));
    xp[j] += h;
    J.col(j) = (f(xp) - fx) / h;
  }
  return J;
}

}  // namespace

FitResult levenberg_marquardt(const std::function<Eigen::VectorXd(const Eigen::VectorXd&)>& residuals,
                              const Eigen::VectorXd& start, const Eigen::VectorXd& observed, int max_iterations) {
  FitResult out;
  Eigen::VectorXd x = start;
  Eigen::VectorXd r = residuals(x);
  double rss = r.squaredNorm();
  double lambda = 1e-3;
  int it = 0;
  for (; it < max_iterations; ++it) {
    const Eigen::MatrixXd J = jacobian(residuals, x, r);
    const Eigen::MatrixXd JtJ = J.transpose() * J;
    const Eigen::VectorXd g = J.transpose() * r;
    bool improved = false;
    for (int tries = 0; tries < 20; ++tries) {
      Eigen::MatrixXd A = JtJ;
      A.diagonal() += lambda * (JtJ.diagonal().array() + 1e-12).matrix();
      const Eigen::VectorXd step = A.ldlt().solve(-g);
      const Eigen::VectorXd xn = x + step;
      const Eigen::VectorXd rn = residuals(xn);
      const double rssn = rn.allFinite() ? rn.squaredNorm() : INFINITY;
      if (rssn < rss) {
        const double rel = (rss - rssn) / std::max(rss, 1e-300);
        x = xn, r = rn, rss = rssn;
        lambda = std::max(lambda / 3.0, 1e-12);
        improved = true;
        if (rel < 1e-12 || step.norm() < 1e-12 * (1 + x.norm())) out.converged = true;
        break;
      }
      lambda *= 4.0;
    }
    if (!improved) {
      out.converged = true;  // no descent direction left: at a (local) minimum
      break;
    }
    if (out.converged) break;
  }
  out.params = x;
  out.rss = rss;
  out.r2 = r_squared(rss, observed);
  out.iterations = it;
  add_errors(out, jacobian(residuals, x, r), rss, r.size(), x.size());
  return out;
}

double delta_method_se(double se, double derivative) { return std::isinf(se) ? se : std::abs(derivative) * se; }

FitResult weighted_linear_least_squares(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, const Eigen::VectorXd& w) {
  const Eigen::VectorXd sw = w.array().sqrt();
  const Eigen::MatrixXd Aw = sw.asDiagonal() * A;
  const Eigen::VectorXd bw = sw.asDiagonal() * b;
  FitResult out;
  out.params = Aw.colPivHouseholderQr().solve(bw);
  const Eigen::VectorXd r = Aw * out.params - bw;
  out.rss = r.squaredNorm();
  out.r2 = r_squared(out.rss, bw);
  out.converged = true;
  add_errors(out, Aw, out.rss, A.rows(), A.cols());
  return out;
}

FitResult weighted_two_term_least_squares_dropping_negative(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, const Eigen::VectorXd& w) {
  FitResult f = weighted_linear_least_squares(A, b, w);
  for (int drop = 0; drop < 2; ++drop) {
    if (f.params(drop) >= 0) continue;
    const int keep = 1 - drop;
    const auto g = weighted_linear_least_squares(A.col(keep), b, w);
    f.params = Eigen::Vector2d::Zero(), f.std_errors = Eigen::Vector2d::Zero(), f.covariance = Eigen::Matrix2d::Zero();
    f.params(keep) = std::max(0.0, g.params(0)), f.std_errors(keep) = g.std_errors(0), f.covariance(keep, keep) = g.covariance(0, 0);
    break;
  }
  return f;
}

}  // namespace mrplan
