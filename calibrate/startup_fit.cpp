#include "calibrate/startup_fit.hpp"

#include <fmt/format.h>

#include <cmath>

#include "model/profile_parameters.hpp"
#include "model/errors.hpp"
#include "model/least_squares.hpp"

namespace mrplan {

FirstTouchFit fit_first_touch(const std::vector<WholeStepTiming>& steps) {
  std::vector<const WholeStepTiming*> used;
  for (const auto& s : steps)
    if (s.first_touch_bytes > 0 && s.first_steps_s > 0) used.push_back(&s);
  FirstTouchFit fit;
  fit.timings = static_cast<int>(used.size());
  if (used.size() < 3) return fit;
  const auto n = static_cast<Eigen::Index>(used.size());
  Eigen::MatrixXd A(n, 2);
  Eigen::VectorXd bytes(n), w(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& s = *used[static_cast<size_t>(i)];
    if (!(s.activation_bytes > 0) || !std::isfinite(s.first_touch_bytes) || !std::isfinite(s.first_steps_s))
      fail_input("", "whole steps", fmt::format("'{}': start-up bytes and times must be positive and finite", s.context));
    A(i, 0) = s.activation_bytes, A(i, 1) = 4.0 * static_cast<double>(s.params);
    bytes(i) = s.first_touch_bytes;
    w(i) = 1.0 / (bytes(i) * bytes(i));
  }
  const FitResult f = weighted_two_term_least_squares_dropping_negative(A, bytes, w);
  fit.params.activation_factor = f.params(0), fit.activation_factor_std_error = f.std_errors(0);
  fit.params.param_factor = f.params(1), fit.param_factor_std_error = f.std_errors(1);

  // seconds per first-touched byte: the first two steps beyond two typical steps
  Eigen::MatrixXd x(n, 1);
  Eigen::VectorXd excess(n), wx(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& s = *used[static_cast<size_t>(i)];
    x(i, 0) = s.first_touch_bytes;
    excess(i) = s.first_steps_s - 2.0 * s.seconds;
    wx(i) = 1.0 / (s.first_steps_s * s.first_steps_s);
  }
  const FitResult g = weighted_linear_least_squares(x, excess, wx);
  if (!(g.params(0) > 0)) return fit;  // no time the first touches explain: not measured
  fit.params.bandwidth_Bps = 1.0 / g.params(0);
  fit.bandwidth_std_error_Bps = g.std_errors(0) / (g.params(0) * g.params(0));  // delta method
  for (Eigen::Index i = 0; i < n; ++i) {
    fit.startup_s.push_back(excess(i));
    fit.modelled_startup_s.push_back((A.row(i) * f.params)(0) * g.params(0));
  }
  return fit;
}

void apply_first_touch_fit(MachineProfile& profile, const FirstTouchFit& fit, const std::string& source) {
  profile.compute.first_touch = fit.params;
  std::erase_if(profile.fitted, [](const FittedParameter& p) { return p.key.rfind("compute.first_touch.", 0) == 0; });
  if (!(fit.params.bandwidth_Bps > 0)) return;
  const auto src = source + " (fresh networks' first two steps)";
  record_fit(profile, {"compute.first_touch.activation_factor", fit.params.activation_factor, fit.activation_factor_std_error, src});
  record_fit(profile, {"compute.first_touch.param_factor", fit.params.param_factor, fit.param_factor_std_error, src});
  record_fit(profile, {"compute.first_touch.bandwidth_Bps", fit.params.bandwidth_Bps, fit.bandwidth_std_error_Bps, src});
}

}  // namespace mrplan
