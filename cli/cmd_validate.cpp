#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "calibrate/mllog_ingest.hpp"
#include "calibrate/paper_calibration.hpp"
#include "calibrate/spread_coverage.hpp"
#include "calibrate/validation.hpp"
#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "cli/scatter_plot.hpp"
#include "cli/text_table.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {

void scatter(const std::vector<ValidationRow>& rows, const std::string& png) {
  std::vector<ScatterPoint> pts;
  for (const auto& r : rows)
    if (r.quantity != "epochs" && r.quantity != "device_matmul_flops_per_s") pts.push_back({r.measured, r.predicted, r.used_for_calibration});
  scatter_plot(pts, {"predicted vs measured (seconds)", "measured", "predicted", "validation", "used for calibration"}, png);
}

void print_coverage(const std::vector<CoverageRow>& rows, size_t samples) {
  TextTable t({"record", "measured time to target", "P10", "P50", "P90", "inside"});
  size_t inside = 0;
  for (const auto& r : rows) {
    inside += r.inside;
    t.add({r.record, fmt::format("{:.1f}", r.measured_s), fmt::format("{:.1f}", r.predicted_s.p10), fmt::format("{:.1f}", r.predicted_s.p50),
           fmt::format("{:.1f}", r.predicted_s.p90), r.inside ? "yes" : "NO"});
  }
  fmt::print("\n{}", t.str());
  fmt::print("coverage: {} of {} runs inside their predicted P10-P90 ({:.0f}%; 80% expected) over {} draws\n", inside, rows.size(),
             rows.empty() ? 0.0 : 100.0 * inside / rows.size(), samples);
}

}  // namespace

void register_validate(CLI::App& app) {
  {
    auto* cmd = app.add_subcommand("validate", "Re-predict measured Records and report predicted-vs-measured error");
    auto profile = std::make_shared<std::string>();
    auto files = std::make_shared<std::vector<std::string>>();
    auto csv = std::make_shared<std::string>();
    auto plot = std::make_shared<std::string>();
    auto samples = std::make_shared<size_t>(0);
    auto seed = std::make_shared<uint64_t>(1);
    cmd->add_option("--profile", *profile, "machine profile: built-in name or YAML")->required();
    cmd->add_option("--samples", *samples, "also check each run's time to target against its predicted P10-P90 over this many draws");
    cmd->add_option("--seed", *seed, "seed of the draws")->capture_default_str();
    cmd->add_option("records", *files, "measured record.json files")->required();
    cmd->add_option("--csv", *csv, "write record,stage,quantity,measured,predicted,rel_error,used_for_calibration");
    cmd->add_option("--plot", *plot, "scatter plot PNG");
    cmd->callback([profile, files, csv, plot, samples, seed] {
      const auto prof = resolve_profile(*profile);
      std::vector<NamedRecord> recs;
      for (const auto& f : *files) recs.push_back({f, load_record_file(f)});
      const auto rows = validate_records(recs, prof);
      TextTable t({"record", "stage", "quantity", "measured", "predicted", "rel_error", "calibration"});
      for (const auto& r : rows)
        t.add({r.record, r.stage, r.quantity, fmt::format("{:.4g}", r.measured), fmt::format("{:.4g}", r.predicted),
               r.measured != 0 ? fmt::format("{:+.1f}%", 100 * r.rel_error) : "n/a", r.used_for_calibration ? "yes" : ""});
      fmt::print("{}", t.str());
      TextTable s({"quantity (records not used for calibration)", "rows", "median |error|", "p90 |error|"});
      for (const auto& [label, qs] : std::vector<std::pair<std::string, std::vector<std::string>>>{
               {"epoch time", {"epoch_s"}},
               {"per-epoch components", {"io_s", "comm_s", "compute_s", "eval_s", "epoch_s"}},
               {"validation pass", {"eval_s"}},
               {"step phases", {"forward_s", "backward_s", "optimizer_s"}},
               {"epochs", {"epochs"}},
               {"end-to-end time", {"time_to_target_s"}}}) {
        const auto e = summarize_validation(rows, qs);
        s.add({label, std::to_string(e.count), fmt::format("{:.1f}%", 100 * e.median_abs), fmt::format("{:.1f}%", 100 * e.p90_abs)});
      }
      fmt::print("\n{}", s.str());
      if (const auto d = machine_drift(rows); d.runs > 0)
        fmt::print("machine drift: the runs' best matmul at their start ran at {:.2f}x the profile's peak (median; {:.2f}-{:.2f} over {} runs)\n",
                   d.median_ratio, d.min_ratio, d.max_ratio, d.runs);
      if (!csv->empty()) write_output(*csv, validation_csv(rows), "CSV file");
      if (!plot->empty()) scatter(rows, *plot);
      if (*samples > 0) print_coverage(spread_coverage(recs, prof, *samples, *seed), *samples);
    });
  }
  {
    auto* cmd = app.add_subcommand("ingest-mllog", "Turn MLPerf HPC result logs into measured Records");
    auto logs = std::make_shared<std::vector<std::string>>();
    auto out = std::make_shared<std::string>(".");
    cmd->add_option("logs", *logs, "result logs with :::MLLOG lines")->required();
    cmd->add_option("--out", *out, "folder for the NAME.record.json files")->capture_default_str();
    cmd->callback([logs, out] {
      std::filesystem::create_directories(*out);
      for (const auto& l : *logs) {
        const auto r = load_mllog_file(l);
        const auto dst = std::filesystem::path(*out) / (std::filesystem::path(l).stem().string() + ".record.json");
        std::ofstream(dst) << record_to_json(r);
        fmt::print("{}: {} epochs, {} GPUs, global batch {}, time to train {:.1f} s ({}) -> {}\n", l, r.stages[0].epochs,
                   r.stages[0].gpus, r.stages[0].global_batch, r.totals.time_to_target_s, r.stages[0].models[0].stop_reason, dst.string());
      }
    });
  }
}

}  // namespace mrplan
