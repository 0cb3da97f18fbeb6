#include "calibrate/mrt_paper_study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "calibrate/calibrated_builtins.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

namespace {

std::string plan_name(const PaperValue& v, const std::string& machine) {
  const std::string variant = v.dataset == "coarse" ? "coarse" : v.dataset == "dense" ? "baseline" : "mrt";
  return fmt::format("{}-{}@{}", v.app, variant, machine);
}

double predict(const PaperValue& v) {
  const std::string machine = v.machine == "all" ? "summit" : v.machine;
  const auto& prof = calibrated_builtin_profile(machine);
  const auto pp = prepare(builtin_plan(plan_name(v, machine), v.gpus), prof);
  const auto ep = model_epochs(pp);  // the paper's plans train one model per stage
  if (v.quantity == "epochs" || v.quantity == "iterations") {
    const size_t stage = v.dataset == "mrt-dense" ? 1 : 0;
    const double e = ep[stage].epochs;
    return v.quantity == "epochs" ? e : e * static_cast<double>(pp.stages[stage].models[0].iterations_per_epoch);
  }
  if (v.quantity == "total_s") return totals(pp, ep).time_s;
  const auto t = model_time(pp.stages.front().models[0], ep.front().epochs);
  const double n = ep.front().epochs;
  if (v.quantity == "io_s") return t.io_s / n;
  if (v.quantity == "comm_s") return t.comm_s / n;
  if (v.quantity == "compute_s") return t.compute_s / n;
  return t.epoch_s() / n;
}

}  // namespace

std::vector<StudyRow> mrt_paper_study() {
  std::vector<StudyRow> rows;
  for (const auto& v : mrt_paper_values()) {
    StudyRow r;
    r.paper = v;
    r.predicted = predict(v);
    r.rel_error = v.value != 0 ? (r.predicted - v.value) / v.value : 0.0;
    rows.push_back(r);
  }
  return rows;
}

ErrorSummary summarize_held_out(const std::vector<StudyRow>& rows, const std::vector<std::string>& quantities) {
  std::vector<double> errs;
  for (const auto& r : rows)
    if (!r.paper.used_for_calibration() && r.paper.value != 0 &&
        std::find(quantities.begin(), quantities.end(), r.paper.quantity) != quantities.end())
      errs.push_back(r.rel_error);
  return summarize_abs_errors(std::move(errs));
}

}  // namespace mrplan
