#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "calibrate/mllog_ingest.hpp"
#include "calibrate/system_json.hpp"
#include "model/hardware_catalogue.hpp"
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

// One record name per log: its file name, or where two logs share one (result_0.txt of several
// systems), the folders above it too, so that no record overwrites another.
std::vector<std::string> record_names(const std::vector<std::string>& logs) {
  std::map<std::string, int> stems;
  for (const auto& l : logs) ++stems[std::filesystem::path(l).stem().string()];
  std::vector<std::string> names;
  for (const auto& l : logs) {
    const std::filesystem::path p(l);
    std::string name = p.stem().string();
    if (stems[name] > 1)
      for (auto dir = std::filesystem::absolute(p).parent_path(); dir.has_filename() && std::count(name.begin(), name.end(), '.') < 3;
           dir = dir.parent_path())
        name = dir.filename().string() + "." + name;
    names.push_back(name);
  }
  return names;
}

void print_ingested(const std::string& log, const Record& r) {
  const auto& s = r.stages.front();
  const auto& m = s.models.front();
  std::vector<double> epoch_s;
  for (const auto& e : m.per_epoch) epoch_s.push_back(e.epoch_s);
  fmt::print("{}: {} on {} GPUs, global batch {} (local {}), {} epochs, median epoch {:.2f} s (eval {:.2f} s), staging {}, "
             "time to train {:.1f} s, {} {} ({})\n",
             log, r.workload.empty() ? "unknown benchmark" : r.workload, s.gpus, s.global_batch, m.local_batch, r.totals.epochs,
             epoch_s.empty() ? 0.0 : median(epoch_s), m.epochs > 0 ? m.eval_s / m.epochs : 0.0,
             r.staging_s ? fmt::format("{:.1f} s", *r.staging_s) : "none", r.totals.time_to_target_s, r.target_metric,
             r.target_maximize ? "maximised" : "minimised", to_string(m.stop_reason));
  if (!r.plan_spec.empty()) {  // the settings read from the log that change the step, so a user sees them
    const Plan p = plan_from_yaml_text(r.plan_spec, log);
    if (!p.overlap_comm) fmt::print("  plan: gradient allreduce after backward (disable_comm_overlap)\n");
    if (p.batchnorm_group > 1) fmt::print("  plan: batch norm pooled over {} ranks (batchnorm_group_size)\n", p.batchnorm_group);
    if (!p.persistent_workers) fmt::print("  plan: the loader starts its workers at every pass (data_format hdf5: a PyTorch DataLoader)\n");
    if (p.framework == CommFramework::horovod) fmt::print("  plan: gradient allreduce by Horovod (--framework)\n");
  }
  for (const auto& w : r.warnings) fmt::print("  warning: {}\n", w);
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
      if (const auto d = machine_drift(rows); d.runs > 0) {
        fmt::print("machine drift: the runs' best matmul at their start ran at {:.2f}x the profile's peak (median; {:.2f}-{:.2f} over {} runs)\n",
                   d.median_ratio, d.min_ratio, d.max_ratio, d.runs);
        // drift is a few tens of percent; a factor of several is another device altogether
        if (d.median_ratio > kOtherDeviceRatio || d.median_ratio < 1 / kOtherDeviceRatio)
          fmt::print(stderr, "warning: the runs' device is {:.2g}x the speed of profile '{}': the profile describes another machine. "
                             "Run `mrplan calibrate all --profile FILE` where the runs ran, and validate against that file\n",
                     d.median_ratio, prof.name);
      }
      if (!csv->empty()) write_output(*csv, validation_csv(rows), "CSV file");
      if (!plot->empty()) scatter(rows, *plot);
      if (*samples > 0) print_coverage(spread_coverage(recs, prof, *samples, *seed), *samples);
    });
  }
  {
    auto* cmd = app.add_subcommand("ingest-mllog", "Turn MLPerf HPC result logs into measured Records");
    auto logs = std::make_shared<std::vector<std::string>>();
    auto out = std::make_shared<std::string>(".");
    auto opt = std::make_shared<MllogOptions>();
    auto gpus = std::make_shared<int>(0);
    cmd->add_option("logs", *logs, "result logs with :::MLLOG lines")->required();
    cmd->add_option("--out", *out, "folder for the NAME.record.json files")->capture_default_str();
    cmd->add_option("--machine", opt->machine, "machine of the records' plans: built-in name or profile YAML (default: the log's platform)");
    cmd->add_option("--gpus", *gpus, "GPUs of a log that does not say (no number_of_nodes, no number_of_ranks), or of one instance of a weak-scaling run whose log gives the whole system's nodes")->check(CLI::PositiveNumber);
    cmd->add_option_function<std::string>(
           "--precision", [opt](const std::string& p) { opt->precision = p == "amp" ? Precision::amp : Precision::fp32; },
           "precision of a log without precision_mode: what the submitter's code is known to run")
        ->check(CLI::IsMember({"fp32", "amp"}));
    cmd->add_option_function<std::string>(
           "--framework", [opt](const std::string& f) { opt->framework = comm_framework_from_string(f); },
           "library of the gradient allreduce, which logs do not say (default ddp; MXNet and TensorFlow submissions run horovod)")
        ->check(CLI::IsMember({"ddp", "horovod"}));
    auto system_json = std::make_shared<std::string>();
    cmd->add_option("--system-json", *system_json,
                    "the submission's system description (SUBMITTER/systems/SYSTEM.json): its framework field names the ML framework, "
                    "part of the code whose fits make priors and whose runs share an effect on the epochs (calibrate records); "
                    "default: the one beside each log in the MLPerf results' layout, where there is one");
    cmd->callback([logs, out, opt, gpus, system_json] {
      if (*gpus > 0) opt->gpus = *gpus;
      if (!system_json->empty()) {
        opt->software = load_system_json(*system_json, builtin_catalogue()).software;
        if (opt->software.empty())
          fmt::print(stderr, "warning: {}: its framework field names no ML framework: the records' code is the benchmark and its allreduce library alone\n", *system_json);
      }
      const auto names = record_names(*logs);
      std::set<std::string> said;  // the descriptions beside the logs, each named once
      for (size_t i = 0; i < logs->size(); ++i) {
        MllogOptions o = *opt;
        if (const auto beside = system_json->empty() ? system_json_beside((*logs)[i]) : ""; !beside.empty()) {
          o.software = software_in(beside);
          if (said.insert(beside).second)
            fmt::print("ML framework '{}': the system description beside the logs, {}{}\n", o.software, beside,
                       o.software.empty() ? " (it names none, or will not read: --system-json gives one)" : "");
        }
        const auto r = load_mllog_file((*logs)[i], o);
        print_ingested((*logs)[i], r);
        write_output((std::filesystem::path(*out) / (names[i] + ".record.json")).string(), record_to_json(r), "record");
      }
    });
  }
}

}  // namespace mrplan
