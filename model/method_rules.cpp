#include "model/method_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "model/errors.hpp"
#include "model/learning_curve.hpp"

namespace mrplan {

namespace {

std::string stage_key(size_t i) { return fmt::format("stages[{}]", i); }
std::string model_key(const Stage& s, size_t i, size_t j) {
  return s.models.size() == 1 ? stage_key(i) : fmt::format("stages[{}].models[{}]", i, j);
}

void check_one_model_stages(const Plan& p, const char* method) {
  for (size_t i = 0; i < p.stages.size(); ++i) {
    if (p.stages[i].models.size() != 1)
      fail_input(p.source_file, stage_key(i) + ".models",
                 fmt::format("{} stage trains one model; concurrent models (with a fusion) are MRMF's: method: mrmf", method));
    if (p.stages[i].handoff.kind == Handoff::Kind::fuse)
      fail_input(p.source_file, stage_key(i) + ".handoff", fmt::format("{} plan hands on by transfer, not by fusion", method));
  }
}

void check_mrmf(const Plan& p) {
  if (p.stages.size() < 2)
    fail_input(p.source_file, "stages", "an mrmf plan has one or more fusion stages of two models, then one fine-tuning stage");
  int previous_top = 0;  // resolution the previous fusion handed on
  for (size_t i = 0; i + 1 < p.stages.size(); ++i) {
    const auto& s = p.stages[i];
    const auto k = stage_key(i);
    if (s.models.size() != 2)
      fail_input(p.source_file, k + ".models", fmt::format("a fusion stage trains two models at once, got {}", s.models.size()));
    if (s.handoff.kind != Handoff::Kind::fuse)
      fail_input(p.source_file, k + ".handoff", "a fusion stage hands on by fuse: {bottom_from: MODEL, top_from: MODEL}");
    const auto* bottom = s.find(s.handoff.bottom_from);
    const auto* top = s.find(s.handoff.top_from);
    auto names = [&] { return fmt::format("{} or {}", s.models[0].name, s.models[1].name); };
    if (!bottom)
      fail_input(p.source_file, k + ".handoff.fuse.bottom_from", fmt::format("no model '{}' in this stage ({})", s.handoff.bottom_from, names()));
    if (!top) fail_input(p.source_file, k + ".handoff.fuse.top_from", fmt::format("no model '{}' in this stage ({})", s.handoff.top_from, names()));
    if (bottom == top) fail_input(p.source_file, k + ".handoff.fuse", "bottom_from and top_from name the same model");
    if (bottom->resolution <= top->resolution)
      fail_input(p.source_file, k + ".handoff.fuse",
                 fmt::format("resolutions not increasing: the bottom layer group comes from the lower-resolution model (the larger "
                             "coarsening factor), but '{}' has factor {} and '{}' factor {}",
                             bottom->name, bottom->resolution, top->name, top->resolution));
    if (previous_top > 0 && top->resolution >= previous_top)
      fail_input(p.source_file, k + ".handoff.fuse.top_from",
                 fmt::format("resolutions not increasing: this fusion hands on factor {}, the previous one handed on factor {}",
                             top->resolution, previous_top));
    previous_top = top->resolution;
    for (size_t j = 0; j < s.models.size(); ++j) {
      const auto kind = s.models[j].stop.kind;
      if (kind != StopRule::Kind::epochs && kind != StopRule::Kind::iterations && kind != StopRule::Kind::switch_rule)
        fail_input(p.source_file, model_key(s, i, j) + ".stop",
                   fmt::format("a model of a fusion stage stops after epochs, iterations or by the switch_rule, not by {}", to_string(kind)));
    }
  }
  const auto& last = p.stages.back();
  const auto k = stage_key(p.stages.size() - 1);
  if (last.models.size() != 1) fail_input(p.source_file, k + ".models", "the last MRMF stage fine-tunes one model, the fused one");
  if (last.handoff.kind == Handoff::Kind::fuse) fail_input(p.source_file, k + ".handoff", "the last stage has nothing to fuse");
  if (last.models[0].resolution > previous_top)
    fail_input(p.source_file, k + ".resolution",
               fmt::format("resolutions not increasing: fine-tuning at factor {} after a fusion at factor {}", last.models[0].resolution,
                           previous_top));
  if (last.models[0].stop.kind == StopRule::Kind::switch_rule)
    fail_input(p.source_file, k + ".stop", "the fine-tuning stage ends at the target or after epochs, not by the switch rule");
}

void check_transfer(const Plan& p) {
  check_one_model_stages(p, "a transfer-learning");
  if (p.stages.size() != 1) fail_input(p.source_file, "stages", "a transfer plan has one stage: the pretrained model fine-tuned to the target");
  const auto& m = p.stages[0].models[0];
  if (!m.pretrained)
    fail_input(p.source_file, "stages[0].pretrained", "a transfer plan starts from a pretrained model: pretrained: {checkpoint: MODEL.pt}");
  if (m.resolution != 1)
    fail_input(p.source_file, "stages[0].resolution", fmt::format("{}: a transfer plan fine-tunes at the original resolution, 1", m.resolution));
  if (m.stop.kind == StopRule::Kind::switch_rule)
    fail_input(p.source_file, "stages[0].stop", "the fine-tuning stage ends at the target or after epochs, not by the switch rule");
}

}  // namespace

void check_method_structure(const Plan& p) {
  for (size_t i = 0; i < p.stages.size(); ++i) {
    if (p.stages[i].models.empty()) fail_input(p.source_file, stage_key(i) + ".models", "a stage trains at least one model");
    for (const auto& m : p.stages[i].models)
      if (m.pretrained && p.method != Method::transfer)
        fail_input(p.source_file, stage_key(i) + ".pretrained",
                   fmt::format("starting from a pretrained model is transfer learning: method: transfer, not {}", to_string(p.method)));
  }
  switch (p.method) {
    case Method::baseline:
      check_one_model_stages(p, "a baseline");
      if (p.stages.size() != 1) fail_input(p.source_file, "stages", "a baseline plan has exactly one stage");
      break;
    case Method::mrt:
      check_one_model_stages(p, "an MRT");
      if (p.stages.size() != 2) fail_input(p.source_file, "stages", "an mrt plan has two stages: coarse, then dense");
      if (p.stages[0].models[0].resolution <= p.stages[1].models[0].resolution)
        fail_input(p.source_file, "stages[0].resolution", "the first MRT stage must be coarser (larger factor) than the second");
      if (p.stages[1].models[0].stop.kind == StopRule::Kind::switch_rule)
        fail_input(p.source_file, "stages[1].stop", "the dense stage ends at the target or after epochs, not by the switch rule");
      break;
    case Method::mrmf: check_mrmf(p); break;
    case Method::transfer: check_transfer(p); break;
  }
}

bool switch_fires_at_last(const StopRule& stop, const std::vector<double>& losses) {
  return stop.kind == StopRule::Kind::switch_rule && !losses.empty() &&
         switch_epoch(losses, stop.rule).value_or(-1) == static_cast<int>(losses.size());
}

bool iteration_budget_spent(const StopRule& stop, int64_t iterations) {
  return stop.kind == StopRule::Kind::iterations && iterations >= stop.iterations;
}

StopReason stop_after_epoch(const StopRule& stop, const Plan& plan, const Observed& seen, bool window_switch) {
  const bool per_epoch_rule = stop.window_iterations == 0 && seen.epoch_losses && switch_fires_at_last(stop, *seen.epoch_losses);
  if (window_switch || per_epoch_rule) return StopReason::switch_rule;
  if (stop.kind == StopRule::Kind::target && seen.metric &&
      (plan.maximize ? *seen.metric >= plan.target_value : *seen.metric <= plan.target_value))
    return StopReason::target_reached;
  if (stop.kind == StopRule::Kind::epochs && seen.epochs >= stop.epochs) return StopReason::epochs;
  if (iteration_budget_spent(stop, seen.iterations)) return StopReason::iterations;
  if (seen.epochs >= stop.max_epochs) return StopReason::max_epochs;
  return StopReason::none;
}

bool sweep_moves(const Plan& plan, size_t i, size_t j) {
  if (plan.method == Method::mrt) return i == 0;
  if (plan.method == Method::mrmf)
    return i + 1 < plan.stages.size() && plan.stages[i].models[j].name == plan.stages[i].handoff.bottom_from;
  return false;
}

size_t model_index(const Stage& s, const std::string& name) {
  for (size_t j = 0; j < s.models.size(); ++j)
    if (s.models[j].name == name) return j;
  throw std::out_of_range("no model '" + name + "' in stage '" + s.name + "'");
}

size_t handed_on_model(const Stage& s) { return s.handoff.kind == Handoff::Kind::fuse ? model_index(s, s.handoff.top_from) : 0; }

int handed_on_resolution(const Stage& s) { return s.models[handed_on_model(s)].resolution; }

double start_progress(const Plan& plan, size_t i, size_t j, double handed, double pretrained) {
  if (plan.stages[i].models[j].pretrained) return pretrained;
  return plan.method == Method::mrmf && i > 0 && plan.stages[i].models[j].from_previous ? handed : 0.0;
}

double handed_on_progress(const ConvergenceParams& p, const Stage& s, std::span<const double> progress) {
  return fused_progress(p, progress[model_index(s, s.handoff.bottom_from)], progress[handed_on_model(s)]);
}

size_t slowest_model(std::span<const TimeSplit> models) {
  size_t k = 0;
  for (size_t j = 1; j < models.size(); ++j)
    if (models[j].time_s() > models[k].time_s()) k = j;
  return k;
}

void finish_stage(StageRecord& s) {
  size_t k = 0;  // measured wall times: the slowest model is the one whose epochs took longest
  for (size_t j = 1; j < s.models.size(); ++j)
    if (s.models[j].time_s > s.models[k].time_s) k = j;
  const auto& m = s.models[k];
  s.epochs = m.epochs;
  s.io_s = m.io_s, s.comm_s = m.comm_s, s.compute_s = m.compute_s, s.eval_s = m.eval_s;
  s.time_s = m.time_s + s.fusion_s;
  s.gpus = 0, s.global_batch = 0;
  for (const auto& x : s.models) s.gpus += x.gpus, s.global_batch += x.gpus * x.local_batch;
}

RecordTotals run_totals(const std::vector<StageRecord>& stages, bool reached_target) {
  RecordTotals t;
  for (const auto& s : stages) {
    t.io_s += s.io_s, t.comm_s += s.comm_s, t.compute_s += s.compute_s;
    t.time_to_target_s += s.time_s;
    t.gpu_hours += s.time_s * s.gpus / 3600.0;
    t.epochs += s.epochs;
  }
  t.reached_target = reached_target;
  return t;
}

}  // namespace mrplan
