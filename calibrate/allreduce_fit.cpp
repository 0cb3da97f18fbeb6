#include "calibrate/allreduce_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "model/profile_parameters.hpp"
#include "model/errors.hpp"
#include "model/least_squares.hpp"

namespace mrplan {

AllreduceFit fit_ring_alpha_beta(const std::vector<AllreduceTiming>& timings) {
  std::set<double> sizes;
  for (const auto& t : timings) {
    if (t.ranks < 2) fail_input("", "allreduce", "an allreduce over one rank moves nothing: calibrate over 2 or more ranks (mpirun -np 2, srun -n 2, jsrun, flux run)");
    if (!(t.seconds > 0) || !(t.bytes > 0)) fail_input("", "allreduce", fmt::format("timing of {} bytes is not positive", t.bytes));
    sizes.insert(t.bytes);
  }
  if (sizes.size() < 2) fail_input("", "allreduce", "the alpha-beta fit needs timings at two message sizes or more");
  const auto n = static_cast<Eigen::Index>(timings.size());
  Eigen::MatrixXd A(n, 2);
  Eigen::VectorXd b(n), w(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& t = timings[static_cast<size_t>(i)];
    const double steps = 2.0 * (t.ranks - 1);
    A(i, 0) = steps;
    A(i, 1) = steps / t.ranks * t.bytes;
    b(i) = t.seconds;
    w(i) = 1.0 / (t.seconds * t.seconds);
  }
  const auto f = weighted_linear_least_squares(A, b, w);
  const double alpha = f.params[0], inv_bw = f.params[1];
  if (!(inv_bw > 0))
    fail_input("", "allreduce", "the timings do not grow with message size: no bandwidth can be fitted (are the sizes too small?)");
  AllreduceFit fit;
  fit.link.alpha_s = std::max(0.0, alpha);
  fit.link.bandwidth_Bps = 1.0 / inv_bw;
  fit.alpha_std_error_s = f.std_errors[0];
  fit.bandwidth_std_error_Bps = f.std_errors[1] / (inv_bw * inv_bw);  // delta method for 1/x
  // With w = 1/t^2 the weighted targets are all 1, so the solver's R^2 is undefined; report it on
  // log time instead, where sizes from 4 B to 256 MiB count alike.
  const Eigen::VectorXd model = A * f.params;
  double mean_log = 0, ss_tot = 0, ss_res = 0;
  for (Eigen::Index i = 0; i < n; ++i) mean_log += std::log(b(i)) / static_cast<double>(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    fit.relative_residuals.push_back((model(i) - b(i)) / b(i));
    ss_tot += std::pow(std::log(b(i)) - mean_log, 2);
    ss_res += std::pow(std::log(std::max(model(i), 1e-30)) - std::log(b(i)), 2);
  }
  fit.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 1.0;
  return fit;
}

void apply_allreduce_fit(MachineProfile& profile, const AllreduceFit& fit, const std::string& source) {
  profile.comm.intra_node = fit.link;
  profile.comm.bandwidth_efficiency = 1.0;
  profile.comm.call_overhead_s = 0.0;
  std::erase_if(profile.fitted, [](const FittedParameter& p) { return p.key.rfind("comm.", 0) == 0; });
  record_fit(profile, {"comm.intra_node.alpha_s", fit.link.alpha_s, fit.alpha_std_error_s, source});
  record_fit(profile, {"comm.intra_node.bandwidth_Bps", fit.link.bandwidth_Bps, fit.bandwidth_std_error_Bps, source});
}

}  // namespace mrplan
