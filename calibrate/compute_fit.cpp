#include "calibrate/compute_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "model/profile_parameters.hpp"
#include "model/compute_cost.hpp"
#include "model/error_summary.hpp"
#include "model/errors.hpp"
#include "model/least_squares.hpp"

namespace mrplan {

namespace {

// One fitted parameter (in log space) and where it goes in ComputeParams.
struct Slot {
  enum class What { efficiency, half_work, mem_efficiency, backward, overhead, optimizer_mem } what;
  std::string key;  // family or kind; empty for the shared ones
};

std::vector<Slot> slots_for(const std::set<std::string>& math, const std::set<std::string>& memory) {
  using W = Slot::What;
  std::vector<Slot> v;
  for (const auto& f : math)
    for (W w : {W::efficiency, W::half_work, W::mem_efficiency, W::backward}) v.push_back({w, f});
  for (const auto& k : memory)
    for (W w : {W::mem_efficiency, W::backward}) v.push_back({w, k});
  v.push_back({W::overhead, ""});
  v.push_back({W::optimizer_mem, ""});
  return v;
}

ComputeParams params_from(const Eigen::VectorXd& x, const std::vector<Slot>& slots, ComputeParams c) {
  using W = Slot::What;
  c.efficiency.clear(), c.half_work_flops_by_family.clear(), c.mem_efficiency_by_kind.clear(), c.backward_efficiency.clear();
  for (size_t i = 0; i < slots.size(); ++i) {
    const double v = std::exp(x(static_cast<Eigen::Index>(i)));
    switch (slots[i].what) {
      case W::efficiency: c.efficiency[slots[i].key] = v; break;
      case W::half_work: c.half_work_flops_by_family[slots[i].key] = v; break;
      case W::mem_efficiency: c.mem_efficiency_by_kind[slots[i].key] = v; break;
      case W::backward: c.backward_efficiency[slots[i].key] = v; break;
      case W::overhead: c.kernel_overhead_s = v; break;
      case W::optimizer_mem: c.mem_efficiency = v; break;
    }
  }
  return c;
}

LayerTime model_time(const Layer& l, const ComputeParams& c) {
  LayerTable t;
  t.layers = {l};
  return layer_times(t, c, false).front();
}

bool finite_positive(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

namespace {

// The ops the model prices (not a view), each with positive, finite times, and the families they
// fall in (math: efficiencies; memory: bandwidth); InputError naming what cannot be fitted.
struct UsableOps {
  std::vector<const OpTimingSample*> used;
  std::set<std::string> math, memory;
};
UsableOps usable_ops(const std::vector<OpTimingSample>& ops, const std::vector<OptimizerTiming>& steps, const ComputeParams& peaks) {
  if (!finite_positive(peaks.peak_fp32_flops) || !finite_positive(peaks.mem_bandwidth_Bps))
    fail_input("", "compute timings", "the measured peak FLOP/s and copy bandwidth must be positive");
  UsableOps out;
  for (const auto& s : ops) {
    if (s.layer.kind == OpKind::flatten) continue;  // a view: the model gives it no time
    if (!finite_positive(s.fwd_s) || !(s.bwd_s >= 0) || !std::isfinite(s.bwd_s))
      fail_input("", "compute timings", fmt::format("op {} ({}): times must be positive and finite", s.layer.name, s.context));
    const auto f = layer_family(s.layer);
    (is_math_family(f) ? out.math : out.memory).insert(f);
    out.used.push_back(&s);
  }
  if (out.math.empty()) fail_input("", "compute timings", "no convolution or linear op was timed: nothing to fit efficiencies to");
  if (steps.empty()) fail_input("", "compute timings", "no optimizer step was timed: the memory efficiency cannot be fitted");
  for (const auto& s : steps)
    if (!finite_positive(s.seconds) || s.params < 1)
      fail_input("", "compute timings", fmt::format("optimizer step ({}): time and parameter count must be positive", s.context));
  return out;
}

// Each slot's standard error, by the delta method from its log's: se(exp(u)) = exp(u) se(u).
void keep_std_errors(ComputeFit& fit, const std::vector<Slot>& slots, const FitResult& f) {
  using W = Slot::What;
  for (size_t i = 0; i < slots.size(); ++i) {
    const auto k = static_cast<Eigen::Index>(i);
    const double se = std::exp(f.params(k)) * f.std_errors(k);
    const auto& key = slots[i].key;
    switch (slots[i].what) {
      case W::efficiency:
        fit.efficiency_std_error[key] = se;
        break;
      case W::half_work:
        fit.half_work_std_error_flops_by_family[key] = se;
        break;
      case W::mem_efficiency:
        fit.mem_efficiency_by_kind_std_error[key] = se;
        break;
      case W::backward:
        fit.backward_efficiency_std_error[key] = se;
        break;
      case W::overhead:
        fit.kernel_overhead_std_error_s = se;
        break;
      case W::optimizer_mem:
        fit.mem_efficiency_std_error = se;
        break;
    }
  }
}

// Each timing's relative residual and the fit's R^2 in logs, from the scaled residuals `r`.
void add_goodness(ComputeFit& fit, const std::vector<double>& obs, const std::vector<double>& scale, const Eigen::VectorXd& r) {
  double mean_log = 0, ss_tot = 0, ss_res = 0;
  for (double o : obs) mean_log += std::log(o) / static_cast<double>(obs.size());
  for (size_t i = 0; i < obs.size(); ++i) {
    const double model = obs[i] + r(static_cast<Eigen::Index>(i)) * scale[i];
    fit.relative_residuals.push_back((model - obs[i]) / obs[i]);
    ss_tot += std::pow(std::log(obs[i]) - mean_log, 2);
    ss_res += std::pow(std::log(std::max(model, 1e-30)) - std::log(obs[i]), 2);
  }
  fit.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
}

// The timings the fit weighs (each op's forward and backward, then the optimizer steps), each with
// its scale, and each configuration's measured step.
struct WeighedTimings {
  std::vector<double> obs, scale;
  std::map<std::string, double> step_s;
};

// Each op's error is weighed by its share of its configuration's step (sum over its ops), with
// the square root so small ops still pin the overheads: the step is what the fit must get right.
WeighedTimings weighed_timings(const std::vector<const OpTimingSample*>& used, const std::vector<OptimizerTiming>& steps) {
  WeighedTimings w;
  for (const auto* s : used) w.step_s[s->context] += s->fwd_s + s->bwd_s;
  for (const auto* s : used) {
    // between relative error (every op alike) and error over the step (large ops only)
    w.obs.push_back(s->fwd_s), w.scale.push_back(std::sqrt(s->fwd_s * w.step_s[s->context]));
    if (s->bwd_s > 0) w.obs.push_back(s->bwd_s), w.scale.push_back(std::sqrt(s->bwd_s * w.step_s[s->context]));
  }
  for (const auto& s : steps) w.obs.push_back(s.seconds), w.scale.push_back(s.seconds);
  return w;
}

// Where the fit starts, in log space: half an efficiency, 10 us of overhead, 10 MFLOP of half work.
Eigen::VectorXd fit_start(const std::vector<Slot>& slots) {
  using W = Slot::What;
  Eigen::VectorXd start(static_cast<Eigen::Index>(slots.size()));
  for (size_t i = 0; i < slots.size(); ++i)
    start(static_cast<Eigen::Index>(i)) = std::log(slots[i].what == W::half_work ? 1e7 : slots[i].what == W::overhead ? 1e-5 : 0.5);
  return start;
}

}  // namespace

ComputeFit fit_compute(const std::vector<OpTimingSample>& ops, const std::vector<OptimizerTiming>& steps, const ComputeParams& peaks) {
  const UsableOps usable = usable_ops(ops, steps, peaks);
  const auto& used = usable.used;
  const auto slots = slots_for(usable.math, usable.memory);
  const auto n_params = static_cast<Eigen::Index>(slots.size());
  const WeighedTimings weighed = weighed_timings(used, steps);
  const auto &obs = weighed.obs, &scale = weighed.scale;
  const auto& step_s = weighed.step_s;
  if (obs.size() < slots.size() + 2)
    fail_input("", "compute timings", fmt::format("{} timings cannot fit {} parameters: time more batch sizes", obs.size(), slots.size()));
  const Eigen::VectorXd start = fit_start(slots);
  // A weak pull towards the start (ridge in log space) keeps parameters the timings cannot tell
  // apart (a huge efficiency with a huge half work) finite; identified ones barely move.
  const double ridge = 0.1;
  const auto n_obs = static_cast<Eigen::Index>(obs.size());
  const auto n_steps = static_cast<Eigen::Index>(step_s.size());
  // the relative error of each configuration's whole step, as many times over as it has ops
  const double step_weight = std::sqrt(static_cast<double>(used.size()) / static_cast<double>(step_s.size()));
  auto residuals = [&](const Eigen::VectorXd& x) {
    const auto c = params_from(x, slots, peaks);
    Eigen::VectorXd r(n_obs + n_steps + n_params);
    r.tail(n_params) = ridge * (x - start);
    std::map<std::string, double> model_step;
    Eigen::Index i = 0;
    for (const auto* s : used) {
      const auto t = model_time(s->layer, c);
      model_step[s->context] += t.fwd_s + t.bwd_s;
      r(i) = (t.fwd_s - s->fwd_s) / scale[static_cast<size_t>(i)], ++i;
      if (s->bwd_s > 0) r(i) = (t.bwd_s - s->bwd_s) / scale[static_cast<size_t>(i)], ++i;
    }
    for (const auto& s : steps) r(i) = (optimizer_step_s(c, s.params, s.param_tensors, s.optimizer) - s.seconds) / s.seconds, ++i;
    for (const auto& [ctx, measured] : step_s) r(i++) = step_weight * (model_step[ctx] - measured) / measured;
    return r;
  };
  // scaled residuals: the target of every observation is 0
  const auto f = levenberg_marquardt(residuals, start, Eigen::VectorXd::Zero(n_obs + n_steps + n_params), 500);

  ComputeFit fit;
  fit.compute = params_from(f.params, slots, peaks);
  keep_std_errors(fit, slots, f);
  add_goodness(fit, obs, scale, residuals(f.params));
  return fit;
}

namespace {

// phase = factor * ops + bytes_per_param * params / (bw * eff) [+ per_op_s * op count], weighted by
// 1 / phase^2 (and the optimizer's phase = a * bytes / bw + b * tensors the same way). The columns
// tried, most first: a fit is kept where its factor is positive and its second term not negative
// (a few configurations share a parameter count, so noise can trade one term for the other); the
// third (signed) only where the op counts differ, since with one count it is a second intercept.
FitResult fit_phase(const Eigen::MatrixXd& A, const Eigen::VectorXd& y, const std::string& phase) {
  Eigen::VectorXd w(y.size());
  for (Eigen::Index i = 0; i < y.size(); ++i) w(i) = 1.0 / (y(i) * y(i));
  const Eigen::Index cols = A.cols();
  const bool counts_differ = cols > 2 && A.col(2).maxCoeff() > A.col(2).minCoeff();
  std::vector<std::vector<Eigen::Index>> tries;
  if (counts_differ && y.size() >= 4) tries.push_back({0, 1, 2}), tries.push_back({0, 2});
  if (y.size() >= 3) tries.push_back({0, 1});
  tries.push_back({0});
  for (const auto& use : tries) {
    Eigen::MatrixXd S(A.rows(), static_cast<Eigen::Index>(use.size()));
    for (size_t k = 0; k < use.size(); ++k) S.col(static_cast<Eigen::Index>(k)) = A.col(use[k]);
    const auto s = weighted_linear_least_squares(S, y, w);
    FitResult f = s;
    f.params = Eigen::VectorXd::Zero(cols), f.std_errors = Eigen::VectorXd::Zero(cols);
    for (size_t k = 0; k < use.size(); ++k) f.params(use[k]) = s.params(static_cast<Eigen::Index>(k)), f.std_errors(use[k]) = s.std_errors(static_cast<Eigen::Index>(k));
    if (f.params(0) > 0 && (cols < 2 || f.params(1) >= 0)) return f;
  }
  fail_input("", "whole steps", fmt::format("the whole steps' {} came out as no time at all; time them again", phase));
}

}  // namespace

namespace {

// The optimizer phase less the overhead on params · B_opt / mem_bw (its coefficient is 1 / eff_mem)
// and the tensor count.
void fit_optimizer_phase(ComputeFit& fit, const std::vector<WholeStepTiming>& steps) {
  const auto n = static_cast<Eigen::Index>(steps.size());
  Eigen::MatrixXd O(n, 2);
  Eigen::VectorXd opt(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& st = steps[static_cast<size_t>(i)];
    if (!finite_positive(st.optimizer_s - fit.compute.kernel_overhead_s))
      fail_input("", "whole steps", fmt::format("'{}': the optimizer phase must be positive and finite", st.context));
    O(i, 0) = static_cast<double>(st.params) * optimizer_bytes_per_param(st.optimizer) / fit.compute.mem_bandwidth_Bps;
    O(i, 1) = static_cast<double>(st.param_tensors);
    opt(i) = st.optimizer_s - fit.compute.kernel_overhead_s;
  }
  const auto o = fit_phase(O, opt, "optimizer");
  fit.compute.mem_efficiency = 1.0 / o.params(0);
  fit.mem_efficiency_std_error = o.std_errors(0) / (o.params(0) * o.params(0));  // delta method
  fit.compute.optimizer_tensor_s = o.params(1);
  fit.optimizer_tensor_std_error_s = o.std_errors(1);
}

// Each whole step's forward and backward phase beside its regressors: the sum of its ops as
// modelled (with the optimizer's memory efficiency, the default of unfitted kinds), the parameter
// sweep and the op count.
struct PhaseRows {
  Eigen::MatrixXd F, B;
  Eigen::VectorXd fwd, bwd;
};

PhaseRows phase_rows(const ComputeFit& fit, const std::vector<OpTimingSample>& ops, const std::vector<WholeStepTiming>& steps) {
  std::map<std::string, LayerTime> modelled_ops;
  std::map<std::string, double> op_count;
  for (const auto& s : ops) {
    const auto t = model_time(s.layer, fit.compute);
    modelled_ops[s.context].fwd_s += t.fwd_s, modelled_ops[s.context].bwd_s += t.bwd_s;
    op_count[s.context] += 1;
  }
  const auto n = static_cast<Eigen::Index>(steps.size());
  PhaseRows r{Eigen::MatrixXd(n, 3), Eigen::MatrixXd(n, 3), Eigen::VectorXd(n), Eigen::VectorXd(n)};
  const double s_per_byte = 1.0 / (fit.compute.mem_bandwidth_Bps * fit.compute.mem_efficiency);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& st = steps[static_cast<size_t>(i)];
    const auto it = modelled_ops.find(st.context);
    if (it == modelled_ops.end() || !(it->second.fwd_s > 0) || !(it->second.bwd_s > 0))
      fail_input("", "whole steps", fmt::format("'{}' has no timed ops under the same configuration", st.context));
    for (double v : {st.seconds, st.forward_s, st.backward_s})
      if (!finite_positive(v))
        fail_input("", "whole steps", fmt::format("'{}': step and phase times must be positive and finite", st.context));
    const double sweep_s = static_cast<double>(st.params) * s_per_byte;
    r.F(i, 0) = it->second.fwd_s, r.F(i, 1) = sweep_s, r.F(i, 2) = op_count.at(st.context), r.fwd(i) = st.forward_s;
    r.B(i, 0) = it->second.bwd_s, r.B(i, 1) = sweep_s, r.B(i, 2) = op_count.at(st.context), r.bwd(i) = st.backward_s;
  }
  return r;
}

// The step-to-step spread: the median over configurations, with the median's standard error.
void fit_step_spread(ComputeFit& fit, const std::vector<WholeStepTiming>& steps) {
  std::vector<double> spreads;
  for (const auto& st : steps) spreads.push_back(st.spread);
  const size_t m = spreads.size();
  fit.compute.step_time_cv = median(spreads);
  double var = 0;
  for (double v : spreads) var += (v - fit.compute.step_time_cv) * (v - fit.compute.step_time_cv) / std::max<double>(1, m - 1);
  fit.step_time_cv_std_error = 1.2533 * std::sqrt(var / m);  // the median's standard error under normality
}

// inference = k * forward phase as fitted (`forward`: each step's), through the origin in relative
// error (weights 1/t^2), over the steps whose inference forward was timed.
void fit_inference_factor(ComputeFit& fit, const std::vector<WholeStepTiming>& steps, const Eigen::VectorXd& forward) {
  std::vector<double> phase, measured;
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& st = steps[i];
    if (st.inference_s == 0) continue;  // not timed
    if (!finite_positive(st.inference_s))
      fail_input("", "whole steps", fmt::format("'{}': the inference forward must be positive and finite", st.context));
    phase.push_back(forward(static_cast<Eigen::Index>(i))), measured.push_back(st.inference_s);
  }
  if (measured.empty()) return;
  const Eigen::VectorXd t = Eigen::Map<const Eigen::VectorXd>(measured.data(), static_cast<Eigen::Index>(measured.size()));
  const auto h = weighted_linear_least_squares(Eigen::Map<const Eigen::MatrixXd>(phase.data(), t.size(), 1), t, t.array().square().inverse());
  fit.compute.inference_factor = h.params(0);
  fit.inference_factor_std_error = h.std_errors(0);
}

}  // namespace

void fit_step_phases(ComputeFit& fit, const std::vector<OpTimingSample>& ops, const std::vector<WholeStepTiming>& steps) {
  fit.step_factor_ratios.clear();
  if (steps.empty()) return;
  fit_optimizer_phase(fit, steps);
  const auto r = phase_rows(fit, ops, steps);
  const auto f = fit_phase(r.F, r.fwd, "forward");
  const auto g = fit_phase(r.B, r.bwd, "backward");
  fit.compute.step_forward = {f.params(0), f.params(1), f.params(2)};
  fit.step_forward_std_error = {f.std_errors(0), f.std_errors(1), f.std_errors(2)};
  fit.compute.step_backward = {g.params(0), g.params(1), g.params(2)};
  fit.step_backward_std_error = {g.std_errors(0), g.std_errors(1), g.std_errors(2)};
  const Eigen::VectorXd forward = r.F * f.params, backward = r.B * g.params;
  for (Eigen::Index i = 0; i < forward.size(); ++i) fit.step_factor_ratios.push_back((forward(i) + backward(i)) / (r.fwd(i) + r.bwd(i)));
  fit_step_spread(fit, steps);
  fit_inference_factor(fit, steps, forward);
}

void fit_captured_steps(ComputeFit& fit, const std::vector<OpTimingSample>& ops, const std::vector<WholeStepTiming>& steps) {
  const ComputeParams none = [&] {
    auto c = captured_step_params(fit.compute);
    c.kernel_overhead_s = 0;
    return c;
  }();
  const double s_per_byte = 1.0 / (none.mem_bandwidth_Bps * none.mem_efficiency);
  std::vector<double> kernels, beyond, measured;
  for (const auto& st : steps) {
    if (st.captured_s == 0) continue;  // not timed
    if (!finite_positive(st.captured_s)) fail_input("", "whole steps", fmt::format("'{}': the captured step must be positive and finite", st.context));
    double model_s = optimizer_step_s(none, st.params, st.param_tensors, st.optimizer), k = 1;  // the fused optimizer: one kernel
    for (const auto& s : ops) {
      if (s.context != st.context) continue;
      const auto t = model_time(s.layer, none);
      const double params = static_cast<double>(s.layer.params);
      model_s += t.fwd_s * none.step_forward.factor + params * none.step_forward.bytes_per_param * s_per_byte;
      model_s += t.bwd_s * none.step_backward.factor + params * none.step_backward.bytes_per_param * s_per_byte;
      const auto n = layer_kernels(s.layer);
      k += n.forward * none.step_forward.factor + n.backward * none.step_backward.factor;
    }
    kernels.push_back(k), beyond.push_back(st.captured_s - model_s), measured.push_back(st.captured_s);
  }
  fit.captured_steps = static_cast<int>(measured.size());
  if (measured.empty()) return;
  const auto n = static_cast<Eigen::Index>(measured.size());
  const Eigen::VectorXd t = Eigen::Map<const Eigen::VectorXd>(measured.data(), n);
  const auto g = weighted_linear_least_squares(Eigen::Map<const Eigen::MatrixXd>(kernels.data(), n, 1), Eigen::Map<const Eigen::VectorXd>(beyond.data(), n),
                                               t.array().square().inverse());
  fit.compute.captured_kernel_gap_s = std::max(0.0, g.params(0));  // kernels faster than modelled leave no gap
  fit.captured_kernel_gap_std_error_s = g.std_errors(0);
}

void apply_compute_fit(MachineProfile& profile, const ComputeFit& fit, const std::string& source) {
  const double fp16_ratio = profile.compute.peak_fp16_flops / profile.compute.peak_fp32_flops;
  profile.compute = fit.compute;
  profile.compute.peak_fp16_flops = fit.compute.peak_fp32_flops * fp16_ratio;  // not measured: fp32 runs only
  std::erase_if(profile.fitted, [](const FittedParameter& p) { return p.key.rfind("compute.", 0) == 0; });
  auto add = [&](const std::string& key, double v, double e) { record_fit(profile, {key, v, e, source}); };
  record_fit(profile, {"compute.peak_fp32_flops", fit.compute.peak_fp32_flops, 0, source + " (best matmul)"});
  record_fit(profile, {"compute.mem_bandwidth_Bps", fit.compute.mem_bandwidth_Bps, 0, source + " (best copy)"});
  for (const auto& [k, v] : fit.compute.efficiency) add("compute.efficiency." + k, v, fit.efficiency_std_error.at(k));
  for (const auto& [k, v] : fit.compute.mem_efficiency_by_kind)
    add("compute.mem_efficiency_by_kind." + k, v, fit.mem_efficiency_by_kind_std_error.at(k));
  for (const auto& [k, v] : fit.compute.backward_efficiency)
    add("compute.backward_efficiency." + k, v, fit.backward_efficiency_std_error.at(k));
  for (const auto& [k, v] : fit.compute.half_work_flops_by_family)
    add("compute.half_work_flops_by_family." + k, v, fit.half_work_std_error_flops_by_family.at(k));
  add("compute.mem_efficiency", fit.compute.mem_efficiency, fit.mem_efficiency_std_error);
  add("compute.kernel_overhead_s", fit.compute.kernel_overhead_s, fit.kernel_overhead_std_error_s);
  add("compute.optimizer_tensor_s", fit.compute.optimizer_tensor_s, fit.optimizer_tensor_std_error_s);
  if (fit.captured_steps > 0)
    record_fit(profile, {"compute.captured_kernel_gap_s", fit.compute.captured_kernel_gap_s, fit.captured_kernel_gap_std_error_s,
                         fmt::format("{} ({} captured steps)", source, fit.captured_steps)});
  if (!fit.step_factor_ratios.empty())
  {
    for (const auto& [name, v, e] : {std::tuple{"step_forward", fit.compute.step_forward, fit.step_forward_std_error},
                                     std::tuple{"step_backward", fit.compute.step_backward, fit.step_backward_std_error}}) {
      record_fit(profile, {fmt::format("compute.{}.factor", name), v.factor, e.factor, source + " (whole steps)"});
      record_fit(profile, {fmt::format("compute.{}.bytes_per_param", name), v.bytes_per_param, e.bytes_per_param, source + " (whole steps)"});
      if (v.per_op_s != 0)
        record_fit(profile, {fmt::format("compute.{}.per_op_s", name), v.per_op_s, e.per_op_s, source + " (whole steps, several op counts)"});
    }
    record_fit(profile, {"compute.step_time_cv", fit.compute.step_time_cv, fit.step_time_cv_std_error, source + " (whole steps)"});
    if (fit.compute.inference_factor > 0)
      record_fit(profile, {"compute.inference_factor", fit.compute.inference_factor, fit.inference_factor_std_error,
                                source + " (forward without autograd)"});
  }
}

}  // namespace mrplan
