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

// fixed + share * inv_rate, with the standard errors and the covariance of the two
struct StagingLine {
  double fixed_s = 0, inv_rate = 0, fixed_se = 0, inv_se = 0, cov_fixed_inv = 0;
  bool held = false;  // the fixed part near the prior's
};

// Least squares through shares that differ: the intercept is the fixed part.
StagingLine line_through_shares(const Eigen::VectorXd& share, const Eigen::VectorXd& y) {
  const auto n = share.size();
  Eigen::MatrixXd A(n, 2);
  A.col(0).setOnes();
  A.col(1) = share;
  Eigen::Vector2d b = A.colPivHouseholderQr().solve(y);
  if (b[0] < 0) b = {0.0, share.dot(y) / share.squaredNorm()};  // a negative start-up is none
  StagingLine l;
  l.fixed_s = b[0], l.inv_rate = b[1];
  if (n > 2) {
    const double s2 = (y - A * b).squaredNorm() / static_cast<double>(n - 2);
    const Eigen::Matrix2d cov = s2 * (A.transpose() * A).inverse();
    l.fixed_se = std::sqrt(cov(0, 0)), l.inv_se = std::sqrt(cov(1, 1)), l.cov_fixed_inv = b[0] > 0 ? cov(0, 1) : 0.0;
  }
  return l;
}

// One share a node: the rate through the fixed part the prior gives (its spread carried into the
// rate's), else through the profile's, and a note of what the runs cannot pin.
StagingLine line_through_one_share(const Eigen::VectorXd& share, const Eigen::VectorXd& y, double profile_fixed_s,
                                   const std::optional<StagingPrior>& prior, std::vector<std::string>& notes) {
  StagingLine l;
  l.fixed_s = profile_fixed_s;
  // a prior the runs' own times contradict (they staged in less) is not used, and said
  l.held = prior && prior->fixed.value < y.minCoeff();
  if (l.held) l.fixed_s = prior->fixed.value, l.fixed_se = prior->fixed.sd;
  if (prior && !l.held)
    notes.push_back(fmt::format("io.staging_fixed_s is not held near {} ({:.3g} s): the runs staged in {:.3g} s", prior->fixed.source,
                                prior->fixed.value, y.minCoeff()));
  const Eigen::ArrayXd per = (y.array() - l.fixed_s) / share.array();
  const auto n = static_cast<double>(share.size());
  l.inv_rate = per.mean();
  if (n > 1) l.inv_se = std::sqrt((per - l.inv_rate).square().sum() / (n - 1) / n);
  // the rate takes what the fixed part leaves: d(1/rate)/d(fixed) = -mean(1/share)
  const double leaves = -(1.0 / share.array()).mean();
  l.cov_fixed_inv = leaves * l.fixed_se * l.fixed_se, l.inv_se = std::hypot(l.inv_se, leaves * l.fixed_se);
  if (!l.held)
    notes.push_back(
        fmt::format("io.staging_fixed_s (staging's part that does not grow with a node's share) is not fitted: the runs staged "
                    "one share a node; runs at another node count pin it, or --priors-from gives it from machines "
                    "fitted at two (kept at {:.3g} s)",
                    l.fixed_s));
  return l;
}

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
  const StagingLine l =
      two_shares ? line_through_shares(share, y) : line_through_one_share(share, y, profile.io.staging_fixed_s, prior, out.notes);
  if (!(l.inv_rate > 0))
    fail_input(times.front().file, "staging_s", "the staging times do not grow with a node's share: no staging rate fits them");
  const double rate_GBps = 1e-9 / l.inv_rate;
  out.fitted.push_back({"io.staging_node_GBps", rate_GBps, rate_GBps * l.inv_se / l.inv_rate, source});
  if (two_shares || l.held) {
    out.fitted.push_back(
        {"io.staging_fixed_s", l.fixed_s, l.fixed_se, two_shares ? (fixed_source.empty() ? source : fixed_source) : prior->held_source});
    const double d_rate = -rate_GBps / l.inv_rate;  // d rate / d (1 / rate)
    const double v_rate = std::pow(rate_GBps * l.inv_se / l.inv_rate, 2), c = d_rate * l.cov_fixed_inv;
    out.covariance = {v_rate, c, c, l.fixed_se * l.fixed_se};
  }
  MachineProfile after = profile;
  after.io.staging_node_Bps = 1.0 / l.inv_rate, after.io.staging_fixed_s = l.fixed_s;
  for (const auto& t : times) out.after_s.push_back(staging_on(after, *t.plan));
  return out;
}

}  // namespace mrplan
