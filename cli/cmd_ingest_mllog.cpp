// `mrplan ingest-mllog`: MLPerf HPC result logs into measured Records, one per log, with the
// settings read from each log that change the step said.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "calibrate/calibrated_builtins.hpp"
#include "calibrate/mllog_ingest.hpp"
#include "calibrate/system_json.hpp"
#include "cli/commands.hpp"
#include "cli/inputs.hpp"
#include "cli/log_files.hpp"
#include "cli/output_file.hpp"
#include "model/error_summary.hpp"
#include "model/hardware_catalogue.hpp"
#include "model/plan_yaml.hpp"

namespace mrplan {

namespace {

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
  fmt::print(
      "{}: {} on {} GPUs, global batch {} (local {}), {} epochs, median epoch {:.2f} s (eval {:.2f} s), staging {}, "
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

void register_ingest_mllog(CLI::App& app) {
  auto* cmd = app.add_subcommand("ingest-mllog", "Turn MLPerf HPC result logs into measured Records");
  auto logs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>(".");
  auto opt = std::make_shared<MllogOptions>();
  auto gpus = std::make_shared<int>(0);
  cmd->add_option("logs", *logs, "result logs with :::MLLOG lines, or folders: every result*.txt under them")->required();
  cmd->add_option("--out", *out, "folder for the NAME.record.json files")->capture_default_str();
  cmd->add_option("--machine", opt->machine, "machine of the records' plans: built-in name or profile YAML (default: the log's platform)");
  cmd->add_option("--gpus", *gpus,
                  "GPUs of a log that does not say (no number_of_nodes, no number_of_ranks), or of one instance of a weak-scaling run "
                  "whose log gives the whole system's nodes")
      ->check(CLI::PositiveNumber);
  add_choice_option(cmd, "--precision", opt->precision, {Precision::fp32, Precision::amp}, "a precision",
                    "precision of a log without precision_mode: what the submitter's code is known to run");
  add_choice_option(cmd, "--framework", opt->framework, {CommFramework::ddp, CommFramework::horovod}, "an allreduce library",
                    "library of the gradient allreduce, which logs do not say (default ddp; MXNet and TensorFlow submissions run horovod)");
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
        fmt::print(
            stderr,
            "warning: {}: its framework field names no ML framework: the records' code is the benchmark and its allreduce library alone\n",
            *system_json);
    }
    *logs = [&] {
      std::vector<std::string> files;
      for (auto& l : expand_log_folders(*logs, false, "logs")) files.push_back(std::move(l.path));
      return files;
    }();
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

}  // namespace mrplan
