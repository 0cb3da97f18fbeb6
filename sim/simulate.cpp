#include "sim/simulate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "model/builtin_workloads.hpp"
#include "model/errors.hpp"
#include "model/plan_yaml.hpp"
#include "model/workload_yaml.hpp"

namespace mrplan {

NetworkSpec plan_network(const Plan& plan) {
  const auto& w = plan.workload;
  const bool is_file = w.find('/') != std::string::npos || w.ends_with(".yaml") || w.ends_with(".yml");
  if (is_file) {
    std::filesystem::path p(w);
    if (p.is_relative() && !plan.source_file.empty() && !std::filesystem::exists(p))
      p = std::filesystem::path(plan.source_file).parent_path() / p;
    return load_workload_file(p.string());
  }
  try {
    return builtin_workload(w, plan.workload_options);
  } catch (const InputError& e) {
    fail_input(plan.source_file, "workload", e.what());
  }
}

namespace {

// For a built-in workload, the nearest sizes at which every resolution of the plan works.
std::string size_hint(const Plan& plan) {
  const auto names = builtin_workload_names();
  if (std::find(names.begin(), names.end(), plan.workload) == names.end()) return "";
  std::vector<int64_t> res;
  for (const auto& s : plan.stages)
    for (const auto& m : s.models) res.push_back(m.resolution);
  std::sort(res.begin(), res.end());
  res.erase(std::unique(res.begin(), res.end()), res.end());
  const auto sizes = nearest_working_sizes(plan.workload, plan.workload_options, res);
  if (sizes.empty()) return "";
  return fmt::format("; workload_options.size {} works at resolutions {}", fmt::join(sizes, " or "), fmt::join(res, ", "));
}

}  // namespace

LayerTable model_run_table(const Plan& plan, const NetworkSpec& spec, const ModelRun& run) {
  const double elem = plan.precision == "amp" ? 2.0 : 4.0;
  const int64_t up = spec.coarse_upsamples_output ? run.resolution : 1;
  try {
    return resolve(spec, coarsened_spatial(spec, run.resolution), run.local_batch, elem, up);
  } catch (const InputError& e) {
    fail_input(plan.source_file, "stages.resolution", fmt::format("at resolution {}: {}{}", run.resolution, e.what(), size_hint(plan)));
  }
}

PreparedPlan prepare(const Plan& plan, const MachineProfile& machine) {
  check_plan_against_machine(plan, machine);
  PreparedPlan p;
  p.plan = plan;
  p.spec = plan_network(plan);
  if (auto it = machine.convergence.find(p.spec.name); it != machine.convergence.end()) p.convergence = it->second;
  double heap_held_bytes = 0;  // every stage runs in the same processes, one after the other
  for (const auto& s : plan.stages) {
    if (s.models.size() != 1)
      fail_input(plan.source_file, "stages", "concurrent models in one stage (MRMF) are not supported by this version");
    p.stages.push_back(stage_costs(plan, s.model(), s.optimizer, model_run_table(plan, p.spec, s.model()), machine));
    heap_held_bytes = add_startup(p.stages.back(), machine, heap_held_bytes);
    std::optional<double> rule;
    if (s.stop.kind == StopRule::Kind::switch_rule && p.convergence) {
      const auto& cv = *p.convergence;
      const auto& costs = p.stages.back();
      const double scale = epoch_scale_for_batch(cv, costs.global_batch);
      const bool per_iter = s.stop.window_iterations > 0;
      const double window =
          per_iter ? static_cast<double>(s.stop.window_iterations) * costs.global_batch / plan.train_samples : 1.0;
      if (auto e = predicted_switch_epoch(cv.coarse_loss, s.stop.rule, window / scale, s.stop.max_epochs / scale))
        rule = per_iter ? std::ceil(*e * scale - 1e-9) : *e * scale;  // the paper switches at the epoch's end
    }
    p.rule_switch_epochs.push_back(rule);
  }
  return p;
}

namespace {

const ConvergenceParams& need_convergence(const PreparedPlan& p, size_t stage) {
  if (!p.convergence)
    fail_input(p.plan.source_file, fmt::format("stages[{}].stop", stage),
               fmt::format("the machine profile has no convergence parameters for workload '{}': give stop: {{epochs: N}} "
                           "or add them with `mrplan calibrate convergence`",
                           p.spec.name));
  return *p.convergence;
}

}  // namespace

std::vector<StageEpochs> stage_epochs(const PreparedPlan& p, std::optional<double> forced) {
  const auto& plan = p.plan;
  std::vector<StageEpochs> out;
  const bool mrt = plan.method == "mrt";
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const auto& st = plan.stages[i];
    const auto& costs = p.stages[i];
    const double max_e = st.stop.max_epochs;
    StageEpochs se;
    const bool coarse_stage = mrt && i == 0;
    if (coarse_stage && forced) {
      se.epochs = *forced;
      se.stop_reason = "forced switch point";
      se.switch_epoch = p.rule_switch_epochs[i];  // still report what the rule would have picked
      out.push_back(se);
      continue;
    }
    switch (st.stop.kind) {
      case StopRule::Kind::epochs:
        se.epochs = std::min<double>(st.stop.epochs, max_e);
        se.stop_reason = "epochs";
        break;
      case StopRule::Kind::switch_rule: {
        need_convergence(p, i);
        if (const auto& s = p.rule_switch_epochs[i]) {
          se.epochs = *s;
          se.switch_epoch = *s;
          se.stop_reason = "switch rule";
        } else {
          se.epochs = max_e;
          se.stop_reason = "max_epochs (switch rule never fired)";
        }
        break;
      }
      case StopRule::Kind::plateau: {
        const auto& cv = need_convergence(p, i);
        se.epochs = std::min(max_e, cv.overtrain_epochs * epoch_scale_for_batch(cv, costs.global_batch));
        se.stop_reason = "plateau";
        break;
      }
      case StopRule::Kind::target: {
        const auto& cv = need_convergence(p, i);
        const double scale = epoch_scale_for_batch(cv, costs.global_batch);
        const bool dense = st.model().resolution == 1;
        const auto& curve = dense ? cv.dense_metric : cv.coarse_metric;
        auto e = crossing_epoch(curve, plan.target_value);
        if (!e || *e * scale > max_e) {
          se.epochs = max_e;
          se.reached_target = false;
          se.stop_reason = "max_epochs (target not reached)";
          break;
        }
        double base = std::max(*e, 1e-9) * scale;
        if (mrt && i == 1 && st.transfer_from_previous) {
          const double s = out[0].epochs / epoch_scale_for_batch(cv, p.stages[0].global_batch);
          const double after = dense_epochs_after_transfer(cv, *e, s);
          se.metric_offset_epochs = std::max(0.0, *e - after);
          base = after * scale;
        }
        // the target is noticed at the next validation: every epoch, or every eval_iterations
        const double ipe = static_cast<double>(costs.iterations_per_epoch);
        const double step = st.stop.eval_iterations > 0 ? st.stop.eval_iterations / ipe : 1.0;
        se.epochs = std::min(max_e, std::ceil(base / step - 1e-9) * step);
        se.reached_target = base <= max_e;
        se.stop_reason = se.reached_target ? "target reached" : "max_epochs (target not reached)";
        break;
      }
    }
    out.push_back(se);
  }
  return out;
}

EpochCost stage_time(const StageCosts& c, double epochs) {
  const double first = std::min(1.0, epochs), later = std::max(0.0, epochs - 1.0);
  EpochCost e;
  e.io_s = first * c.first_epoch.io_s + later * c.later_epoch.io_s;
  e.comm_s = first * c.first_epoch.comm_s + later * c.later_epoch.comm_s;
  e.compute_s = first * c.first_epoch.compute_s + later * c.later_epoch.compute_s;
  e.h2d_s = first * c.first_epoch.h2d_s + later * c.later_epoch.h2d_s;
  e.eval_s = first * c.first_epoch.eval_s + later * c.later_epoch.eval_s;
  return e;
}

Totals totals(const PreparedPlan& p, const std::vector<StageEpochs>& epochs) {
  Totals t;
  for (size_t i = 0; i < epochs.size(); ++i) {
    const auto e = stage_time(p.stages[i], epochs[i].epochs);
    t.io_s += e.io_s, t.comm_s += e.comm_s, t.compute_s += e.compute_s, t.eval_s += e.eval_s;
    t.gpu_hours += e.epoch_s() * p.stages[i].gpus / 3600.0;
    if (i < 2) t.epochs[i] = epochs[i].epochs;
    t.reached_target = t.reached_target && epochs[i].reached_target;
  }
  t.time_s = t.io_s + t.comm_s + t.compute_s + t.eval_s;
  return t;
}

Record simulate(const Plan& plan, const MachineProfile& machine) { return simulate(prepare(plan, machine), machine); }

Record simulate(const PreparedPlan& p, const MachineProfile& machine, std::optional<double> forced) {
  const auto& plan = p.plan;
  const auto epochs = stage_epochs(p, forced);
  Record r;
  r.source = "predicted";
  r.plan = plan.name;
  r.workload = p.spec.name;
  r.machine = machine.name;
  r.method = plan.method;
  r.target_metric = plan.target_metric;
  r.target_value = plan.target_value;
  r.target_maximize = plan.maximize;
  r.plan_spec = plan_to_yaml(plan);
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const auto& st = plan.stages[i];
    const auto& c = p.stages[i];
    const auto& se = epochs[i];
    StageRecord s;
    s.name = st.name;
    ModelRecord mr;
    mr.workload = p.spec.name;
    mr.resolution = st.model().resolution;
    mr.gpus = st.model().gpus;
    mr.local_batch = st.model().local_batch;
    mr.params = c.params;
    mr.memory_bytes = c.memory.total_bytes;
    mr.memory_capacity_bytes = c.memory.capacity_bytes;
    mr.memory_fits = c.memory.fits;
    if (!c.memory.fits)
      r.warnings.push_back(fmt::format("stage '{}' needs {:.1f} GB per GPU but the GPU has {:.1f} GB: the plan does not fit",
                                       st.name, c.memory.total_bytes / 1e9, c.memory.capacity_bytes / 1e9));
    if (!se.reached_target) r.warnings.push_back(fmt::format("stage '{}': {}", st.name, se.stop_reason));
    s.models.push_back(mr);
    s.gpus = c.gpus;
    s.global_batch = c.global_batch;
    s.iterations_per_epoch = c.iterations_per_epoch;
    s.epochs = se.epochs;
    s.iterations = static_cast<int64_t>(std::llround(se.epochs * static_cast<double>(c.iterations_per_epoch)));
    s.switch_epoch = se.switch_epoch;
    s.stop_reason = se.stop_reason;
    s.allreduce_algorithm = c.allreduce_algorithm;
    const int whole = static_cast<int>(std::floor(se.epochs + 1e-9));
    const double part = se.epochs - whole;
    const bool coarse_model = st.model().resolution > 1;
    for (int e = 1; e <= whole + (part > 1e-9 ? 1 : 0); ++e) {
      const auto& ec = e == 1 ? c.first_epoch : c.later_epoch;
      const double f = e <= whole ? 1.0 : part;
      EpochRecord er;
      er.epoch = e;
      er.fraction = f;
      er.io_s = ec.io_s * f, er.comm_s = ec.comm_s * f, er.compute_s = ec.compute_s * f, er.eval_s = ec.eval_s * f;
      er.epoch_s = er.io_s + er.comm_s + er.compute_s + er.eval_s;
      const double iters = static_cast<double>(c.iterations_per_epoch) * f;
      er.phases = StepPhases{ec.h2d_s * f, c.forward_iter_s * iters, c.backward_iter_s * iters, c.optimizer_iter_s * iters};
      if (!s.phases) s.phases.emplace();
      *s.phases += *er.phases;
      if (p.convergence) {
        const auto& cv = *p.convergence;
        if (coarse_model) {
          er.loss = curve_value(cv.coarse_loss, e);
          er.metric = curve_value(cv.coarse_metric, e);
        } else {
          er.metric = curve_value(cv.dense_metric, e + se.metric_offset_epochs);
        }
      }
      s.per_epoch.push_back(er);
    }
    const auto t = stage_time(c, se.epochs);
    s.io_s = t.io_s, s.comm_s = t.comm_s, s.compute_s = t.compute_s, s.eval_s = t.eval_s, s.time_s = t.epoch_s();
    r.totals.io_s += s.io_s, r.totals.comm_s += s.comm_s, r.totals.compute_s += s.compute_s;
    r.totals.time_to_target_s += s.time_s;
    r.totals.gpu_hours += s.time_s * s.gpus / 3600.0;
    r.totals.epochs += s.epochs;
    r.stages.push_back(std::move(s));
  }
  r.totals.reached_target = std::all_of(epochs.begin(), epochs.end(), [](const auto& e) { return e.reached_target; });
  return r;
}

}  // namespace mrplan
