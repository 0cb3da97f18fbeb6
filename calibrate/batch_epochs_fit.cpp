#include "calibrate/batch_epochs_fit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <set>

#include "model/error_summary.hpp"
#include "model/errors.hpp"
#include "model/learning_curve.hpp"
#include "model/least_squares.hpp"
#include "model/profile_parameters.hpp"

namespace mrplan {

namespace {

// One run that reached its target: its global batch, epochs, and where the profile's dense curve
// crosses the run's target (its epochs at the reference batch, factor 1).
struct Run {
  const NamedRecord* named = nullptr;
  std::string machine;
  int batch = 0;
  double epochs = 0, curve_epochs = 0;
};

// Why a record gives no epochs to target at one global batch; empty when it does.
std::string unusable(const Record& r) {
  if (r.source != Source::measured) return "a prediction, not a measurement";
  if (r.stages.size() != 1 || r.stages[0].models.size() != 1 || r.stages[0].models[0].resolution != 1)
    return "not a baseline run (one dense stage)";
  if (!r.totals.reached_target) return "did not reach its target";
  if (r.stages[0].models[0].epochs < 1) return "reached its target in less than an epoch";
  return "";
}

struct Problem {
  ConvergenceParams base;
  std::vector<Run> runs;
  bool fit_critical = false;  // the runs span two or more global batches

  // theta: [log critical batch,] log factor
  ConvergenceParams params(const Eigen::VectorXd& theta) const {
    ConvergenceParams q = base;
    q.seed_epoch_factor = 1;
    if (fit_critical) q.critical_batch = std::exp(theta[0]);
    q.epoch_factor = std::exp(theta[theta.size() - 1]);
    return q;
  }
  // the crossing epoch the simulator predicts for a run (it stops at the next whole epoch)
  double predicted(const Eigen::VectorXd& theta, const Run& r) const {
    return r.curve_epochs * epoch_scale_for_batch(params(theta), r.batch);
  }
  // a run stops at the first whole epoch past the crossing: on average half an epoch after it
  Eigen::VectorXd residuals(const Eigen::VectorXd& theta) const {
    Eigen::VectorXd out(static_cast<Eigen::Index>(runs.size()));
    for (size_t i = 0; i < runs.size(); ++i)
      out[static_cast<Eigen::Index>(i)] = std::log(predicted(theta, runs[i])) - std::log(runs[i].epochs - 0.5);
    return out;
  }
};

// Start: the profile's critical batch (else the runs' median batch), the factor from the runs.
Eigen::VectorXd start_of(const Problem& pb) {
  std::vector<double> batches;
  for (const auto& r : pb.runs) batches.push_back(r.batch);
  const double critical = pb.base.critical_batch > 0 ? pb.base.critical_batch : median(batches);
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(pb.fit_critical ? 2 : 1);
  if (pb.fit_critical) theta[0] = std::log(critical);
  std::vector<double> ratio;
  for (const auto& r : pb.runs) ratio.push_back((r.epochs - 0.5) / pb.predicted(theta, r));
  theta[theta.size() - 1] = std::log(median(ratio));
  return theta;
}

// The workload's runs, the profile's own first, and what was skipped.
Problem gather(const ConvergenceParams& cv, const std::string& workload, const std::vector<NamedRecord>& own,
               const std::vector<NamedRecord>& others, BatchEpochsFit& fit) {
  Problem pb{cv, {}, false};
  auto add = [&](const NamedRecord& n, const std::string& machine) {
    if (n.record.workload != workload) return;
    if (const auto why = unusable(n.record); !why.empty()) return fit.skipped.push_back(fmt::format("{}: {}", n.file, why));
    const auto crossing = crossing_epoch(cv.dense_metric, n.record.target_value);
    if (!crossing || *crossing <= 0)
      return fit.skipped.push_back(fmt::format("{}: the profile's dense curve for {} never reaches its target {}", n.file, workload,
                                               n.record.target_value));
    const auto& s = n.record.stages[0];
    pb.runs.push_back({&n, machine, s.global_batch, s.models[0].epochs, *crossing});
  };
  for (const auto& n : own) add(n, "(fitted)");
  for (const auto& n : others) {
    if (std::any_of(own.begin(), own.end(), [&](const NamedRecord& o) { return o.file == n.file; })) continue;  // given twice
    add(n, n.record.machine);
  }
  std::set<int> batches;
  for (const auto& r : pb.runs) batches.insert(r.batch);
  pb.fit_critical = batches.size() > 1;
  return pb;
}

BatchEpochsFit fit_workload(MachineProfile& profile, const std::string& workload, const std::vector<NamedRecord>& own,
                            const std::vector<NamedRecord>& others) {
  BatchEpochsFit fit;
  fit.workload = workload;
  const std::string prefix = "convergence." + workload + ".";
  const auto cv = profile.convergence.find(workload);
  if (cv == profile.convergence.end()) {
    fit.at_prior.push_back(fmt::format("epochs to target: the profile has no convergence parameters for {} "
                                       "(calibrate convergence fits its learning curves)",
                                       workload));
    return fit;
  }
  const Problem pb = gather(cv->second, workload, own, others, fit);
  if (pb.runs.empty()) {
    fit.at_prior.push_back(prefix + "epoch_factor (no run reached its target)");
    return fit;
  }
  if (!pb.fit_critical)
    fit.at_prior.push_back(prefix + "critical_batch (the runs share one global batch: how the epochs grow with the batch "
                                     "needs runs at two; --epochs-from adds other machines')");
  const Eigen::VectorXd obs = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(pb.runs.size()));
  const auto f = levenberg_marquardt([&](const Eigen::VectorXd& t) { return pb.residuals(t); }, start_of(pb), obs, 200);
  std::vector<std::string> files;
  for (const auto& r : pb.runs) files.push_back(r.named->file);
  const std::string source = fmt::format("calibrate records, epochs to target: {}", fmt::join(files, ", "));
  auto add = [&](const std::string& key, Eigen::Index k) {
    const double value = std::exp(f.params[k]);
    fit.fitted.push_back({prefix + key, value, value * f.std_errors[k], source});
  };
  if (pb.fit_critical) add("critical_batch", 0);
  add("epoch_factor", f.params.size() - 1);
  // the runs' spread about the curve (seeds, and submissions tuned apart): what one more run may do
  if (const auto dof = static_cast<double>(pb.runs.size() - static_cast<size_t>(f.params.size())); dof >= 1) {
    const double cv = std::min(1.0, std::sqrt(f.rss / dof));
    fit.fitted.push_back({prefix + "seed_epochs_cv", cv, cv / std::sqrt(2 * dof), source + " (the runs' spread about the fit)"});
  }
  for (const auto& p : fit.fitted) {
    set_parameter(profile, p.key, p.value);
    record_fit(profile, p);
  }
  for (const auto& r : pb.runs)
    fit.observations.push_back({r.named->file, r.machine, r.batch, r.epochs, std::ceil(pb.predicted(f.params, r) - 1e-9)});
  return fit;
}

}  // namespace

std::vector<BatchEpochsFit> fit_batch_epochs(MachineProfile& profile, const std::vector<NamedRecord>& own,
                                             const std::vector<NamedRecord>& others) {
  std::vector<std::string> workloads;
  for (const auto& n : own)
    if (std::find(workloads.begin(), workloads.end(), n.record.workload) == workloads.end()) workloads.push_back(n.record.workload);
  for (const auto& n : others)
    if (std::find(workloads.begin(), workloads.end(), n.record.workload) == workloads.end())
      fail_input(n.file, "workload",
                 fmt::format("'{}' is not a workload of the fitted records ({}): other machines' epochs to target inform "
                             "only the workloads the profile is fitted for",
                             n.record.workload, fmt::join(workloads, ", ")));
  std::vector<BatchEpochsFit> out;
  for (const auto& w : workloads) out.push_back(fit_workload(profile, w, own, others));
  return out;
}

}  // namespace mrplan
