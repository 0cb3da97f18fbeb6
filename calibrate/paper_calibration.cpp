#include "calibrate/paper_calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "calibrate/convergence_fit.hpp"
#include "calibrate/mrmf_paper.hpp"
#include "calibrate/mrt_paper_tables.hpp"
#include "calibrate/public_curves.hpp"
#include "model/compute_cost.hpp"
#include "model/profile_parameters.hpp"
#include "model/builtin_profiles.hpp"
#include "model/errors.hpp"
#include "model/least_squares.hpp"
#include "model/learning_curve.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

namespace {

double paper(const std::string& table, const std::string& machine, int gpus, const std::string& dataset,
             const std::string& quantity) {
  for (const auto& v : mrt_paper_values())
    if (v.table == table && v.machine == machine && v.gpus == gpus && v.dataset == dataset && v.quantity == quantity) {
      // the guard that keeps held-out rows out of every fit
      if (!v.used_for_calibration())
        throw std::logic_error(fmt::format("held-out row {} {} {} used for calibration", table, gpus, quantity));
      return v.value;
    }
  throw std::logic_error(fmt::format("no paper value {} {} {} {} {}", table, machine, gpus, dataset, quantity));
}

// Smallest tau for which the switch rule fires at exactly `target_epoch` (the fired epoch grows
// with tau); bisection on the monotone map tau -> fired epoch.
double tau_for_switch(LearningCurve curve, const SwitchRule& rule, double window, double target_epoch) {
  auto fired = [&](double tau) {
    curve.scale = tau;
    auto e = predicted_switch_epoch(curve, rule, window, 20 * target_epoch + 10 * window * rule.patience);
    return e ? *e : 1e300;
  };
  double lo = 1e-3, hi = 10 * target_epoch;
  for (int i = 0; i < 80; ++i) {
    const double mid = 0.5 * (lo + hi);
    (fired(mid) < target_epoch - 1e-9 ? lo : hi) = mid;
  }
  // hi is now the smallest tau firing at >= target; step into the middle of the flat interval
  const double first = hi;
  double top = hi, step = hi * 1e-3;
  while (fired(top + step) <= target_epoch + 1e-9 && top < 1e6) top += step;
  return 0.5 * (first + top);
}

}  // namespace

ConvergenceParams neuron_inverter_prior_convergence(const ConvergenceParams& cosmoflow, std::vector<FittedParameter>& prov) {
  const std::string src = "Neuron Inverter benchmark, 1 Perlmutter A100, batch 512 (PMBS22 NI_Loss_val.csv)";
  // the validation MSE as its best so far, as calibrate convergence fits measured runs
  std::vector<std::pair<double, double>> pts;
  double best = 1e300;
  const auto& v = neuron_inverter_validation_mse_1gpu();
  for (size_t e = 0; e < v.size(); ++e) pts.push_back({e + 1.0, best = std::min(best, v[e])});
  const auto fit = fit_learning_curve(pts, "neuron-inverter public curve");
  ConvergenceParams p;
  p.dense_metric = fit.curve;
  // no published curve of a coarse model or of an MRT run: the dense curve and CosmoFlow's transfer stand in
  p.coarse_loss = p.coarse_metric = fit.curve;
  p.transfer_efficiency = cosmoflow.transfer_efficiency;
  p.reference_global_batch = 512;
  const std::string key = "convergence.neuron-inverter.";
  prov.push_back({key + "dense_metric.floor", fit.curve.floor, fit.floor_std_error, src});
  prov.push_back({key + "dense_metric.amplitude", fit.curve.amplitude, fit.amplitude_std_error, src});
  prov.push_back({key + "dense_metric.scale", fit.curve.scale, fit.scale_std_error, src});
  prov.push_back({key + "coarse_loss.scale", p.coarse_loss.scale, 0, "prior: the dense curve's (no published coarse-model curve)"});
  prov.push_back({key + "transfer_efficiency", p.transfer_efficiency, 0, "prior: CosmoFlow's (MRT Table I); no NI MRT run is published"});
  return p;
}

ConvergenceParams mlperf_cosmoflow_convergence(std::vector<FittedParameter>& prov) {
  const std::string src = "MLPerf HPC v1.0 CosmoFlow, LBNL Perlmutter 1024 GPUs, runs 1-3 (eval_error per epoch)";
  std::vector<std::pair<double, double>> pts;
  std::vector<double> epochs;
  for (const auto& run : mlperf_cosmoflow_eval_error_runs()) {
    double best = 1e300;  // each run's new bests: a run that stops at the target ends on one, and its
                          // plateaus before the learning-rate decays would otherwise outweigh it
    for (size_t e = 0; e < run.size(); ++e)
      if (run[e] < best) pts.push_back({e + 1.0, best = run[e]});
    epochs.push_back(static_cast<double>(run.size()));  // each run stopped at the target
  }
  const auto fit = fit_learning_curve_either(pts, "MLPerf CosmoFlow public runs");
  ConvergenceParams p;
  p.dense_metric = p.coarse_loss = p.coarse_metric = fit.curve;  // no coarse model was run: baseline plans only
  p.transfer_efficiency = 0;
  p.reference_global_batch = 1024;
  PooledSpread seeds;
  seeds.add(epochs);
  p.seed_epochs_cv = seeds.cv();
  const std::string key = "convergence.cosmoflow-mlperf.";
  prov.push_back({key + "dense_metric.floor", fit.curve.floor, fit.floor_std_error, src});
  prov.push_back({key + "dense_metric.amplitude", fit.curve.amplitude, fit.amplitude_std_error, src});
  prov.push_back({key + "dense_metric.scale", fit.curve.scale, fit.scale_std_error, src});
  prov.push_back({key + "seed_epochs_cv", p.seed_epochs_cv, seeds.std_error(), src + ": epochs to target of the three runs"});
  return p;
}

namespace {

using NoteFn = std::function<void(const std::string& key, double value, const std::string& source)>;

// What an MRT paper table gives a workload's curves: its rows' epochs (dense alone, coarse alone, the
// switch, dense after it), the switch rule, and the target.
struct PaperRows {
  double dense_e = 0, coarse_only_e = 0, switch_e = 0, after_e = 0;
  double window = 1;   // the rule's window, in epochs
  double granule = 1;  // how finely the paper could notice the target: one validation interval
  SwitchRule rule;
  double target = 0;
};

// MRT Table I (CosmoFlow, 32 GPUs), and the curves' forms before their scales are fitted.
PaperRows cosmoflow_rows(ConvergenceParams& p, const NoteFn& note) {
  const int g = 32;
  PaperRows r;
  r.dense_e = paper("I", "all", g, "dense", "epochs");
  r.coarse_only_e = paper("I", "all", g, "coarse", "epochs");
  r.switch_e = paper("I", "all", g, "mrt-coarse", "epochs");
  r.after_e = paper("I", "all", g, "mrt-dense", "epochs");
  r.rule = {5, 0.001};
  r.target = 0.0025;
  const double m0 = 1.0 / 3.0;  // MSE of predicting 0 for labels uniform in [-1, 1]
  p.dense_metric = {CurveForm::exp, 0.95 * r.target, m0 - 0.95 * r.target, 1};
  note("dense_metric.floor", p.dense_metric.floor, "prior: the best-tuned model ends just below the target (MRT IV-B)");
  p.coarse_loss = {CurveForm::exp, 0.0066, m0 - 0.0066, 1};
  note("coarse_loss.floor", 0.0066, "MRT Table I coarse validation MSE");
  p.reference_global_batch = 256;
  return r;
}

// MRT Table V (DeepCAM, 64 GPUs; iterations, read as epochs of N samples), likewise.
PaperRows deepcam_rows(ConvergenceParams& p, double N, const NoteFn& note) {
  const int g = 64;
  const double dense_b = 128, coarse_b = 512;
  PaperRows r;
  r.dense_e = paper("V", "all", g, "dense", "iterations") * dense_b / N;
  r.coarse_only_e = paper("V", "all", g, "coarse", "iterations") * coarse_b / N;
  r.switch_e = paper("V", "all", g, "mrt-coarse", "iterations") * coarse_b / N;
  r.after_e = paper("V", "all", g, "mrt-dense", "iterations") * dense_b / N;
  r.rule = {250, 0.001};
  r.window = coarse_b / N;  // one iteration of the coarse stage
  r.target = 0.82;
  p.dense_metric = {CurveForm::exp, r.target + 0.01, -(r.target + 0.01), 1};
  note("dense_metric.floor", p.dense_metric.floor, "prior: IoU asymptote just above the MLPerf target");
  // weighted cross-entropy of 3 classes: ln 3 at chance, converging to a tenth of it
  p.coarse_loss = {CurveForm::exp, 0.1 * std::log(3.0), 0.9 * std::log(3.0), 1};
  note("coarse_loss.amplitude", p.coarse_loss.amplitude, "prior: cross-entropy at chance (ln 3) minus the floor");
  note("coarse_loss.floor", p.coarse_loss.floor, "prior: a tenth of the loss at chance");
  p.reference_global_batch = dense_b;
  r.granule = 100 * dense_b / N;  // validation every 100 iterations (MRT Fig. 4)
  // the paper switches at the end of the epoch in which the rule fires: aim inside that epoch
  r.switch_e = std::ceil(r.switch_e - 1e-9) - 0.5;
  return r;
}

}  // namespace

ConvergenceParams fit_paper_convergence(const std::string& app, std::vector<FittedParameter>& prov) {
  ConvergenceParams p;
  const Plan setup = builtin_plan(app + "-baseline@summit");
  const std::string src = app == "cosmoflow" ? "MRT Table I (32 GPUs)" : "MRT Table V (64 GPUs)";
  const NoteFn note = [&](const std::string& key, double value, const std::string& source) {
    prov.push_back({fmt::format("convergence.{}.{}", setup.workload, key), value, 0.0, source});
  };
  const PaperRows r = app == "cosmoflow" ? cosmoflow_rows(p, note) : deepcam_rows(p, static_cast<double>(setup.train_samples), note);
  // aim half a validation interval before the reported count, so rounding up lands on it
  auto aim = [&](double x) { return std::ceil(x / r.granule - 1e-9) * r.granule - 0.5 * r.granule; };
  p.dense_metric.scale = aim(r.dense_e) / std::log(p.dense_metric.amplitude / (r.target - p.dense_metric.floor));
  note("dense_metric.scale", p.dense_metric.scale, src + ": dense epochs to target");
  p.coarse_loss.scale = tau_for_switch(p.coarse_loss, r.rule, r.window, r.switch_e);
  note("coarse_loss.scale", p.coarse_loss.scale, src + ": switch epoch of the rule in the MRT row");
  p.coarse_metric = p.coarse_loss;
  if (app == "deepcam") p.coarse_metric = {CurveForm::exp, 0.75, -0.75, p.coarse_loss.scale};
  p.overtrain_epochs = r.coarse_only_e;
  note("overtrain_epochs", r.coarse_only_e, src + ": coarse-only epochs (its loss stops improving)");
  const double s = app == "deepcam" ? std::ceil(r.switch_e) : r.switch_e;
  p.transfer_efficiency = (1.0 - aim(r.after_e) / aim(r.dense_e)) / coarse_progress(p.coarse_loss, s);
  note("transfer_efficiency", p.transfer_efficiency, src + ": dense epochs after the switch");
  p.overtrain_penalty = 1.0;
  note("overtrain_penalty", 1.0, "prior: each coarse epoch past the plateau costs one dense epoch (no table gives it)");
  return p;
}

namespace {

struct CalibrationPoint {
  Plan plan;
  double epochs;  // the paper's, over which a per-epoch time averages
  double compute_s, comm_s, io_s, epoch_s;
};

// One machine's calibration rows: CosmoFlow at 32 GPUs, DeepCAM at 64, coarse and dense.
struct MachineRows {
  std::string source;
  std::vector<CalibrationPoint> points;
};

MachineRows paper_rows(const std::string& pm) {
  const char* tables[2][2] = {{"III", "VII"}, {"IV", "VIII"}};
  const int row = pm == "summit" ? 0 : 1;
  MachineRows rows{fmt::format("MRT Tables {}/{} calibration rows (CosmoFlow 32 GPUs, DeepCAM 64 GPUs)", tables[row][0], tables[row][1]), {}};
  for (const auto& [app, gpus, t] : {std::tuple{"cosmoflow", 32, 0}, std::tuple{"deepcam", 64, 1}}) {
    for (const std::string ds : {"coarse", "dense"}) {
      CalibrationPoint cp;
      cp.plan = builtin_plan(fmt::format("{}-{}@{}", app, ds == "dense" ? "baseline" : "coarse", pm), gpus);
      const std::string tb = tables[row][t];
      cp.io_s = paper(tb, pm, gpus, ds, "io_s");
      cp.comm_s = paper(tb, pm, gpus, ds, "comm_s");
      cp.compute_s = paper(tb, pm, gpus, ds, "compute_s");
      cp.epoch_s = paper(tb, pm, gpus, ds, "epoch_s");
      cp.epochs = std::string(app) == "cosmoflow"
                      ? paper("I", "all", 32, ds, "epochs")
                      : paper("V", "all", 64, ds, "iterations") * (ds == "dense" ? 128.0 : 512.0) / 121266.0;
      rows.points.push_back(cp);
    }
  }
  return rows;
}

std::vector<EpochCost> predict_rows(const MachineRows& rows, const MachineProfile& prof) {
  std::vector<EpochCost> out;
  for (const auto& p : rows.points) {
    const auto t = model_time(prepare(p.plan, prof).stages.front().models[0], p.epochs);
    out.push_back({t.io_s / p.epochs, t.comm_s / p.epochs, t.compute_s / p.epochs});
  }
  return out;
}

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// A parameter fitted in log space: its standard error is the value times the log's. A value run
// down to 0 is at its bound: 0 times any error says nothing, so it is unknown, and said so.
FittedParameter log_space_fit(const std::string& key, double value, double se_log, const std::string& source) {
  if (value <= 0) return {key, 0.0, std::numeric_limits<double>::infinity(), source + ": at its bound, 0"};
  return {key, value, std::abs(value * se_log), source};
}

// Levenberg-Marquardt over one machine's rows: `apply` sets the parameters x on a copy of the
// profile, `residual` compares each row's prediction with its point; the fitted x is applied to m.
template <class Apply, class Residual>
FitResult fit_rows(MachineProfile& m, const MachineRows& rows, const Eigen::VectorXd& x0, const Eigen::VectorXd& obs, Apply apply,
                   Residual residual) {
  const auto n = static_cast<Eigen::Index>(rows.points.size());
  auto res = [&](const Eigen::VectorXd& x) {
    MachineProfile p = m;
    apply(p, x);
    const auto pr = predict_rows(rows, p);
    Eigen::VectorXd r(n);
    for (Eigen::Index i = 0; i < n; ++i) r[i] = residual(pr[i], rows.points[i]);
    return r;
  };
  auto fit = levenberg_marquardt(res, x0, obs);
  apply(m, fit.params);
  return fit;
}

// Peak efficiency of conv3d (CosmoFlow) and conv2d (DeepCAM) kernels and the saturation work, in
// log space so they stay positive.
void fit_compute(MachineProfile& m, const MachineRows& rows) {
  const auto n = static_cast<Eigen::Index>(rows.points.size());
  Eigen::VectorXd obs(n);
  for (Eigen::Index i = 0; i < n; ++i) obs[i] = std::log(rows.points[i].compute_s);
  auto apply = [](MachineProfile& p, const Eigen::VectorXd& x) {
    p.compute.efficiency = {{"conv3d", std::exp(x[0])}, {"conv2d", std::exp(x[1])}};
    p.compute.half_work_flops = std::exp(x[2]);
  };
  Eigen::VectorXd x0(3);
  x0 << std::log(0.5), std::log(0.5), std::log(1e9);
  const auto fit = fit_rows(m, rows, x0, obs, apply,
                            [](const EpochCost& e, const CalibrationPoint& p) { return std::log(e.compute_s) - std::log(p.compute_s); });
  record_fit(m, log_space_fit("compute.efficiency.conv3d", m.compute.efficiency["conv3d"], fit.std_errors[0], rows.source));
  record_fit(m, log_space_fit("compute.efficiency.conv2d", m.compute.efficiency["conv2d"], fit.std_errors[1], rows.source));
  record_fit(m, log_space_fit("compute.half_work_GFLOP", m.compute.half_work_flops / 1e9, fit.std_errors[2], rows.source));
}

// Communication of both machines at once: each its achieved fraction of link bandwidth (logistic,
// so it stays in (0, 1]) and Horovod's cost per fusion cycle (CosmoFlow, TensorFlow + Horovod),
// one PyTorch DDP cost per bucket for both (DeepCAM; software, the same on either machine). DeepCAM's
// coarse and dense models have the same gradients, so one machine's rows cannot tell its DDP cost
// from its bandwidth; CosmoFlow's, whose dense layers grow with the input, can.
void fit_comm_jointly(std::vector<MachineProfile*> ms, const std::vector<MachineRows>& rows) {
  const auto k = static_cast<Eigen::Index>(ms.size());
  std::vector<double> obs_v;
  for (const auto& r : rows)
    for (const auto& p : r.points) obs_v.push_back(std::log(std::max(p.comm_s, 1e-3)));
  const Eigen::VectorXd obs = Eigen::Map<Eigen::VectorXd>(obs_v.data(), static_cast<Eigen::Index>(obs_v.size()));
  // x: per machine (logit bandwidth efficiency, log Horovod cost), then the shared log DDP cost
  auto apply = [k](MachineProfile& p, const Eigen::VectorXd& x, Eigen::Index i) {
    p.comm.bandwidth_efficiency = logistic(x[2 * i]);
    p.comm.horovod_call_overhead_s = std::exp(x[2 * i + 1]);
    p.comm.call_overhead_s = std::exp(x[2 * k]);
  };
  auto res = [&](const Eigen::VectorXd& x) {
    Eigen::VectorXd r(obs.size());
    Eigen::Index at = 0;
    for (Eigen::Index i = 0; i < k; ++i) {
      MachineProfile p = *ms[i];
      apply(p, x, i);
      for (const auto& e : predict_rows(rows[i], p)) r[at] = std::log(std::max(e.comm_s, 1e-6)) - obs[at], ++at;
    }
    return r;
  };
  Eigen::VectorXd x0 = Eigen::VectorXd::Constant(2 * k + 1, std::log(1e-3));
  for (Eigen::Index i = 0; i < k; ++i) x0[2 * i] = 0.0;
  const auto fit = levenberg_marquardt(res, x0, obs);
  const std::string both = "MRT Tables III/IV/VII/VIII calibration rows, Summit and Cori fitted together (one DDP cost)";
  for (Eigen::Index i = 0; i < k; ++i) {
    MachineProfile& m = *ms[i];
    apply(m, fit.params, i);
    const double e = m.comm.bandwidth_efficiency;
    record_fit(m, {"comm.bandwidth_efficiency", e, delta_method_se(fit.std_errors[2 * i], e * (1 - e)), both});
    record_fit(m, log_space_fit("comm.horovod_call_overhead_us", m.comm.horovod_call_overhead_s * 1e6, fit.std_errors[2 * i + 1], both));
    // below a microsecond the log-space fit is running to its bound (0): the rows put DeepCAM's
    // allreduce in the bandwidth, and no cost per bucket is pinned
    if (m.comm.call_overhead_s < 1e-6) m.comm.call_overhead_s = 0;
    record_fit(m, log_space_fit("comm.call_overhead_us", m.comm.call_overhead_s * 1e6, fit.std_errors[2 * k], both));
  }
}

// Input pipeline: per-file latency, host decode rate, achieved host-to-device fraction and the
// loader's worker start per epoch (DeepCAM's coarse and dense rows read 1:4 bytes, so the part that
// does not grow with the bytes is separable); residuals relative to the epoch time because several
// exposed I/O times are reported as 0.00.
void fit_io(MachineProfile& m, const MachineRows& rows) {
  const auto n = static_cast<Eigen::Index>(rows.points.size());
  Eigen::VectorXd obs(n);
  for (Eigen::Index i = 0; i < n; ++i) obs[i] = rows.points[i].io_s / rows.points[i].epoch_s;
  auto apply = [](MachineProfile& p, const Eigen::VectorXd& x) {
    p.io.pfs.per_file_latency_s = std::exp(x[0]);
    // bounded to 0.1..100 GB/s per rank: where the rows cannot see decoding, the fit rests at
    // the fast end instead of running off to infinity
    p.io.host_decode_Bps = std::exp(std::log(0.1e9) + std::log(1000.0) * logistic(x[1]));
    p.io.host_to_device_efficiency = logistic(x[2]);
    p.io.worker_start_s = x.size() > 3 ? std::exp(x[3]) : 0.0;  // DeepCAM's loaders only (persistent_workers: false)
  };
  auto fit_with = [&](Eigen::Index params) {
    Eigen::VectorXd x0(4);
    x0 << std::log(1e-3), 0.0, 0.0, std::log(0.1);
    return fit_rows(m, rows, x0.head(params), obs, apply,
                    [](const EpochCost& e, const CalibrationPoint& p) { return e.io_s / p.epoch_s - p.io_s / p.epoch_s; });
  };
  auto fit = fit_with(4);
  // below a millisecond the log-space fit is running to its bound, 0: no start-up is pinned, and
  // the other three are fitted without it
  if (m.io.worker_start_s < 1e-3) fit = fit_with(3);
  record_fit(m, log_space_fit("io.tiers.pfs.per_file_latency_ms", m.io.pfs.per_file_latency_s * 1e3, fit.std_errors[0], rows.source));
  const double u = std::log(m.io.host_decode_Bps / 0.1e9) / std::log(1000.0);  // logistic value
  record_fit(m, {"io.host_decode_GBps", m.io.host_decode_Bps / 1e9,
                 delta_method_se(fit.std_errors[1], m.io.host_decode_Bps / 1e9 * std::log(1000.0) * u * (1 - u)), rows.source});
  const double e = m.io.host_to_device_efficiency;
  record_fit(m, {"io.host_to_device_efficiency", e, delta_method_se(fit.std_errors[2], e * (1 - e)), rows.source});
  // fitted with three parameters, std_errors has no fourth: the start is at its bound, 0
  record_fit(m, log_space_fit("io.worker_start_ms", m.io.worker_start_s * 1e3, fit.std_errors.size() > 3 ? fit.std_errors[3] : 0.0, rows.source));
}

}  // namespace

std::map<std::string, MachineProfile> fit_paper_machines(std::map<std::string, MachineProfile> hardware) {
  std::vector<MachineRows> rows;
  std::vector<MachineProfile*> ms;
  for (auto& [name, m] : hardware) {
    rows.push_back(paper_rows(name));
    ms.push_back(&m);
    fit_compute(m, rows.back());
  }
  // the allreduce's time does not depend on compute here (the paper's plans model no overlap), and
  // I/O hides behind the whole step: compute, then comm, then I/O
  fit_comm_jointly(ms, rows);
  for (size_t i = 0; i < ms.size(); ++i) {
    fit_io(*ms[i], rows[i]);
    for (const auto& [k, v] : {std::pair{"compute.mem_efficiency", ms[i]->compute.mem_efficiency},
                               std::pair{"compute.kernel_overhead_us", ms[i]->compute.kernel_overhead_s * 1e6},
                               std::pair{"comm.alpha_us (both levels)", ms[i]->comm.inter_node.alpha_s * 1e6}})
      ms[i]->fitted.push_back({k, v, 0.0, "prior (not identifiable from the paper's rows)"});
  }
  return hardware;
}

namespace {

// The convergence priors, machine independent, fitted once, with where each number came from.
struct PaperConvergence {
  std::map<std::string, ConvergenceParams> by_workload;
  std::vector<FittedParameter> provenance;
};

const PaperConvergence& paper_convergence() {
  static const PaperConvergence c = [] {
    PaperConvergence r;
    auto& w = r.by_workload;
    w["cosmoflow-mrt"] = fit_paper_convergence("cosmoflow", r.provenance);
    w["deepcam"] = fit_paper_convergence("deepcam", r.provenance);
    w["neuron-inverter"] = neuron_inverter_prior_convergence(w["cosmoflow-mrt"], r.provenance);
    w["cosmoflow-mlperf"] = mlperf_cosmoflow_convergence(r.provenance);
    return r;
  }();
  return c;
}

// A built-in's hardware with the convergence priors; the per-epoch fits average over predicted
// epochs, so these come first.
MachineProfile with_convergence(const std::string& key) {
  MachineProfile hw = builtin_hardware_profile(key);
  for (const auto& [w, c] : paper_convergence().by_workload) hw.convergence[w] = c;
  return hw;
}

// Summit's and Cori's paper fits, made together once (they share DDP's cost).
const std::map<std::string, MachineProfile>& paper_machine_fits() {
  static const auto fits = fit_paper_machines({{"summit", with_convergence("summit")}, {"cori-gpu", with_convergence("cori-gpu")}});
  return fits;
}

// The hardware profile with the MRT paper's fits and the convergence priors, before MRMF's.
MachineProfile paper_profile(const std::string& key) {
  MachineProfile fitted;
  if (key == "summit" || key == "cori-gpu") {
    fitted = paper_machine_fits().at(key);
  } else {
    const MachineProfile hw = with_convergence(key);
    // no MRT rows for this machine: carry the V100 fits over (efficiencies are fractions of
    // peak, so they move with the hardware numbers), and say so
    const MachineProfile& donor = paper_machine_fits().at("cori-gpu");
    fitted = hw;
    fitted.compute.efficiency = donor.compute.efficiency;
    fitted.compute.half_work_flops = donor.compute.half_work_flops;
    fitted.compute.peak_fp32_flops = donor.compute.peak_fp32_flops;  // the donor's, until moved below
    fitted.compute.peak_fp16_flops = donor.compute.peak_fp16_flops;
    fitted.comm.bandwidth_efficiency = donor.comm.bandwidth_efficiency;
    fitted.comm.call_overhead_s = donor.comm.call_overhead_s;
    fitted.comm.horovod_call_overhead_s = donor.comm.horovod_call_overhead_s;
    fitted.io.host_decode_Bps = donor.io.host_decode_Bps;
    fitted.io.host_to_device_efficiency = donor.io.host_to_device_efficiency;
    fitted.io.pfs.per_file_latency_s = donor.io.pfs.per_file_latency_s;
    fitted.io.worker_start_s = donor.io.worker_start_s;
    for (auto f : donor.fitted)
      if (f.source.starts_with("MRT")) {
        f.source = "transferred from cori-gpu (no MRT paper rows for " + key + "): " + f.source;
        fitted.fitted.push_back(f);
      }
    move_fits_to_peaks(fitted, hw.compute.peak_fp32_flops, hw.compute.peak_fp16_flops);
  }
  for (const auto& f : paper_convergence().provenance) record_fit(fitted, f);
  return fitted;
}

// MRMF's fusion efficiency, from what the paper states for CosmoFlow on Perlmutter (Neuron
// Inverter's statement stays held out: `mrplan study mrmf-paper`); a property of the method and
// the networks, so every built-in profile takes it.
// Each machine's paper fits, once per process (the fusion prior needs Perlmutter's, whichever
// profile is asked for first). Called with calibrated_builtin_profile's lock held.
const MachineProfile& paper_profile_once(const std::string& key) {
  static std::map<std::string, MachineProfile> done;
  if (auto it = done.find(key); it != done.end()) return it->second;
  return done.emplace(key, paper_profile(key)).first->second;
}

FittedParameter fusion_prior() {
  const auto claims = mrmf_paper_claims();
  const auto fit = fit_fusion_efficiency(claims.front(), paper_profile_once(claims.front().machine));
  return {"convergence.*.fusion_efficiency", fit.eta, 0.0,
          fmt::format("prior: {}'s stated {:.0f}% saving on {} ({})", claims.front().app, 100 * claims.front().saving,
                      claims.front().machine, claims.front().source)};
}

}  // namespace

MachineProfile paper_fitted_profile(const std::string& key) {
  static const FittedParameter fusion = fusion_prior();
  MachineProfile p = paper_profile_once(key);
  for (auto& [w, cv] : p.convergence) cv.fusion_efficiency = fusion.value;
  record_fit(p, fusion);
  return p;
}

void move_fits_to_peaks(MachineProfile& m, double peak_fp32_flops, double peak_fp16_flops) {
  const double r = peak_fp32_flops / m.compute.peak_fp32_flops;
  move_to_peaks(m.compute, peak_fp32_flops, peak_fp16_flops);
  if (r == 1) return;
  for (auto& f : m.fitted)
    if (f.key == "compute.half_work_GFLOP" || f.key.starts_with("compute.half_work_flops_by_family.")) {
      f.value *= r, f.std_error *= r;
      f.source += fmt::format(" (moved to this GPU's fp32 peak: x{:.3g})", r);
    }
}

}  // namespace mrplan
