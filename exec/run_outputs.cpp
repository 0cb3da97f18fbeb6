#include "exec/run_outputs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "exec/durable_file.hpp"
#include "model/errors.hpp"
#include "model/method_rules.hpp"
#include "model/mllog_keys.hpp"
#include "model/text_file.hpp"
#include "model/time_to_target.hpp"

namespace mrplan {

namespace fs = std::filesystem;

namespace {

// MLPerf HPC's run_stop, with its status: once per run (success or aborted).
void log_run_stop(MlLog& log, bool reached) {
  log.event("run_stop", "INTERVAL_END", "null", fmt::format("{{\"status\": \"{}\"}}", reached ? "success" : "aborted"));
}

bool has_run_stop(MlLog& log) {
  const auto& times = log.times();
  return std::any_of(times.begin(), times.end(), [](const LoggedTime& t) { return t.key == "run_stop"; });
}

}  // namespace

void add_totals(const Plan& plan, Record& r, bool killed) {
  const bool reached =
      !killed && r.stages.size() == plan.stages.size() && r.stages.back().single().stop_reason == StopReason::target_reached;
  r.totals = run_totals(r.stages, reached);
}

void print_summary(const Record& r) {
  for (const auto& s : r.stages) {
    for (const auto& m : s.models)
      fmt::print("stage {}{}: {:.4g} epochs{}, {:.1f} s (data {:.1f}, comm {:.1f}, compute {:.1f})\n", s.name,
                 s.models.size() == 1 ? "" : " model " + m.name, m.epochs,
                 m.switch_epoch ? fmt::format(" (switch at {})", *m.switch_epoch) : "", m.time_s, m.io_s, m.comm_s, m.compute_s);
    if (s.fusion_s > 0) fmt::print("stage {}: fused in {:.3f} s\n", s.name, s.fusion_s);
  }
  const auto& t = r.totals;
  if (t.reached_target) fmt::print("time to target {:.1f} s\n", t.time_to_target_s);
  else fmt::print("trained {:.1f} s, target not reached\n", t.time_to_target_s);
}

void write_run_outputs(const fs::path& out, MlLog& log, Record& r, const std::string* final_model) {
  // exactly once per run, resumed or not (MLPerf HPC rules: success or aborted); a stop as if
  // killed writes none, so that the resumed run's is the one
  if (final_model) log_run_stop(log, r.totals.reached_target);
  r.totals.time_to_target_s = trained_time_s(log.times());  // as ingest-mllog reads it from the log (model/time_to_target)
  if (final_model) write_atomically(out / "model.pt", *final_model);
  write_atomically(out / "record.json", record_to_json(r));
  print_summary(r);
  fmt::print("wrote {}{}\n", (out / "record.json").string(),
             final_model ? fmt::format(", {} and {}", (out / "mllog.txt").string(), (out / "model.pt").string()) : "");
}

void finish_outputs(const fs::path& out, Record& r, const std::string& final_model_bytes) {
  MlLog log((out / "mllog.txt").string(), true);
  if (!has_run_stop(log)) {
    log.point(kResumeKey, "null", fmt::format("{{\"at_stage\": {}}}", r.stages.size() + 1));  // the wait since the kill is not trained
    log_run_stop(log, r.totals.reached_target);
  }
  r.totals.time_to_target_s = trained_time_s(log.times());
  std::vector<std::string> rewritten;
  const auto model = out / "model.pt", record = out / "record.json";
  if (!fs::exists(model) || read_text_file(model.string(), "the final model") != final_model_bytes) {
    write_atomically(model, final_model_bytes);
    rewritten.push_back("model.pt");
  }
  bool record_sound = fs::exists(record);
  try {
    if (record_sound) record_from_json(read_text_file(record.string(), "the run's record"), record.string());
  } catch (const InputError&) {
    record_sound = false;
  }
  if (!record_sound) {
    write_atomically(record, record_to_json(r));
    rewritten.push_back("record.json");
  }
  fmt::print("the run in {} is finished; {}\n", out.string(),
             rewritten.empty()
                 ? "nothing to resume"
                 : fmt::format("{} missing or damaged: written again from the last checkpoint", fmt::join(rewritten, " and ")));
}

void end_log_aborted(const fs::path& mllog) {
  if (!fs::exists(mllog)) return;
  MlLog log(mllog.string(), true);
  if (!has_run_stop(log)) log_run_stop(log, false);
}

}  // namespace mrplan
