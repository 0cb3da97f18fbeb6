#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "calibrate/calibrated_builtins.hpp"
#include "calibrate/spread_coverage.hpp"
#include "calibrate/validation.hpp"
#include "cli/commands.hpp"
#include "sim/monte_carlo.hpp"
#include "cli/output_file.hpp"
#include "cli/scatter_plot.hpp"
#include "cli/text_table.hpp"
#include "model/error_summary.hpp"
#include "model/errors.hpp"
#include "model/plan_yaml.hpp"

namespace mrplan {

namespace {

constexpr double kOtherDeviceRatio = 3;  // runs this much faster or slower than the profile's peak

void scatter(const std::vector<ValidationRow>& rows, const std::string& png) {
  std::vector<ScatterPoint> pts;
  for (const auto& r : rows)
    if (r.quantity != "epochs" && r.quantity != "device_matmul_flops_per_s") pts.push_back({r.measured, r.predicted, r.used_for_calibration, r.quantity});
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

// Each row's error, then the median and P90 of each kind of quantity over the rows not used for calibration.
void print_rows(const std::vector<ValidationRow>& rows) {
  TextTable t({"record", "stage", "quantity", "measured", "predicted", "rel_error", "calibration"});
  for (const auto& r : rows)
    if (r.quantity != "device_matmul_flops_per_s")  // the machine's drift, on its own line below
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
    s.add({label, std::to_string(e.count), e.count ? fmt::format("{:.1f}%", 100 * e.median_abs) : "n/a",
           e.count ? fmt::format("{:.1f}%", 100 * e.p90_abs) : "n/a"});
  }
  fmt::print("\n{}", s.str());
}

// How fast the runs' device was against the profile's peak, and a warning where it is another device.
void print_drift(const std::vector<ValidationRow>& rows, const MachineProfile& prof) {
  const auto d = machine_drift(rows);
  if (d.runs == 0) return;
  fmt::print("machine drift: the runs' best matmul at their start ran at {:.2f}x the profile's peak (median; {:.2f}-{:.2f} over {} runs)\n",
             d.median_ratio, d.min_ratio, d.max_ratio, d.runs);
  // drift is a few tens of percent; a factor of several is another device altogether
  if (d.median_ratio > kOtherDeviceRatio || d.median_ratio < 1 / kOtherDeviceRatio)
    fmt::print(stderr,
               "warning: the runs' device is {:.2g}x the speed of profile '{}': the profile describes another machine. "
               "Run `mrplan calibrate all --profile FILE` where the runs ran, and validate against that file\n",
               d.median_ratio, prof.name);
}

}  // namespace

void register_validate(CLI::App& app) {
  auto* cmd = app.add_subcommand("validate", "Re-predict measured Records and report predicted-vs-measured error");
  auto profile = std::make_shared<std::string>();
  auto files = std::make_shared<std::vector<std::string>>();
  auto csv = std::make_shared<std::string>();
  auto plot = std::make_shared<std::string>();
  auto samples = std::make_shared<size_t>(0);
  auto seed = std::make_shared<uint64_t>(1);
  cmd->add_option("--profile", *profile, "machine profile: built-in name or YAML")->required();
  cmd->add_option("--samples", *samples, "also check each run's time to target against its predicted P10-P90 over this many draws")
      ->check(CLI::Range(size_t{0}, kMaxDraws));
  cmd->add_option("--seed", *seed, "seed of the draws")->capture_default_str();
  cmd->add_option("records", *files, "measured record.json files")->required();
  cmd->add_option("--csv", *csv, "write record,stage,quantity,measured,predicted,rel_error,used_for_calibration");
  cmd->add_option("--plot", *plot, "scatter plot PNG");
  cmd->callback([profile, files, csv, plot, samples, seed] {
    const auto prof = resolve_profile(*profile);
    std::vector<NamedRecord> recs;
    for (const auto& f : *files) recs.push_back({f, load_record_file(f)});
    const auto rows = validate_records(recs, prof);
    print_rows(rows);
    print_drift(rows, prof);
    if (!csv->empty()) write_output(*csv, validation_csv(rows), "CSV file");
    if (!plot->empty()) scatter(rows, *plot);
    if (*samples > 0) print_coverage(spread_coverage(recs, prof, *samples, *seed), *samples);
  });
}

}  // namespace mrplan
