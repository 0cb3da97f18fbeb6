#include "calibrate/node_sharing_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/profile_parameters.hpp"
#include "model/errors.hpp"
#include "model/least_squares.hpp"
#include "model/straggler.hpp"

namespace mrplan {

NodeSharingFit fit_node_sharing(const std::vector<NodeSharingTiming>& timings) {
  if (timings.size() < 2) fail_input("", "sharing timings", "the fit needs two configurations or more");
  const auto n = static_cast<Eigen::Index>(timings.size());
  Eigen::MatrixXd A(n, 2);
  Eigen::VectorXd y(n), w(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& t = timings[static_cast<size_t>(i)];
    for (double v : {t.alone_s, t.shared_s, t.allreduce_s})
      if (!(v > 0) || !std::isfinite(v))
        fail_input("", "sharing timings", fmt::format("'{}': step and allreduce times must be positive and finite", t.context));
    if (!(t.shared_wait_s >= 0) || !std::isfinite(t.shared_wait_s))
      fail_input("", "sharing timings", fmt::format("'{}': the wait for the allreduces must be zero or more and finite", t.context));
    if (t.ranks < 2) fail_input("", "sharing timings", fmt::format("'{}': a node shared by {} rank shares nothing", t.context, t.ranks));
    A(i, 0) = t.alone_s, A(i, 1) = t.allreduce_s;
    y(i) = t.shared_s - t.alone_s;
    w(i) = 1 / (t.shared_s * t.shared_s);
  }
  const FitResult f = weighted_two_term_least_squares_dropping_negative(A, y, w);
  NodeSharingFit fit;
  fit.slowdown = 1 + f.params(0), fit.slowdown_std_error = f.std_errors(0);
  fit.comm_steal = f.params(1), fit.comm_steal_std_error = f.std_errors(1);
  const Eigen::VectorXd model = A * f.params;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& t = timings[static_cast<size_t>(i)];
    fit.relative_residuals.push_back((t.alone_s + model(i) - t.shared_s) / t.shared_s);
  }

  Eigen::MatrixXd x(n, 1);
  Eigen::VectorXd excess(n), wx(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& t = timings[static_cast<size_t>(i)];
    x(i, 0) = t.shared_s * expected_max_std_normal(t.ranks);
    excess(i) = std::max(0.0, t.shared_wait_s - t.allreduce_s);
    wx(i) = 1 / (x(i, 0) * x(i, 0));
  }
  const FitResult g = weighted_linear_least_squares(x, excess, wx);
  fit.step_time_cv = std::clamp(g.params(0), 0.0, 1.0), fit.step_time_cv_std_error = g.std_errors(0);
  for (Eigen::Index i = 0; i < n; ++i) fit.modelled_wait_s.push_back(timings[static_cast<size_t>(i)].allreduce_s + fit.step_time_cv * x(i, 0));
  return fit;
}

void apply_node_sharing_fit(MachineProfile& profile, const NodeSharingFit& fit, const std::string& source) {
  profile.node_sharing = {fit.slowdown, fit.comm_steal, fit.step_time_cv};
  std::erase_if(profile.fitted, [](const FittedParameter& p) { return p.key.rfind("node_sharing.", 0) == 0; });
  record_fit(profile, {"node_sharing.slowdown", fit.slowdown, fit.slowdown_std_error, source});
  record_fit(profile, {"node_sharing.comm_steal_fraction", fit.comm_steal, fit.comm_steal_std_error, source});
  record_fit(profile, {"node_sharing.step_time_cv", fit.step_time_cv, fit.step_time_cv_std_error, source});
}

}  // namespace mrplan
