#include "calibrate/validation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "model/errors.hpp"
#include "model/plan_yaml.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

namespace {

// One record's comparison: where its rows go, and what its measured times hold.
struct RecordCheck {
  const std::string& file;
  bool used = false;           // a fit of the profile lists the record among its sources
  bool eval_modelled = false;  // the simulator predicts validation passes, which then stay in the measured times
  std::vector<ValidationRow>& rows;

  void add(const std::string& stage, const std::string& quantity, double measured, double predicted) const {
    rows.push_back({file, stage, quantity, measured, predicted, measured != 0 ? (predicted - measured) / measured : 0.0, used});
  }
  // measured times stay as the run measured them (docs/record-schema.md); a profile without an
  // evaluation cost has the run's own evaluation time added to its prediction instead
  double plus_unmodelled(double predicted_s, double measured_eval_s) const {
    return eval_modelled ? predicted_s : predicted_s + measured_eval_s;
  }
};

// A model's per-epoch parts, its step's phases where the run timed them, and its epochs.
void check_model(const RecordCheck& r, const std::string& where, const ModelRecord& mr, const ModelCosts& c,
                 std::optional<double> predicted_epochs) {
  const auto t = model_time(c, mr.epochs);
  if (mr.io_s + mr.comm_s + mr.compute_s > 0) {  // result logs time epochs, not their parts
    r.add(where, "io_s", mr.io_s / mr.epochs, t.io_s / mr.epochs);
    r.add(where, "comm_s", mr.comm_s / mr.epochs, t.comm_s / mr.epochs);
    r.add(where, "compute_s", mr.compute_s / mr.epochs, t.compute_s / mr.epochs);
  }
  r.add(where, "epoch_s", mr.time_s / mr.epochs, r.plus_unmodelled(t.epoch_s(), mr.eval_s) / mr.epochs);
  if (r.eval_modelled) r.add(where, "eval_s", mr.eval_s / mr.epochs, t.eval_s / mr.epochs);
  if (mr.phases) {  // where the step's time goes, for records that timed its phases
    const double iters = static_cast<double>(c.iterations_per_epoch);
    r.add(where, "forward_s", mr.phases->forward_s / mr.epochs, c.forward_iter_s * iters);
    r.add(where, "backward_s", mr.phases->backward_s / mr.epochs, c.backward_iter_s * iters);
    r.add(where, "optimizer_s", mr.phases->optimizer_s / mr.epochs, c.optimizer_iter_s * iters);
  }
  if (predicted_epochs) r.add(where, "epochs", mr.epochs, *predicted_epochs);
}

void check_record(const std::string& file, const Record& m, const MachineProfile& profile, std::vector<ValidationRow>& rows) {
  if (m.source != Source::measured) fail_input(file, "source", "validate compares measured records; this one is a prediction");
  if (m.plan_spec.empty()) fail_input(file, "plan_spec", "the record does not carry the plan it ran, so it cannot be re-predicted");
  const Plan plan = plan_from_yaml_text(m.plan_spec, file + ": plan_spec");
  const auto pp = prepare(plan, profile);
  if (pp.stages.size() != m.stages.size())
    fail_input(file, "stages", fmt::format("the record has {} stages, its plan {}", m.stages.size(), pp.stages.size()));
  RecordCheck r{.file = file, .used = false, .eval_modelled = false, .rows = rows};
  for (const auto& f : profile.fitted) r.used = r.used || f.source.find(file) != std::string::npos;
  for (const auto& st : pp.stages)
    for (const auto& c : st.models) r.eval_modelled = r.eval_modelled || c.eval_batches > 0;
  std::vector<ModelEpochs> predicted_epochs;
  bool have_convergence = true;
  try {
    predicted_epochs = model_epochs(pp);
  } catch (const InputError&) {
    have_convergence = false;  // no convergence parameters for this workload: compare costs only
  }
  for (size_t i = 0; i < m.stages.size(); ++i) {
    const auto& s = m.stages[i];
    if (s.models.size() != pp.stages[i].models.size())
      fail_input(file, fmt::format("stages[{}].models", i),
                 fmt::format("the record has {} models in stage '{}', its plan {}", s.models.size(), s.name, pp.stages[i].models.size()));
    for (size_t j = 0; j < s.models.size(); ++j)
      if (s.models[j].epochs > 0)
        check_model(r, s.models.size() == 1 ? s.name : s.name + "/" + s.models[j].name, s.models[j], pp.stages[i].models[j],
                    have_convergence ? std::optional(predicted_epochs[pp.stages[i].first + j].epochs) : std::nullopt);
    if (s.fusion_s > 0 || pp.stages[i].fusion_s > 0) r.add(s.name, "fusion_s", s.fusion_s, pp.stages[i].fusion_s);
  }
  if (m.staging_s || pp.staging_s > 0) r.add("total", "staging_s", m.staging_s.value_or(0), pp.staging_s);
  double eval_s = 0;
  for (const auto& s : m.stages) eval_s += s.eval_s;
  if (have_convergence)
    r.add("total", "time_to_target_s", m.totals.time_to_target_s, r.plus_unmodelled(totals(pp, predicted_epochs).time_s, eval_s));
  if (m.device_matmul_flops_per_s)
    r.add("total", "device_matmul_flops_per_s", *m.device_matmul_flops_per_s, profile.compute.peak_fp32_flops);
}

}  // namespace

std::vector<ValidationRow> validate_records(const std::vector<NamedRecord>& measured, const MachineProfile& profile) {
  std::vector<ValidationRow> rows;
  for (const auto& [file, m] : measured) check_record(file, m, profile, rows);
  return rows;
}

DriftSummary machine_drift(const std::vector<ValidationRow>& rows) {
  std::map<std::string, double> ratio;  // by record
  for (const auto& r : rows)
    if (r.quantity == "device_matmul_flops_per_s" && !r.used_for_calibration && r.predicted > 0) ratio[r.record] = r.measured / r.predicted;
  DriftSummary d;
  if (ratio.empty()) return d;
  std::vector<double> rs;
  for (const auto& [rec, v] : ratio) rs.push_back(v);
  d.runs = static_cast<int>(rs.size());
  d.median_ratio = median(rs);
  d.min_ratio = *std::min_element(rs.begin(), rs.end());
  d.max_ratio = *std::max_element(rs.begin(), rs.end());
  return d;
}

ErrorSummary summarize_validation(const std::vector<ValidationRow>& rows, const std::vector<std::string>& quantities) {
  std::vector<double> errs;
  for (const auto& r : rows)
    if (!r.used_for_calibration && r.measured != 0 &&
        std::find(quantities.begin(), quantities.end(), r.quantity) != quantities.end())
      errs.push_back(r.rel_error);
  return summarize_abs_errors(std::move(errs));
}

std::string validation_csv(const std::vector<ValidationRow>& rows) {
  std::string s = "record,stage,quantity,measured,predicted,rel_error,used_for_calibration\n";
  for (const auto& r : rows)
    s += fmt::format("{},{},{},{:.6g},{:.6g},{:.6g},{}\n", r.record, r.stage, r.quantity, r.measured, r.predicted, r.rel_error,
                     r.used_for_calibration ? "true" : "false");
  return s;
}

}  // namespace mrplan
