#include "calibrate/batch_epochs_fit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
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
  size_t system = 0;  // index into Problem::systems
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

// A system's slots in the parameter vector (-1: none).
struct System {
  std::string machine;
  std::set<int> batches;
  int runs = 0;
  Eigen::Index u = -1, w = -1;  // its effect on log f, and on log B_crit
};

// The spreads' floors (log space): integer epochs alone spread a run by a few percent, and a spread
// estimated at 0 from three systems would let one system's effect stand unshrunk.
constexpr double kMinSeedSd = 0.03, kMinSystemSd = 0.02, kMinCriticalSd = 0.05;

struct Problem {
  ConvergenceParams base;
  std::vector<Run> runs;
  std::vector<System> systems;  // [0]: the fitted records' own (perhaps without runs)
  bool fit_critical = false;    // the runs span two or more global batches
  bool effects = false;         // two or more systems have runs: per-system effects
  double seed_sd = 0.1, system_sd = 0.3, critical_sd = 0.5;
  bool pin_one_batch_w = false;  // the unshrunk first pass: a system at one batch keeps w = 0
  Eigen::Index size = 0;  // theta: [log B_crit,] log f, then the systems' u and w

  Eigen::Index factor_index() const { return fit_critical ? 1 : 0; }
  // only where the critical batch is fitted (a system's own effect needs two batches, so the runs span two)
  double log_critical(const Eigen::VectorXd& t, const System& s) const { return t[0] + (s.w >= 0 ? t[s.w] : 0); }
  double log_factor(const Eigen::VectorXd& t, const System& s) const { return t[factor_index()] + (s.u >= 0 ? t[s.u] : 0); }
  ConvergenceParams params(const Eigen::VectorXd& t, const System& s) const {
    ConvergenceParams q = base;
    q.seed_epoch_factor = 1;
    if (fit_critical) q.critical_batch = std::exp(log_critical(t, s));
    q.epoch_factor = std::exp(log_factor(t, s));
    return q;
  }
  // the crossing epoch the simulator predicts for a run (it stops at the next whole epoch)
  double predicted(const Eigen::VectorXd& t, const Run& r) const {
    return r.curve_epochs * epoch_scale_for_batch(params(t, systems[r.system]), r.batch);
  }
  // a run stops at the first whole epoch past the crossing: on average half an epoch after it. Each
  // residual in units of its spread; the effects' priors as residuals of their own (MAP).
  Eigen::VectorXd residuals(const Eigen::VectorXd& t) const {
    Eigen::VectorXd out(static_cast<Eigen::Index>(runs.size()) + size - factor_index() - 1);
    Eigen::Index k = 0;
    for (const auto& r : runs) out[k++] = (std::log(predicted(t, r)) - std::log(r.epochs - 0.5)) / seed_sd;
    for (const auto& s : systems) {
      if (s.u >= 0) out[k++] = t[s.u] / system_sd;
      if (s.w >= 0) out[k++] = t[s.w] / (pin_one_batch_w && s.batches.size() < 2 ? 1e-4 : critical_sd);
    }
    return out;
  }
};

// Start: the profile's critical batch (else the runs' median batch), the factor from the runs.
Eigen::VectorXd start_of(const Problem& pb) {
  std::vector<double> batches;
  for (const auto& r : pb.runs) batches.push_back(r.batch);
  const double critical = pb.base.critical_batch > 0 ? pb.base.critical_batch : median(batches);
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(pb.size);
  if (pb.fit_critical) theta[0] = std::log(critical);
  std::vector<double> ratio;
  for (const auto& r : pb.runs) ratio.push_back((r.epochs - 0.5) / pb.predicted(theta, r));
  theta[pb.factor_index()] = std::log(median(ratio));
  return theta;
}

// The workload's runs, the profile's own first (system 0), the others by machine, and what was skipped.
Problem gather(const ConvergenceParams& cv, const std::string& workload, const std::vector<NamedRecord>& own,
               const std::vector<NamedRecord>& others, BatchEpochsFit& fit) {
  Problem pb{cv, {}, {{"(fitted)", {}, 0}}};
  auto add = [&](const NamedRecord& n, const std::string& machine) {
    if (n.record.workload != workload) return;
    if (const auto why = unusable(n.record); !why.empty()) return fit.skipped.push_back(fmt::format("{}: {}", n.file, why));
    const auto crossing = crossing_epoch(cv.dense_metric, n.record.target_value);
    if (!crossing || *crossing <= 0)
      return fit.skipped.push_back(fmt::format("{}: the profile's dense curve for {} never reaches its target {}", n.file, workload,
                                               n.record.target_value));
    auto at = std::find_if(pb.systems.begin(), pb.systems.end(), [&](const System& s) { return s.machine == machine; });
    if (at == pb.systems.end()) at = pb.systems.insert(pb.systems.end(), System{machine, {}, 0});
    const auto& s = n.record.stages[0];
    at->batches.insert(s.global_batch), ++at->runs;
    pb.runs.push_back({&n, static_cast<size_t>(at - pb.systems.begin()), s.global_batch, s.models[0].epochs, *crossing});
  };
  for (const auto& n : own) add(n, "(fitted)");
  for (const auto& n : others) {
    if (std::any_of(own.begin(), own.end(), [&](const NamedRecord& o) { return o.file == n.file; })) continue;  // given twice
    add(n, n.record.machine);
  }
  std::set<int> batches;
  for (const auto& r : pb.runs) batches.insert(r.batch);
  pb.fit_critical = batches.size() > 1;
  pb.effects = std::count_if(pb.systems.begin(), pb.systems.end(), [](const System& s) { return s.runs > 0; }) >= 2;
  pb.size = pb.fit_critical ? 2 : 1;
  if (pb.effects)
    for (auto& s : pb.systems) {
      if (s.runs > 0) s.u = pb.size++;
      // one batch cannot tell u from w: the prior splits its deviation between them (fit_with_spreads)
      if (pb.fit_critical && s.runs > 0) s.w = pb.size++;
    }
  return pb;
}

// The spreads by moments (DerSimonian & Laird 1986, "Meta-analysis in clinical trials"): the
// systems' effects fitted unshrunk first (flat priors), the seeds' spread from the runs about their
// own system's curve, the between-system spreads from the effects' variance less what the seeds
// alone give a system of n runs (sigma^2 / n); then the MAP fit with those spreads. One pass: a
// spread re-estimated from shrunk effects only shrinks further.
FitResult fit_with_spreads(Problem& pb) {
  auto solve = [&](const Eigen::VectorXd& start) {
    return levenberg_marquardt([&](const Eigen::VectorXd& t) { return pb.residuals(t); }, start,
                               Eigen::VectorXd::Zero(pb.residuals(start).size()), 200);
  };
  constexpr double kFlat = 10;
  if (pb.effects) pb.system_sd = pb.critical_sd = kFlat, pb.pin_one_batch_w = true;
  FitResult f = solve(start_of(pb));
  pb.pin_one_batch_w = false;
  double rss = 0;
  for (const auto& r : pb.runs) rss += std::pow(std::log(pb.predicted(f.params, r)) - std::log(r.epochs - 0.5), 2);
  const auto pinned = std::count_if(pb.systems.begin(), pb.systems.end(), [](const System& s) { return s.w >= 0 && s.batches.size() < 2; });
  const double dof = static_cast<double>(pb.runs.size()) - static_cast<double>(pb.size - pinned);
  if (dof >= 1) pb.seed_sd = std::max(kMinSeedSd, std::sqrt(rss / dof));
  if (!pb.effects) return f;
  std::vector<double> u, w, noise;
  for (const auto& s : pb.systems) {
    if (s.u >= 0) u.push_back(f.params[s.u]), noise.push_back(pb.seed_sd * pb.seed_sd / s.runs);
    if (s.w >= 0 && s.batches.size() > 1) w.push_back(f.params[s.w]);
  }
  auto between = [](const std::vector<double>& x, double noise2, double floor, double fallback) {
    if (x.size() < 2) return fallback;
    double mean = 0, ss = 0;
    for (double v : x) mean += v / static_cast<double>(x.size());
    for (double v : x) ss += (v - mean) * (v - mean);
    return std::max(floor, std::sqrt(std::max(0.0, ss / static_cast<double>(x.size() - 1) - noise2)));
  };
  double noise2 = 0;
  for (double v : noise) noise2 += v / static_cast<double>(noise.size());
  pb.system_sd = between(u, noise2, kMinSystemSd, kMinSystemSd);
  pb.critical_sd = between(w, 0.0, kMinCriticalSd, 0.5);  // two batches of three runs pin a system's own well
  return solve(f.params);
}

void describe_systems(const Problem& pb, const FitResult& f, BatchEpochsFit& fit) {
  fit.population_factor = std::exp(f.params[pb.factor_index()]);
  fit.population_critical = pb.fit_critical ? std::exp(f.params[0]) : pb.base.critical_batch;
  fit.seed_sd = pb.seed_sd, fit.system_sd = pb.effects ? pb.system_sd : 0, fit.critical_sd = pb.effects ? pb.critical_sd : 0;
  if (!pb.effects) return;
  for (const auto& s : pb.systems) {
    const double n = s.runs / (pb.seed_sd * pb.seed_sd), prior = 1 / (pb.system_sd * pb.system_sd);
    fit.systems.push_back({s.machine, s.runs, static_cast<int>(s.batches.size()), s.u >= 0 ? std::exp(f.params[s.u]) : 1.0,
                           s.w >= 0 ? std::exp(pb.log_critical(f.params, s)) : 0.0, prior / (n + prior)});
  }
}

// The posterior covariance of the log parameters: with effects the residuals are whitened by their
// spreads, so it is (J'J)^-1 and the fit's rss/dof scaling is taken back out; one curve keeps the
// fit's own. Infinite on the diagonal: the runs do not pin it.
Eigen::MatrixXd log_covariance(const Problem& pb, const FitResult& f) {
  if (!pb.effects) return f.covariance;
  const auto m = static_cast<double>(pb.residuals(f.params).size()), p = static_cast<double>(pb.size);
  return f.covariance / (m > p ? f.rss / (m - p) : 1.0);
}

// The fitted system's own curve, [critical batch,] epoch factor: each a sum of the population's log
// parameter and the system's effect, so their covariance is a' C b over those slots (a system
// without runs adds the between-system spreads). Then the seed spread within a system: the effects'
// uncertainty is drawn with the parameters, not folded into the seeds.
struct OwnCurve {
  std::vector<FittedParameter> fitted;
  std::vector<std::string> keys;  // [critical_batch,] epoch_factor
  std::vector<double> covariance; // of their logs, row-major
};

OwnCurve system_parameters(const Problem& pb, const FitResult& f, const std::string& prefix, const std::string& source,
                           const std::string& whose) {
  OwnCurve out;
  const System& mine = pb.systems[0];
  const Eigen::MatrixXd C = log_covariance(pb, f);
  std::vector<Eigen::VectorXd> combos;
  std::vector<double> extra;  // a system without runs: the spread of the systems about the population
  if (pb.fit_critical) {
    Eigen::VectorXd a = Eigen::VectorXd::Zero(pb.size);
    a[0] = 1;
    if (mine.w >= 0) a[mine.w] = 1;
    combos.push_back(a), extra.push_back(pb.effects && mine.w < 0 ? pb.critical_sd * pb.critical_sd : 0.0);
    out.keys.push_back(prefix + "critical_batch");
  }
  Eigen::VectorXd a = Eigen::VectorXd::Zero(pb.size);
  a[pb.factor_index()] = 1;
  if (mine.u >= 0) a[mine.u] = 1;
  combos.push_back(a), extra.push_back(pb.effects && mine.u < 0 ? pb.system_sd * pb.system_sd : 0.0);
  out.keys.push_back(prefix + "epoch_factor");
  const size_t n = combos.size();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      double c = combos[i].dot(C * combos[j]) + (i == j ? extra[i] : 0.0);
      if (!std::isfinite(c)) c = i == j ? std::numeric_limits<double>::infinity() : 0.0;
      out.covariance.push_back(c);
    }
  const double values[2] = {pb.fit_critical ? std::exp(pb.log_critical(f.params, mine)) : 0.0, std::exp(pb.log_factor(f.params, mine))};
  for (size_t i = 0; i < n; ++i) {
    const double value = values[2 - n + i];
    out.fitted.push_back({out.keys[i], value, value * std::sqrt(out.covariance[i * n + i]), source + whose});
  }
  if (pb.effects || static_cast<double>(pb.runs.size()) - static_cast<double>(pb.size) >= 1) {
    const double dof = std::max(1.0, static_cast<double>(pb.runs.size()) - static_cast<double>(pb.systems.size()));
    out.fitted.push_back({prefix + "seed_epochs_cv", pb.seed_sd, pb.seed_sd / std::sqrt(2 * dof),
                          source + (pb.effects ? " (a seed's spread: the runs about their own system's curve)" : " (the runs' spread about the fit)")});
  }
  return out;
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
  Problem pb = gather(cv->second, workload, own, others, fit);
  if (pb.runs.empty()) {
    fit.at_prior.push_back(prefix + "epoch_factor (no run reached its target)");
    return fit;
  }
  if (!pb.fit_critical)
    fit.at_prior.push_back(prefix + "critical_batch (the runs share one global batch: how the epochs grow with the batch "
                                     "needs runs at two; --epochs-from adds other machines')");
  const FitResult f = fit_with_spreads(pb);
  describe_systems(pb, f, fit);
  const System& mine = pb.systems[0];
  std::vector<std::string> files;
  for (const auto& r : pb.runs) files.push_back(r.named->file);
  const std::string source = fmt::format("calibrate records, epochs to target: {}", fmt::join(files, ", "));
  const std::string whose = !pb.effects ? "" : mine.runs > 0 ? fmt::format(" (this system's effect from its {} run(s))", mine.runs)
                                                             : " (a system without runs: the population's)";
  const OwnCurve curve = system_parameters(pb, f, prefix, source, whose);
  fit.fitted = curve.fitted;
  for (const auto& p : fit.fitted) {
    set_parameter(profile, p.key, p.value);
    record_fit(profile, p);
  }
  record_correlations(profile, curve.keys, curve.covariance);
  for (const auto& r : pb.runs)
    fit.observations.push_back({r.named->file, pb.systems[r.system].machine, r.batch, r.epochs, std::ceil(pb.predicted(f.params, r) - 1e-9)});
  return fit;
}

}  // namespace

std::vector<BatchEpochsFit> fit_batch_epochs(MachineProfile& profile, const std::vector<NamedRecord>& own,
                                             const std::vector<NamedRecord>& others) {
  std::vector<std::string> workloads;
  for (const auto& n : own)
    if (std::find(workloads.begin(), workloads.end(), n.record.workload) == workloads.end()) workloads.push_back(n.record.workload);
  for (const auto& n : others)  // without runs of its own, a system is fitted the population's curves
    if (own.empty() && std::find(workloads.begin(), workloads.end(), n.record.workload) == workloads.end())
      workloads.push_back(n.record.workload);
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
