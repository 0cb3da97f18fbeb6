#include "calibrate/staging_fit.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "model/errors.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

namespace {

// The bytes a node stages for `plan`: its staging time at one byte per second, no fixed part and
// no shared limit.
double node_share_bytes(const MachineProfile& profile, const Plan& plan) {
  MachineProfile unit = profile;
  unit.io.staging_fixed_s = 0, unit.io.staging_node_Bps = 1.0, unit.io.pfs.aggregate_bandwidth_Bps = 0;
  return prepare(plan, unit).staging_s;
}

double staging_on(const MachineProfile& profile, const Plan& plan) { return prepare(plan, profile).staging_s; }

}  // namespace

StagingFit fit_staging(const MachineProfile& profile, const std::vector<StagingTime>& times, const std::string& source,
                       const std::optional<StagingPrior>& prior, const std::string& fixed_source) {
  StagingFit out;
  const auto n = static_cast<Eigen::Index>(times.size());
  Eigen::VectorXd share(n), y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    share[i] = node_share_bytes(profile, *times[i].plan);
    if (!(share[i] > 0))
      fail_input(times[i].file, "staging_s",
                 fmt::format("the run logged {:.1f} s of staging, but on {} a node's share of its dataset fits none of the tiers it "
                             "could be copied to (host memory, NVMe): give the profile's capacities (profile compose --host-memory-GB, "
                             "--nvme-TB) or the plan's io.staging",
                             times[i].measured_s, profile.name));
    y[i] = times[i].measured_s;
    out.before_s.push_back(staging_on(profile, *times[i].plan));
  }
  const bool two_shares = share.maxCoeff() > 1.05 * share.minCoeff();
  double fixed_s = profile.io.staging_fixed_s, inv_rate = 0, fixed_se = 0, inv_se = 0, cov_fixed_inv = 0;
  bool held = false;  // near the prior
  if (two_shares) {
    Eigen::MatrixXd A(n, 2);
    A.col(0).setOnes();
    A.col(1) = share;
    Eigen::Vector2d b = A.colPivHouseholderQr().solve(y);
    if (b[0] < 0) b = {0.0, share.dot(y) / share.squaredNorm()};  // a negative start-up is none
    fixed_s = b[0], inv_rate = b[1];
    if (n > 2) {
      const double s2 = (y - A * b).squaredNorm() / static_cast<double>(n - 2);
      const Eigen::Matrix2d cov = s2 * (A.transpose() * A).inverse();
      fixed_se = std::sqrt(cov(0, 0)), inv_se = std::sqrt(cov(1, 1)), cov_fixed_inv = b[0] > 0 ? cov(0, 1) : 0.0;
    }
  } else {
    // a prior the runs' own times contradict (they staged in less) is not used, and said
    held = prior && prior->fixed.value < y.minCoeff();
    if (held) fixed_s = prior->fixed.value, fixed_se = prior->fixed.sd;
    if (prior && !held)
      out.notes.push_back(fmt::format("io.staging_fixed_s is not held near {} ({:.3g} s): the runs staged in {:.3g} s", prior->fixed.source,
                                      prior->fixed.value, y.minCoeff()));
    const Eigen::ArrayXd per = (y.array() - fixed_s) / share.array();
    inv_rate = per.mean();
    if (n > 1) inv_se = std::sqrt((per - inv_rate).square().sum() / static_cast<double>(n - 1) / static_cast<double>(n));
    // the rate takes what the fixed part leaves: d(1/rate)/d(fixed) = -mean(1/share)
    const double leaves = -(1.0 / share.array()).mean();
    cov_fixed_inv = leaves * fixed_se * fixed_se, inv_se = std::hypot(inv_se, leaves * fixed_se);
    if (!held)
      out.notes.push_back(fmt::format("io.staging_fixed_s (staging's part that does not grow with a node's share) is not fitted: the runs staged "
                                      "one share a node; runs at another node count pin it, or --priors-from gives it from machines "
                                      "fitted at two (kept at {:.3g} s)",
                                      fixed_s));
  }
  if (!(inv_rate > 0))
    fail_input(times.front().file, "staging_s", "the staging times do not grow with a node's share: no staging rate fits them");
  const double rate_GBps = 1e-9 / inv_rate;
  out.fitted.push_back({"io.staging_node_GBps", rate_GBps, rate_GBps * inv_se / inv_rate, source});
  if (two_shares || held) {
    out.fitted.push_back({"io.staging_fixed_s", fixed_s, fixed_se, two_shares ? (fixed_source.empty() ? source : fixed_source) : prior->held_source});
    const double d_rate = -rate_GBps / inv_rate;  // d rate / d (1 / rate)
    const double v_rate = std::pow(rate_GBps * inv_se / inv_rate, 2), c = d_rate * cov_fixed_inv;
    out.covariance = {v_rate, c, c, fixed_se * fixed_se};
  }
  MachineProfile after = profile;
  after.io.staging_node_Bps = 1.0 / inv_rate, after.io.staging_fixed_s = fixed_s;
  for (const auto& t : times) out.after_s.push_back(staging_on(after, *t.plan));
  return out;
}

}  // namespace mrplan
