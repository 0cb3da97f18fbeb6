#include "sim/simulate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "model/text_file.hpp"
#include "model/builtin_workloads.hpp"
#include "model/allreduce_cost.hpp"
#include "model/errors.hpp"
#include "model/fusion.hpp"
#include "model/method_rules.hpp"
#include "model/method_table.hpp"
#include "model/plan_yaml.hpp"
#include "model/profile_parameters.hpp"
#include "model/record_header.hpp"
#include "model/workload_yaml.hpp"
#include "sim/depth_warnings.hpp"

namespace mrplan {

namespace {

// Where the model's switch rule fires on the modelled coarse training loss, in epochs, for a model
// that starts `start` reference epochs along the curve (MRMF: trained on from a fused model). The
// rule's window is read at the seed's own draw, the switch a run's length like any other.
std::optional<double> rule_switch(const PreparedPlan& p, const ModelRun& m, const ModelCosts& costs, double start = 0) {
  if (m.stop.kind != StopRule::Kind::switch_rule || !p.convergence) return std::nullopt;
  const auto& cv = *p.convergence;
  const double scale = epoch_scale_for_batch(cv, costs.global_batch, costs.recipe);
  const bool per_iter = m.stop.window_iterations > 0;
  const double window = per_iter ? static_cast<double>(m.stop.window_iterations) * costs.global_batch / p.plan.train_samples : 1.0;
  const double last = unseeded_epochs(cv, m.stop.max_epochs) / scale;
  if (auto e = predicted_switch_epoch(cv.coarse_loss, m.stop.rule, window / (scale * cv.seed_epoch_factor), last, start)) {
    const double at = seeded_epochs(cv, *e * scale);
    return per_iter ? std::ceil(at - 1e-9) : at;  // the paper switches at the epoch's end
  }
  return std::nullopt;
}

}  // namespace

namespace {

// MRMF: the hand-off at a fusion stage's end: the bottom group's parameters broadcast from the
// bottom model's ranks to every rank, then the top group's from the top model's, a tensor at a time
// (exec/fusion does the same).
double fusion_cost_s(const Plan& plan, const NetworkSpec& spec, size_t i, const MachineProfile& machine) {
  const auto& s = plan.stages[i];
  const size_t split = checked_fusion_split(plan, spec, i);
  const auto b = fusion_bytes(model_run_table(plan, spec, *s.find(s.handoff.top_from)), split);
  auto group = [&](double bytes, int64_t tensors) {
    return tensors > 0 ? tensors * broadcast_s(bytes / tensors, s.gpus(), machine.gpus_per_node, machine.comm) : 0.0;
  };
  return group(b.bottom_bytes, b.bottom_tensors) + group(b.top_bytes, b.top_tensors);
}

}  // namespace

PreparedPlan prepare_shell(const Plan& plan, const MachineProfile& machine) {
  check_plan_against_machine(plan, machine);
  PreparedPlan p;
  p.plan = plan;
  p.spec = plan_network(plan);
  if (auto it = machine.convergence.find(p.spec.name); it != machine.convergence.end()) {
    p.convergence = it->second;
    p.dense_target_epochs = crossing_epoch(p.convergence->dense_metric, plan.target_value);
  }
  return p;
}

PreparedStage prepare_stage(const PreparedPlan& p, size_t i, const MachineProfile& machine, const std::vector<LayerTable>* tables) {
  const auto& s = p.plan.stages[i];
  PreparedStage ps;
  ps.gpus = s.gpus();
  if (s.handoff.kind == Handoff::Kind::fuse) ps.fusion_s = fusion_cost_s(p.plan, p.spec, i, machine);
  if (const auto& pre = s.models.front().pretrained; pre && pre->freeze_epochs > 0) checked_freeze_through(p.plan, p.spec, i);
  for (size_t j = 0; j < s.models.size(); ++j) {
    const auto& m = s.models[j];
    const LayerTable built = tables ? LayerTable{} : model_run_table(p.plan, p.spec, m);
    auto c = model_costs(p.plan, m, tables ? (*tables)[j] : built, machine);
    ps.rule_switch_epochs.push_back(rule_switch(p, m, c));
    ps.models.push_back(std::move(c));
  }
  return ps;
}

void add_startups(PreparedPlan& p, const MachineProfile& machine) {
  // every stage runs in the same processes, one after the other; a stage's slowest rank to start is
  // the one whose heap grew least before it
  double heap_held_bytes = 0;
  p.model_count = 0;
  p.staging_s = 0;
  std::vector<int> staged;  // resolutions whose dataset is staged already
  for (size_t i = 0; i < p.stages.size(); ++i)
    for (size_t j = 0; j < p.stages[i].models.size(); ++j)
      if (const int res = p.plan.stages[i].models[j].resolution; std::find(staged.begin(), staged.end(), res) == staged.end())
        staged.push_back(res), p.staging_s += p.stages[i].models[j].staging_s;
  const auto warmup = machine.compute.warmup_s.find(p.spec.name);  // a workload not listed warms up in no time
  const double warmup_s = warmup == machine.compute.warmup_s.end() ? 0.0 : warmup->second;
  for (auto& ps : p.stages) {
    ps.first = p.model_count;
    double held_after = 1e300;
    for (auto& c : ps.models) held_after = std::min(held_after, add_startup(c, machine, warmup_s, heap_held_bytes));
    heap_held_bytes = held_after;
    p.model_count += ps.models.size();
  }
}

PreparedPlan prepare(const Plan& plan, const MachineProfile& machine) {
  PreparedPlan p = prepare_shell(plan, machine);
  for (size_t i = 0; i < plan.stages.size(); ++i) p.stages.push_back(prepare_stage(p, i, machine));
  add_startups(p, machine);
  return p;
}

PlanTables plan_tables(const Plan& plan) {
  const auto spec = plan_network(plan);
  PlanTables t;
  for (const auto& s : plan.stages) {
    t.emplace_back();
    for (const auto& m : s.models) t.back().push_back(model_run_table(plan, spec, m));
  }
  return t;
}

PreparedPlan prepare(const Plan& plan, const MachineProfile& machine, const PlanTables& tables) {
  PreparedPlan p = prepare_shell(plan, machine);
  for (size_t i = 0; i < plan.stages.size(); ++i) p.stages.push_back(prepare_stage(p, i, machine, &tables[i]));
  add_startups(p, machine);
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

// The baseline's dense epochs to target at the reference batch (what progress is measured against).
double baseline_epochs(const PreparedPlan& p) {
  const auto& e = p.dense_target_epochs;
  return e ? std::max(*e, 1e-9) : 1e9;
}

// A model's epochs as the curves count them: without its seed's draw, at the reference batch.
double reference_epochs(const ConvergenceParams& cv, const ModelCosts& costs, double epochs) {
  return unseeded_epochs(cv, epochs) / epoch_scale_for_batch(cv, costs.global_batch, costs.recipe);
}

// Epochs of a model that trains until the target (the last stage, or a baseline); `k0`: MRMF, the
// progress of the fused model it starts from.
ModelEpochs target_epochs(const PreparedPlan& p, size_t i, size_t j, const std::vector<ModelEpochs>& out, double k0) {
  const auto& plan = p.plan;
  const auto& m = plan.stages[i].models[j];
  const auto& costs = p.stages[i].models[j];
  const auto& cv = need_convergence(p, i);
  ModelEpochs se;
  const double max_e = m.stop.max_epochs;
  const double scale = epoch_scale_for_batch(cv, costs.global_batch, costs.recipe);
  const auto& curve = m.resolution == 1 ? cv.dense_metric : cv.coarse_metric;
  auto e = m.resolution == 1 ? p.dense_target_epochs : crossing_epoch(curve, plan.target_value);
  if (!e || seeded_epochs(cv, *e * scale) > max_e) {
    se.epochs = max_e;
    se.reached_target = false;
    se.stop_reason = StopReason::target_missed;
    return se;
  }
  double base = std::max(*e, 1e-9) * scale;
  if (starts_from_transfer(plan, i, j)) {  // MRT: the credit of what the previous stage's model learnt
    const size_t h = handed_on_model(plan.stages[i - 1]);
    const auto& from = out[p.stages[i - 1].first + h];
    const double after = dense_epochs_after_transfer(cv, *e, reference_epochs(cv, p.stages[i - 1].models[h], from.epochs), from.progress);
    se.metric_offset_epochs = std::max(0.0, *e - after);
    base = after * scale;
  } else if (k0 != 0 && m.resolution == 1) {  // MRMF's fused model or a pretrained one fine-tuned (k0 < 0: set back)
    const double after = dense_epochs_after_progress(*e, k0);
    se.metric_offset_epochs = std::max(0.0, *e - after);
    base = after * scale;
  }
  base = seeded_epochs(cv, base);
  // the target is noticed at the next validation: every epoch, or every eval_iterations
  const double ipe = static_cast<double>(costs.iterations_per_epoch);
  const double step = m.stop.eval_iterations > 0 ? m.stop.eval_iterations / ipe : 1.0;
  se.epochs = std::min(max_e, std::ceil(base / step - 1e-9) * step);
  se.reached_target = base <= max_e;
  se.stop_reason = se.reached_target ? StopReason::target_reached : StopReason::target_missed;
  return se;
}

// Epochs by the model's own stop; `k0`: the progress it starts from (MRMF: what the previous fusion
// handed on), `start`: where that puts it on its own curve, in reference epochs.
ModelEpochs own_stop_epochs(const PreparedPlan& p, size_t i, size_t j, const std::vector<ModelEpochs>& out, double k0, double start) {
  const auto& m = p.plan.stages[i].models[j];
  const auto& costs = p.stages[i].models[j];
  const double max_e = m.stop.max_epochs;
  ModelEpochs se;
  se.metric_offset_epochs = start;
  switch (m.stop.kind) {
    case StopRule::Kind::epochs:
      se.epochs = std::min<double>(m.stop.epochs, max_e);
      se.stop_reason = StopReason::epochs;
      break;
    case StopRule::Kind::iterations:
      se.epochs = std::min<double>(static_cast<double>(m.stop.iterations) / static_cast<double>(costs.iterations_per_epoch), max_e);
      se.stop_reason = StopReason::iterations;
      break;
    case StopRule::Kind::switch_rule:
      need_convergence(p, i);
      if (const auto s = start > 0 ? rule_switch(p, m, costs, start) : p.stages[i].rule_switch_epochs[j]) {
        se.epochs = *s;
        se.switch_epoch = *s;
        se.stop_reason = StopReason::switch_rule;
      } else {
        se.epochs = max_e;
        se.stop_reason = StopReason::switch_never_fired;
      }
      break;
    case StopRule::Kind::plateau: {
      const auto& cv = need_convergence(p, i);
      se.epochs = std::min(max_e, seeded_epochs(cv, cv.overtrain_epochs * epoch_scale_for_batch(cv, costs.global_batch, costs.recipe)));
      se.stop_reason = StopReason::plateau;
      break;
    }
    case StopRule::Kind::target: se = target_epochs(p, i, j, out, k0); break;
  }
  return se;
}

// `forced`: a sweep's switch point in place of the model's own stop.
ModelEpochs one_model_epochs(const PreparedPlan& p, size_t i, size_t j, const std::vector<ModelEpochs>& out, double k0,
                             std::optional<double> forced) {
  const auto& m = p.plan.stages[i].models[j];
  const auto& costs = p.stages[i].models[j];
  const double start = k0 > 0 && p.convergence ? epochs_for_progress(*p.convergence, m.resolution, baseline_epochs(p), k0) : 0.0;
  ModelEpochs se;
  if (forced) {
    se.epochs = *forced;
    se.metric_offset_epochs = start;
    se.stop_reason = StopReason::forced_switch;
    se.switch_epoch = p.stages[i].rule_switch_epochs[j];  // still report what the rule would have picked
  } else {
    se = own_stop_epochs(p, i, j, out, k0, start);
  }
  if (has_fusion_stage(p.plan) && p.convergence) {
    const auto& cv = *p.convergence;
    se.progress = progress_after(cv, m.resolution, baseline_epochs(p), k0, reference_epochs(cv, costs, se.epochs));
  } else if (hands_on_by_transfer(p.plan, i) && p.convergence) {  // what the transfer carries (once per switch point)
    const auto& cv = *p.convergence;
    se.progress = coarse_progress(cv.coarse_loss, reference_epochs(cv, costs, se.epochs));
  }
  return se;
}

}  // namespace

std::vector<ModelEpochs> model_epochs(const PreparedPlan& p, std::optional<double> forced) {
  std::vector<ModelEpochs> out;
  model_epochs(p, forced, out);
  return out;
}

void model_epochs(const PreparedPlan& p, std::optional<double> forced, std::vector<ModelEpochs>& out) {
  out.clear();
  out.reserve(p.model_count);
  double handed = 0;
  for (size_t i = 0; i < p.plan.stages.size(); ++i) stage_epochs(p, i, forced, out, handed);
}

void stage_epochs(const PreparedPlan& p, size_t i, std::optional<double> forced, std::vector<ModelEpochs>& out, double& handed) {
  const auto& plan = p.plan;
  const auto& st = plan.stages[i];
  out.resize(p.stages[i].first);
  for (size_t j = 0; j < st.models.size(); ++j) {
    const double k0 = start_progress(plan, i, j, handed, p.convergence ? pretrained_start(*p.convergence) : 0.0);
    const bool moved = forced && sweep_moves(plan, i, j);
    out.push_back(one_model_epochs(p, i, j, out, k0, moved ? forced : std::nullopt));
  }
  if (st.handoff.kind == Handoff::Kind::fuse && p.convergence) {
    const double progress[2] = {out[p.stages[i].first].progress, out[p.stages[i].first + 1].progress};  // two models (method_rules)
    handed = handed_on_progress(*p.convergence, st, progress);
  }
}

EpochCost model_time(const ModelCosts& c, double epochs) {
  const double first = std::min(1.0, epochs), later = std::max(0.0, epochs - 1.0);
  EpochCost e;
  e.io_s = first * c.first_epoch.io_s + later * c.later_epoch.io_s;
  e.comm_s = first * c.first_epoch.comm_s + later * c.later_epoch.comm_s;
  e.compute_s = first * c.first_epoch.compute_s + later * c.later_epoch.compute_s;
  e.h2d_s = first * c.first_epoch.h2d_s + later * c.later_epoch.h2d_s;
  e.eval_s = first * c.first_epoch.eval_s + later * c.later_epoch.eval_s;
  const double frozen = std::min(epochs, static_cast<double>(c.frozen_epochs)) * static_cast<double>(c.iterations_per_epoch);
  e.compute_s -= frozen * c.frozen_saved_compute_iter_s;
  e.comm_s -= frozen * c.frozen_saved_comm_iter_s;
  return e;
}

void add_stage(const PreparedStage& st, const std::vector<ModelEpochs>& epochs, Totals& t) {
  constexpr size_t kInline = 8;  // sweeps call this millions of times: no allocation for usual stages
  TimeSplit inline_splits[kInline];
  std::vector<TimeSplit> many;
  const size_t n = st.models.size();
  TimeSplit* splits = n <= kInline ? inline_splits : (many.resize(n), many.data());
  for (size_t j = 0; j < n; ++j) {
    const auto e = model_time(st.models[j], epochs[st.first + j].epochs);
    splits[j] = {e.io_s, e.comm_s, e.compute_s, e.eval_s};
    t.reached_target = t.reached_target && epochs[st.first + j].reached_target;
  }
  const auto& slow = splits[slowest_model({splits, n})];
  t.io_s += slow.io_s, t.comm_s += slow.comm_s, t.compute_s += slow.compute_s, t.eval_s += slow.eval_s;
  t.fusion_s += st.fusion_s;
  t.gpu_hours += (slow.time_s() + st.fusion_s) * st.gpus / 3600.0;
  t.time_s = t.io_s + t.comm_s + t.compute_s + t.eval_s + t.fusion_s;
}

Totals start_totals(const PreparedPlan& p) {
  Totals t;
  t.io_s = t.time_s = p.staging_s;
  t.gpu_hours = p.staging_s * (p.stages.empty() ? 0 : p.stages.front().gpus) / 3600.0;
  return t;
}

Totals totals(const PreparedPlan& p, const std::vector<ModelEpochs>& epochs) {
  Totals t = start_totals(p);
  for (const auto& st : p.stages) add_stage(st, epochs, t);
  return t;
}

Record simulate(const Plan& plan, const MachineProfile& machine) { return simulate(prepare(plan, machine), machine); }

namespace {

ModelRecord predicted_model(const PreparedPlan& p, const ModelRun& run, const ModelCosts& c, const ModelEpochs& se) {
  ModelRecord mr = model_record_header(run, p.spec.name);
  mr.params = c.params;
  mr.memory_bytes = c.memory.total_bytes;
  mr.memory_capacity_bytes = c.memory.capacity_bytes;
  mr.memory_fits = c.memory.fits;
  mr.iterations_per_epoch = c.iterations_per_epoch;
  mr.epochs = se.epochs;
  mr.iterations = static_cast<int64_t>(std::llround(se.epochs * static_cast<double>(c.iterations_per_epoch)));
  mr.switch_epoch = se.switch_epoch;
  mr.stop_reason = se.stop_reason;
  mr.allreduce_algorithm = c.allreduce_algorithm;
  mr.data_tiers = placement_text(c.placement);
  const int whole = static_cast<int>(std::floor(se.epochs + 1e-9));
  const double part = se.epochs - whole;
  for (int e = 1; e <= whole + (part > 1e-9 ? 1 : 0); ++e) {
    const auto& ec = e == 1 ? c.first_epoch : c.later_epoch;
    const double f = e <= whole ? 1.0 : part;
    EpochRecord er;
    er.epoch = e;
    er.fraction = f;
    const double frozen = e <= c.frozen_epochs ? f * static_cast<double>(c.iterations_per_epoch) : 0.0;  // transfer learning's frozen epochs
    er.io_s = ec.io_s * f, er.comm_s = ec.comm_s * f - frozen * c.frozen_saved_comm_iter_s,
    er.compute_s = ec.compute_s * f - frozen * c.frozen_saved_compute_iter_s, er.eval_s = ec.eval_s * f;
    er.epoch_s = er.io_s + er.comm_s + er.compute_s + er.eval_s;
    const double iters = static_cast<double>(c.iterations_per_epoch) * f;
    er.phases = StepPhases{ec.h2d_s * f, c.forward_iter_s * iters, c.backward_iter_s * iters, c.optimizer_iter_s * iters};
    if (!mr.phases) mr.phases.emplace();
    *mr.phases += *er.phases;
    if (p.convergence) {
      const auto& cv = *p.convergence;
      if (run.resolution > 1) {  // a coarse model's curves, from where it started (MRMF: a fused model)
        er.loss = curve_value(cv.coarse_loss, e + se.metric_offset_epochs);
        er.metric = curve_value(cv.coarse_metric, e + se.metric_offset_epochs);
      } else {
        er.metric = curve_value(cv.dense_metric, e + se.metric_offset_epochs);
      }
    }
    mr.per_epoch.push_back(er);
  }
  const auto t = model_time(c, se.epochs);
  mr.io_s = t.io_s, mr.comm_s = t.comm_s, mr.compute_s = t.compute_s, mr.eval_s = t.eval_s, mr.time_s = t.epoch_s();
  return mr;
}

}  // namespace

Record simulate(const PreparedPlan& p, const MachineProfile& machine, std::optional<double> forced) {
  const auto& plan = p.plan;
  const auto epochs = model_epochs(p, forced);
  Record r = record_header(plan, p.spec.name, Source::predicted, machine.name);
  r.warnings = depth_warnings(p, machine);
  if (plan.steps == StepExecution::captured && !fitted_entry(machine, "compute.captured_kernel_gap_s"))
    r.warnings.push_back(fmt::format("machine '{}' has no captured steps measured: their kernels are predicted back to back "
                                     "(calibrate compute --device cuda on a build with captured steps fits the gap between them)", machine.name));
  bool reached = true;
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const auto& st = plan.stages[i];
    const auto& ps = p.stages[i];
    StageRecord s;
    s.name = st.name;
    for (size_t j = 0; j < st.models.size(); ++j) {
      const auto& c = ps.models[j];
      const auto& se = epochs[ps.first + j];
      const std::string who = st.models.size() == 1 ? fmt::format("stage '{}'", st.name) : fmt::format("stage '{}' model '{}'", st.name, st.models[j].name);
      if (!c.memory.fits)
        r.warnings.push_back(fmt::format("{} needs {:.1f} GB per GPU but the GPU has {:.1f} GB: the plan does not fit", who,
                                         c.memory.total_bytes / 1e9, c.memory.capacity_bytes / 1e9));
      if (!se.reached_target) r.warnings.push_back(fmt::format("{}: {}", who, to_string(se.stop_reason)));
      reached = reached && se.reached_target;
      s.models.push_back(predicted_model(p, st.models[j], c, se));
    }
    s.fusion_s = ps.fusion_s;
    finish_stage(s);
    r.stages.push_back(std::move(s));
  }
  r.totals = run_totals(r.stages, reached);
  if (p.staging_s > 0) {  // before the first epoch, inside the time to target as MLPerf times it
    r.staging_s = p.staging_s;
    const auto start = start_totals(p);
    r.totals.time_to_target_s += start.time_s, r.totals.io_s += start.io_s, r.totals.gpu_hours += start.gpu_hours;
  }
  return r;
}

}  // namespace mrplan
