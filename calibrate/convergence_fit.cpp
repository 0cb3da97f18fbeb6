#include "calibrate/convergence_fit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include "model/profile_parameters.hpp"
#include "model/errors.hpp"
#include "model/method_table.hpp"
#include "model/learning_curve.hpp"
#include "model/least_squares.hpp"
#include "model/method_rules.hpp"
#include "model/plan_yaml.hpp"

namespace mrplan {

CurveFit fit_learning_curve(const std::vector<std::pair<double, double>>& pts, const std::string& what, CurveForm form) {
  if (pts.size() < 4) fail_input("", what, fmt::format("{} epochs measured: a learning curve needs four or more", pts.size()));
  double lo = 1e300, hi = -1e300, first = pts.front().second;
  for (const auto& [e, v] : pts) {
    if (!std::isfinite(v)) fail_input("", what, fmt::format("epoch {}: the value is not finite", e));
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  Eigen::VectorXd obs(static_cast<Eigen::Index>(pts.size()));
  for (size_t i = 0; i < pts.size(); ++i) obs(static_cast<Eigen::Index>(i)) = pts[i].second;
  auto curve_of = [form](const Eigen::VectorXd& x) {
    LearningCurve c;
    c.form = form, c.floor = x(0), c.amplitude = x(1), c.scale = std::exp(x(2));
    return c;
  };
  auto residuals = [&](const Eigen::VectorXd& x) {
    const auto c = curve_of(x);
    Eigen::VectorXd r(obs.size());
    for (size_t i = 0; i < pts.size(); ++i) r(static_cast<Eigen::Index>(i)) = curve_value(c, pts[i].first) - pts[i].second;
    return r;
  };
  double max_epoch = 1;
  for (const auto& p : pts) max_epoch = std::max(max_epoch, p.first);
  // from the first value towards the lowest (a loss) or the highest (an accuracy), over a third of the epochs seen
  const double last = pts.back().second, end = first >= last ? lo : hi;
  Eigen::VectorXd start(3);
  start << end, 2 * (first - end) + (first >= last ? 1e-6 : -1e-6) * (hi - lo + 1),
      form == CurveForm::exp ? std::log(std::max(0.5, max_epoch / 3)) : std::log(0.5);  // power: exponent 1/2
  const auto f = levenberg_marquardt(residuals, start, obs, 400);
  CurveFit out;
  out.curve = curve_of(f.params);
  out.floor_std_error = f.std_errors(0);
  out.amplitude_std_error = f.std_errors(1);
  out.scale_std_error = out.curve.scale * f.std_errors(2);  // delta method for exp
  out.points = static_cast<int>(pts.size());
  out.rss = f.rss;
  return out;
}

CurveFit fit_learning_curve_either(const std::vector<std::pair<double, double>>& pts, const std::string& what) {
  auto a = fit_learning_curve(pts, what, CurveForm::exp), b = fit_learning_curve(pts, what, CurveForm::power);
  return b.rss < a.rss ? b : a;
}

namespace {

// MRMF: the fine-tuning epochs each record's chain of fusions predicts for the fitted curves and
// transfer efficiency (model/learning_curve's progress, as the simulator chains it), against those it
// needed, half an epoch before the whole epoch it stopped at; fits fusion_efficiency.
void fit_fusion(ConvergenceFit& fit, const std::vector<std::pair<Plan, const Record*>>& runs) {
  const auto& p = fit.params;
  const double e0 = fit.baseline_epochs_to_target;
  auto predicted = [&](const ConvergenceParams& q, const Plan& plan, const Record& r) {
    double handed = 0;
    for (size_t i = 0; i + 1 < plan.stages.size(); ++i) {
      const auto& st = plan.stages[i];
      std::vector<double> progress;
      for (size_t j = 0; j < st.models.size(); ++j) {
        const auto& m = r.stages.at(i).models.at(j);
        progress.push_back(progress_after(q, m.resolution, e0, start_progress(plan, i, j, handed, pretrained_start(q)),
                                          m.epochs / epoch_scale_for_batch(q, m.gpus * m.local_batch, m.recipe)));
      }
      handed = handed_on_progress(q, st, progress);
    }
    return dense_epochs_after_progress(e0, handed);
  };
  Eigen::VectorXd obs(static_cast<Eigen::Index>(runs.size()));
  for (size_t i = 0; i < runs.size(); ++i) obs(static_cast<Eigen::Index>(i)) = runs[i].second->stages.back().models[0].epochs - 0.5;
  auto residuals = [&](const Eigen::VectorXd& x) {
    ConvergenceParams q = p;
    q.fusion_efficiency = x(0);
    Eigen::VectorXd res(obs.size());
    for (size_t i = 0; i < runs.size(); ++i) res(static_cast<Eigen::Index>(i)) = predicted(q, runs[i].first, *runs[i].second) - obs(i);
    return res;
  };
  // from no benefit beyond MRT's transfer, as the transfer fit starts from none
  const auto f = levenberg_marquardt(residuals, Eigen::VectorXd::Constant(1, 0.0), obs, 200);
  fit.params.fusion_efficiency = f.params(0);
  fit.fusion_efficiency_std_error = f.std_errors(0);
  fit.fusion_fitted = true;
}

// Transfer learning: the epochs to target each record's fine-tuning predicts from a head start k,
// max(1, e0 (1 - k)) at its batch (as the simulator has it), against those it needed, half an epoch
// before the whole epoch it stopped at; fits pretrained_progress.
void fit_pretrained(ConvergenceFit& fit, const std::vector<const Record*>& runs) {
  const double e0 = fit.baseline_epochs_to_target;
  Eigen::VectorXd obs(static_cast<Eigen::Index>(runs.size()));
  for (size_t i = 0; i < runs.size(); ++i) obs(static_cast<Eigen::Index>(i)) = runs[i]->stages.back().models[0].epochs - 0.5;
  auto residuals = [&](const Eigen::VectorXd& x) {
    Eigen::VectorXd res(obs.size());
    for (size_t i = 0; i < runs.size(); ++i)
      res(static_cast<Eigen::Index>(i)) =
          dense_epochs_after_progress(e0, x(0)) * epoch_scale_for_batch(fit.params, runs[i]->stages.back().global_batch) - obs(i);
    return res;
  };
  const auto f = levenberg_marquardt(residuals, Eigen::VectorXd::Constant(1, 0.0), obs, 200);  // from no head start
  fit.params.pretrained_progress = std::clamp(f.params(0), -1.0, 1.0);
  fit.pretrained_progress_std_error = f.std_errors(0);
  fit.pretrained_fitted = true;
}

}  // namespace

namespace {

// A learning curve the points do not pin: an unbounded standard error, or one as large as the
// curve's own range (a floor of -540 +- 9e6 is no measurement).
bool identified(const CurveFit& c) {
  const double range = std::abs(c.curve.amplitude);
  return std::isfinite(c.floor_std_error) && std::isfinite(c.amplitude_std_error) && std::isfinite(c.scale_std_error) &&
         c.floor_std_error < range && c.amplitude_std_error < range && c.scale_std_error < c.curve.scale;
}

// What fit.kept_at_prior says, for the parts the records leave unidentified.
void note_unidentified(ConvergenceFit& fit) {
  const std::pair<const char*, const CurveFit*> curves[] = {
      {"dense_metric", &fit.dense_metric}, {"coarse_loss", &fit.coarse_loss}, {"coarse_metric", &fit.coarse_metric}};
  for (const auto& [name, c] : curves)
    if (c->points > 0 && !identified(*c))
      fit.kept_at_prior.push_back(fmt::format("{} (the fit's floor {:.4g} +- {:.2g}, scale {:.4g} +- {:.2g}: the epochs do not pin it; "
                                              "runs that go on past the curve's knee do)",
                                              name, c->curve.floor, c->floor_std_error, c->curve.scale, c->scale_std_error));
  if (!fit.transfer_fitted)
    fit.kept_at_prior.push_back("transfer_efficiency (no MRT run reached the target: runs that stop short only bound it)");
  else if (!(std::isfinite(fit.transfer_efficiency_std_error) && fit.transfer_efficiency_std_error < std::max(0.05, std::abs(fit.params.transfer_efficiency))))
    fit.kept_at_prior.push_back(fmt::format("transfer_efficiency ({:.3g} +- {:.2g}: the MRT runs do not pin it)", fit.params.transfer_efficiency,
                                            fit.transfer_efficiency_std_error));
  if (fit.pretrained_fitted && !(std::isfinite(fit.pretrained_progress_std_error) && fit.pretrained_progress_std_error < 0.5))
    fit.kept_at_prior.push_back(fmt::format("pretrained_progress ({:.3g} +- {:.2g}: the transfer runs do not pin it)",
                                            fit.params.pretrained_progress, fit.pretrained_progress_std_error));
  if (fit.fusion_fitted && !(std::isfinite(fit.fusion_efficiency_std_error) &&
                             fit.fusion_efficiency_std_error < std::max(0.05, std::abs(fit.params.fusion_efficiency))))
    fit.kept_at_prior.push_back(fmt::format("fusion_efficiency ({:.3g} +- {:.2g}: the MRMF runs do not pin it)", fit.params.fusion_efficiency,
                                            fit.fusion_efficiency_std_error));
}

bool kept(const ConvergenceFit& fit, const std::string& name) {
  return std::any_of(fit.kept_at_prior.begin(), fit.kept_at_prior.end(), [&](const std::string& k) { return k.starts_with(name + " "); });
}

using Points = std::vector<std::pair<double, double>>;  // (epoch, value)

// What each kind of run gives the fit: the curves' points, each MRT run's switch and dense epochs,
// the MRMF and transfer-learning runs that reached the target.
struct MrtRun {
  double switch_epochs, dense_epochs;
};
struct ConvergenceRuns {
  Points dense, coarse_loss, coarse_metric;
  std::vector<MrtRun> mrt;
  std::vector<std::pair<Plan, const Record*>> mrmf;  // that reached the target
  std::vector<const Record*> pretrained;             // transfer learning's, that reached the target
  double global_batch = 0;
  int coarse_resolution = 2;
};

// One fit, one workload and target: a record of another is refused, naming it.
void check_same_target(const ConvergenceFit& fit, bool maximize, const std::string& file, const Record& r) {
  if (r.source != Source::measured) fail_input(file, "source", "calibrate convergence fits measured records; this one is a prediction");
  if (r.workload != fit.workload)
    fail_input(file, "workload",
               fmt::format("'{}' differs from '{}' of the first record: fit one workload at a time", r.workload, fit.workload));
  if (r.target_value != fit.target)
    fail_input(file, "target_value", fmt::format("{} differs from {} of the first record: one target per fit", r.target_value, fit.target));
  if (r.target_maximize != maximize) fail_input(file, "target.goal", "differs from the first record's: one target per fit");
}

// The validation metric as its best so far: a run reaches the target at the first epoch it crosses
// (MLPerf's time to train), so a later epoch that evaluates worse changes nothing, and a noisy
// metric (batch norm over small batches) fitted as it comes can miss the target altogether.
void take_epochs(const std::string& file, const ModelRecord& s, bool maximize, Points& metric, Points* loss) {
  std::optional<double> best;
  for (const auto& e : s.per_epoch) {
    if (!e.metric) fail_input(file, s.name, fmt::format("epoch {} has no validation metric", e.epoch));
    best = !best ? *e.metric : maximize ? std::max(*best, *e.metric) : std::min(*best, *e.metric);
    metric.push_back({e.epoch, *best});
    if (loss) {
      if (!e.loss) fail_input(file, s.name, fmt::format("epoch {} has no training loss", e.epoch));
      loss->push_back({e.epoch, *e.loss});
    }
  }
}

// One record into what its method gives the fit (method_row: fine-tuning, split GPUs), counted in `fit`.
void sort_run(const NamedRecord& named, bool maximize, ConvergenceFit& fit, ConvergenceRuns& runs) {
  const std::string& file = named.file;
  const Record& r = named.record;
  const bool one_model = std::all_of(r.stages.begin(), r.stages.end(), [](const StageRecord& s) { return s.models.size() == 1; });
  if (method_row(r.method).pretrained) {
    if (r.stages.size() != 1 || !one_model || r.stages[0].single().resolution != 1)
      fail_input(file, "stages", "a transfer-learning record fine-tunes one model at resolution 1 in one stage");
    if (r.stages[0].single().stop_reason == StopReason::target_reached) runs.pretrained.push_back(&r);
    ++fit.transfer_runs;
  } else if (method_row(r.method).splits_gpus) {
    if (r.plan_spec.empty()) fail_input(file, "plan_spec", "an MRMF record needs the plan it ran: what each model started from");
    if (r.stages.back().models.at(0).stop_reason == StopReason::target_reached)
      runs.mrmf.push_back({plan_from_yaml_text(r.plan_spec, file + ": plan_spec"), &r});
    ++fit.mrmf_runs;
  } else if (r.stages.size() == 1 && one_model && r.stages[0].single().resolution == 1) {
    take_epochs(file, r.stages[0].single(), maximize, runs.dense, nullptr);
    runs.global_batch = r.stages[0].global_batch;
    ++fit.baseline_runs;
  } else if (r.stages.size() == 2 && one_model && r.stages[0].single().resolution > 1 && r.stages[1].single().resolution == 1) {
    const auto& coarse = r.stages[0].single();
    const auto& dense = r.stages[1].single();
    take_epochs(file, coarse, maximize, runs.coarse_metric, &runs.coarse_loss);
    runs.coarse_resolution = coarse.resolution;
    if (dense.stop_reason == StopReason::target_reached) runs.mrt.push_back({coarse.epochs, dense.epochs});
    ++fit.mrt_runs;
  } else {
    fail_input(file, "stages", "neither a baseline (one dense stage) nor an MRT run (coarse, then dense)");
  }
}

// E(s) against the dense epochs each MRT run needed after its switch, from no benefit: at a start
// where every run's E(s) sits on its floor of one epoch no residual moves and the fit could not
// leave it; the runs may also show the coarse stage costing epochs (< 0). The runs stop at the
// first epoch past the crossing, so the crossing itself sat half an epoch earlier on average.
void fit_transfer(ConvergenceFit& fit, const std::vector<MrtRun>& mrt, double baseline_epochs) {
  auto& p = fit.params;
  Eigen::VectorXd obs(static_cast<Eigen::Index>(mrt.size()));
  for (size_t i = 0; i < mrt.size(); ++i) obs(static_cast<Eigen::Index>(i)) = mrt[i].dense_epochs - 0.5;
  auto residuals = [&](const Eigen::VectorXd& x) {
    ConvergenceParams q = p;
    q.transfer_efficiency = x(0);
    Eigen::VectorXd r(static_cast<Eigen::Index>(mrt.size()));
    for (size_t i = 0; i < mrt.size(); ++i)
      r(static_cast<Eigen::Index>(i)) =
          dense_epochs_after_transfer(q, baseline_epochs, mrt[i].switch_epochs) - obs(static_cast<Eigen::Index>(i));
    return r;
  };
  const auto f = levenberg_marquardt(residuals, Eigen::VectorXd::Constant(1, 0.0), obs, 200);
  p.transfer_efficiency = f.params(0);
  fit.transfer_efficiency_std_error = f.std_errors(0);
  fit.transfer_fitted = true;
}

}  // namespace

ConvergenceFit fit_convergence(const std::vector<NamedRecord>& records) {
  if (records.empty()) fail_input("", "records", "give measured records: baseline runs and MRT runs at several switch points");
  ConvergenceFit fit;
  fit.workload = records.front().record.workload;
  fit.target = records.front().record.target_value;
  const bool maximize = records.front().record.target_maximize;
  ConvergenceRuns runs;
  for (const auto& named : records) {
    check_same_target(fit, maximize, named.file, named.record);
    fit.files.push_back(named.file);
    sort_run(named, maximize, fit, runs);
  }
  if (fit.baseline_runs == 0) fail_input("", "records", "no baseline run among the records: the dense learning curve needs one");
  std::sort(runs.dense.begin(), runs.dense.end());
  fit.dense_metric = fit_learning_curve(runs.dense, "baseline runs' validation metric");
  fit.coarse_loss = fit_learning_curve(runs.coarse_loss, "MRT runs' coarse training loss");
  fit.coarse_metric = fit_learning_curve(runs.coarse_metric, "MRT runs' coarse validation metric");
  auto& p = fit.params;
  p.dense_metric = fit.dense_metric.curve;
  p.coarse_loss = fit.coarse_loss.curve;
  p.coarse_metric = fit.coarse_metric.curve;
  p.reference_global_batch = runs.global_batch;
  p.coarse_resolution = runs.coarse_resolution;
  const auto e0 = crossing_epoch(p.dense_metric, fit.target);
  if (!e0) fail_input("", "records", fmt::format("the fitted dense curve (floor {:.4g}) never reaches the target {}", p.dense_metric.floor, fit.target));
  fit.baseline_epochs_to_target = *e0;
  if (!runs.mrt.empty()) fit_transfer(fit, runs.mrt, *e0);
  if (!runs.mrmf.empty()) fit_fusion(fit, runs.mrmf);
  if (!runs.pretrained.empty()) fit_pretrained(fit, runs.pretrained);
  note_unidentified(fit);
  fit.seeds = fit_seed_spread(records);
  p.seed_epochs_cv = fit.seeds.epochs_cv;
  p.seed_switch_cv = fit.seeds.switch_cv;
  return fit;
}

void PooledSpread::add(const std::vector<double>& v) {
  if (v.size() < 2) return;
  const double n = static_cast<double>(v.size()), mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
  if (mean <= 0) return;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  sum += ss / (mean * mean), dof += static_cast<int>(v.size()) - 1;
}

double PooledSpread::cv() const { return dof > 0 ? std::sqrt(sum / dof) : 0; }
double PooledSpread::std_error() const { return dof > 0 ? cv() / std::sqrt(2.0 * dof) : 0; }  // of a normal sample's s

SeedSpread fit_seed_spread(const std::vector<NamedRecord>& records) {
  std::map<std::string, std::vector<const Record*>> by_plan;
  for (const auto& [file, r] : records)
    if (r.totals.reached_target && !r.stages.empty()) by_plan[r.plan_spec.empty() ? r.plan : r.plan_spec].push_back(&r);
  PooledSpread epochs, switches;
  SeedSpread s;
  for (const auto& [plan, runs] : by_plan) {
    if (runs.size() < 2) continue;
    std::vector<double> e, sw;
    for (const auto* r : runs) {
      e.push_back(r->stages.back().epochs);
      if (const auto& first = r->stages.front().models.front(); r->stages.size() > 1 && first.switch_epoch) sw.push_back(*first.switch_epoch);
    }
    epochs.add(e);
    if (sw.size() == runs.size()) switches.add(sw);
    ++s.groups, s.runs += static_cast<int>(runs.size());
  }
  std::vector<double> speed;
  for (const auto& [file, r] : records)
    if (r.device_matmul_flops_per_s) speed.push_back(*r.device_matmul_flops_per_s);
  PooledSpread machine;
  machine.add(speed);
  s.run_speed_cv = machine.cv(), s.run_speed_cv_std_error = machine.std_error(), s.speed_runs = static_cast<int>(speed.size());
  s.epochs_cv = epochs.cv(), s.epochs_cv_std_error = epochs.std_error();
  s.switch_cv = switches.cv(), s.switch_cv_std_error = switches.std_error();
  return s;
}

void apply_convergence_fit(MachineProfile& profile, const ConvergenceFit& fit) {
  auto params = fit.params;
  if (auto it = profile.convergence.find(fit.workload); it != profile.convergence.end()) {
    const ConvergenceParams& prior = it->second;
    if (!fit.fusion_fitted || kept(fit, "fusion_efficiency")) params.fusion_efficiency = prior.fusion_efficiency;  // no MRMF records: the profile's stays
    if (!fit.pretrained_fitted || kept(fit, "pretrained_progress")) params.pretrained_progress = prior.pretrained_progress;
    if (kept(fit, "transfer_efficiency")) params.transfer_efficiency = prior.transfer_efficiency;
    if (kept(fit, "dense_metric")) params.dense_metric = prior.dense_metric;
    if (kept(fit, "coarse_loss")) params.coarse_loss = prior.coarse_loss;
    if (kept(fit, "coarse_metric")) params.coarse_metric = prior.coarse_metric;
  } else if (!fit.kept_at_prior.empty()) {
    fail_input(profile.name, "convergence." + fit.workload,
               fmt::format("the records do not identify {}, and the profile has no curves of {} to keep", fit.kept_at_prior.front(), fit.workload));
  }
  profile.convergence[fit.workload] = params;
  const std::string prefix = "convergence." + fit.workload + ".";
  std::erase_if(profile.fitted, [&](const FittedParameter& f) {  // the prior's provenance stays with what it kept
    if (f.key.rfind(prefix, 0) != 0) return false;
    const std::string part = f.key.substr(prefix.size(), f.key.find('.', prefix.size()) - prefix.size());
    if (part == "fusion_efficiency" && !fit.fusion_fitted) return false;
    if (part == "pretrained_progress" && !fit.pretrained_fitted) return false;
    return !kept(fit, part);
  });
  const std::string source = fmt::format("calibrate convergence: {}", fmt::join(fit.files, ", "));
  auto add_curve = [&](const std::string& name, const CurveFit& c) {
    if (kept(fit, name)) return;
    record_fit(profile, {prefix + name + ".floor", c.curve.floor, c.floor_std_error, source});
    record_fit(profile, {prefix + name + ".amplitude", c.curve.amplitude, c.amplitude_std_error, source});
    record_fit(profile, {prefix + name + ".scale", c.curve.scale, c.scale_std_error, source});
  };
  add_curve("dense_metric", fit.dense_metric);
  add_curve("coarse_loss", fit.coarse_loss);
  add_curve("coarse_metric", fit.coarse_metric);
  if (!kept(fit, "transfer_efficiency"))
    record_fit(profile, {prefix + "transfer_efficiency", fit.params.transfer_efficiency, fit.transfer_efficiency_std_error, source});
  if (fit.fusion_fitted && !kept(fit, "fusion_efficiency"))
    record_fit(profile, {prefix + "fusion_efficiency", fit.params.fusion_efficiency, fit.fusion_efficiency_std_error, source});
  if (fit.pretrained_fitted && !kept(fit, "pretrained_progress"))
    record_fit(profile, {prefix + "pretrained_progress", fit.params.pretrained_progress, fit.pretrained_progress_std_error,
                         fmt::format("{} ({} transfer-learning runs)", source, fit.transfer_runs)});
  if (fit.seeds.run_speed_cv > 0) {
    profile.compute.run_speed_cv = fit.seeds.run_speed_cv;
    record_fit(profile, {"compute.run_speed_cv", fit.seeds.run_speed_cv, fit.seeds.run_speed_cv_std_error,
                         fmt::format("{} (the matmul at the start of {} runs)", source, fit.seeds.speed_runs)});
  }
  if (fit.seeds.epochs_cv > 0)
    record_fit(profile, {prefix + "seed_epochs_cv", fit.seeds.epochs_cv, fit.seeds.epochs_cv_std_error,
                         fmt::format("{} ({} plans run with several seeds, {} runs)", source, fit.seeds.groups, fit.seeds.runs)});
  if (fit.seeds.switch_cv > 0)
    record_fit(profile, {prefix + "seed_switch_cv", fit.seeds.switch_cv, fit.seeds.switch_cv_std_error,
                         fmt::format("{} ({} plans run with several seeds, {} runs)", source, fit.seeds.groups, fit.seeds.runs)});
}

}  // namespace mrplan
