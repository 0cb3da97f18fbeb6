#include "calibrate/builtin_mlperf_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>

#include "calibrate/batch_epochs_fit.hpp"
#include "calibrate/mllog_ingest.hpp"
#include "calibrate/records_fit.hpp"
#include "calibrate/system_json.hpp"
#include "model/hardware_catalogue.hpp"
#include "model/errors.hpp"
#include "model/plan_yaml.hpp"
#include "model/profile_parameters.hpp"
#include "model/yaml_fields.hpp"

namespace fs = std::filesystem;

namespace mrplan {

std::vector<MlperfMachine> read_mlperf_fits(const std::string& yaml_text, const std::string& file) {
  const YAML::Node root = parse_yaml_text(yaml_text, file);
  std::vector<MlperfMachine> out;
  if (root.IsNull()) return out;
  if (!root.IsMap()) fail_input(file, "", "expected a map of machine names to lists of log folders");
  const YamlFields top(root, file, "");
  for (const auto& machine : root) {
    const auto name = machine.first.as<std::string>();
    out.push_back({name, {}});
    for (const auto& f : top.list(name.c_str())) {
      f.only({"logs", "framework", "precision", "gpus", "in_repository", "priors_only"});
      MlperfFolder m{f.text("logs"), {}, {}, {}, {}};
      if (f.has("gpus")) {
        m.gpus = f.int32("gpus");
        if (*m.gpus < 1) fail_input(file, f.key_path("gpus"), fmt::format("{} GPUs: expected a count of at least 1", *m.gpus));
      }
      m.priors_only = f.boolean("priors_only", false);
      if (f.boolean("in_repository", false)) m.root = fs::absolute(file).parent_path().parent_path().string();
      if (f.has("framework")) {
        m.framework = comm_framework_from_string(f.text("framework"));
        if (!m.framework) fail_input(file, f.key_path("framework"), fmt::format("unknown framework '{}' (expected ddp or horovod)", f.text("framework")));
      }
      if (f.has("precision")) {
        const auto p = f.text("precision");
        if (p != "amp" && p != "fp32") fail_input(file, f.key_path("precision"), fmt::format("unknown precision '{}' (expected fp32 or amp)", p));
        m.precision = p == "amp" ? Precision::amp : Precision::fp32;
      }
      out.back().folders.push_back(m);
    }
  }
  return out;
}

namespace {

// A folder's result logs, sorted (the fit is the same whatever order the file system lists them in).
std::vector<fs::path> result_logs(const fs::path& folder) {
  std::vector<fs::path> out;
  if (fs::is_directory(folder))
    for (const auto& e : fs::directory_iterator(folder))
      if (e.is_regular_file() && e.path().filename().string().starts_with("result_")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Every other system's folders of `benchmark` under the root (ROUND/SUBMITTER/SYSTEM/BENCHMARK).
std::vector<fs::path> population_folders(const fs::path& root, const std::string& benchmark, const std::set<fs::path>& own) {
  std::vector<fs::path> out;
  for (const auto& round : fs::directory_iterator(root)) {
    if (!round.is_directory()) continue;
    for (const auto& submitter : fs::directory_iterator(round.path())) {
      if (!submitter.is_directory()) continue;
      for (const auto& system : fs::directory_iterator(submitter.path()))
        if (const auto f = system.path() / benchmark; fs::is_directory(f) && !own.contains(f)) out.push_back(f);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The folder's root: the logs root, or the repository for logs the root lacks.
fs::path root_of(const MlperfFolder& f, const std::string& logs_root) { return f.root.empty() ? fs::path(logs_root) : fs::path(f.root); }

// The machine's own runs, each named by its path under its folder's root.
std::vector<NamedRecord> own_records(const std::string& machine, const std::vector<MlperfFolder>& own, const std::string& logs_root) {
  std::vector<NamedRecord> recs;
  for (const auto& f : own) {
    const fs::path root = root_of(f, logs_root), folder = root / f.logs;
    const auto logs = result_logs(folder);
    if (logs.empty()) fail_input(folder.string(), "", fmt::format("no result_*.txt logs of {} here (data/mlperf_fits.yaml)", machine));
    MllogOptions o;
    o.machine = machine, o.framework = f.framework, o.precision = f.precision, o.gpus = f.gpus;
    o.software = software_beside(folder.string());
    for (const auto& log : logs) recs.push_back({fs::relative(log, root).string(), load_mllog_file(log.string(), o)});
  }
  return recs;
}

// The machine's runs of one benchmark (the folder's name is the benchmark's).
std::vector<NamedRecord> own_records_of(const std::vector<NamedRecord>& recs, const std::string& benchmark) {
  std::vector<NamedRecord> out;
  for (const auto& r : recs)
    if (fs::path(r.file).parent_path().filename() == benchmark) out.push_back(r);
  return out;
}

// The benchmarks the logs hold runs of (ROUND/SUBMITTER/SYSTEM/BENCHMARK), sorted.
std::set<std::string> benchmarks_under(const fs::path& root) {
  std::set<std::string> out;
  for (const auto& round : fs::directory_iterator(root))
    if (round.is_directory())
      for (const auto& submitter : fs::directory_iterator(round.path()))
        if (submitter.is_directory())
          for (const auto& system : fs::directory_iterator(submitter.path()))
            if (system.is_directory())
              for (const auto& b : fs::directory_iterator(system.path()))
                if (b.is_directory() && !result_logs(b.path()).empty()) out.insert(b.path().filename().string());
  return out;
}

// Every run of `benchmark` under the root but in the `excluded` folders, each system's named by the
// machine of `machines` that lists its folder, else by its folder (a log's platform key can be
// wrong); logs that will not ingest are listed in `skipped`.
std::vector<NamedRecord> population_of(const std::string& logs_root, const std::string& benchmark, const std::set<fs::path>& excluded,
                                       const std::vector<MlperfMachine>& machines, std::vector<std::string>& skipped) {
  auto system_of = [&](const fs::path& folder) {
    const auto under = fs::relative(folder, logs_root);
    for (const auto& m : machines)
      for (const auto& f : m.folders)
        if (fs::path(f.logs) == under) return m.name;
    return under.string();
  };
  std::vector<NamedRecord> out;
  for (const auto& folder : population_folders(logs_root, benchmark, excluded)) {
    MllogOptions o;
    o.software = software_beside(folder.string());  // the runs' ML framework: the code whose runs share a factor
    for (const auto& log : result_logs(folder)) try {
        Record r = load_mllog_file(log.string(), o);
        r.machine = system_of(folder);
        out.push_back({fs::relative(log, logs_root).string(), std::move(r)});
      } catch (const InputError& e) {
        skipped.push_back(e.what());
      }
  }
  return out;
}

// The folders of both lists, as paths under the root.
std::set<fs::path> folders_of(const std::string& logs_root, const std::vector<MlperfFolder>& a, const std::vector<MlperfFolder>& b) {
  std::set<fs::path> out;
  for (const auto* list : {&a, &b})
    for (const auto& f : *list) out.insert(root_of(f, logs_root) / f.logs);
  return out;
}

}  // namespace

std::string folder_path(const MlperfFolder& f, const std::string& logs_root) { return (root_of(f, logs_root) / f.logs).string(); }

MlperfFitSummary fit_to_mlperf_logs(MachineProfile& profile, const std::vector<MlperfFolder>& own, const std::string& logs_root,
                                    const std::vector<MlperfFolder>& hidden, const std::vector<MlperfMachine>& machines) {
  MlperfFitSummary s;
  std::vector<MlperfFolder> profile_folders;  // those whose runs fit the profile (not only their code's priors)
  std::copy_if(own.begin(), own.end(), std::back_inserter(profile_folders), [](const MlperfFolder& f) { return !f.priors_only; });
  const std::vector<NamedRecord> recs = own_records(profile.name, profile_folders, logs_root);
  const std::set<fs::path> excluded = folders_of(logs_root, own, hidden);
  std::set<std::string> mine;
  for (const auto& f : profile_folders) mine.insert(fs::path(f.logs).filename().string());
  for (const auto& b : benchmarks_under(logs_root)) {
    const auto others = population_of(logs_root, b, excluded, machines, s.skipped);
    s.population_runs += static_cast<int>(others.size());
    // a benchmark it did not run: the population's curve, with the between-system spread
    fit_batch_epochs(profile, mine.contains(b) ? own_records_of(recs, b) : std::vector<NamedRecord>{}, others);
  }
  s.own_runs = static_cast<int>(recs.size());
  // staging is fitted to its own rate and fixed part (io.staging_*), so that its copy tool's pace
  // does not stand for what the file system gives a job reading its epochs
  if (!recs.empty()) fit_records(profile, recs);
  return s;
}

std::map<std::string, std::vector<FittedParameter>> code_fits(const MachineProfile& fitted, const std::vector<MlperfFolder>& own, const std::string& logs_root) {
  std::map<std::string, std::vector<NamedRecord>> by_code;
  for (auto& r : own_records(fitted.name, own, logs_root))
    if (const auto code = code_of({plan_from_yaml_text(r.record.plan_spec, r.file)})) by_code[*code].push_back(std::move(r));
  std::map<std::string, std::vector<FittedParameter>> out;
  for (const auto& [code, recs] : by_code) {
    std::set<int> gpus;
    for (const auto& r : recs) gpus.insert(r.record.stages.front().gpus);
    if (gpus.size() < 2) continue;  // one count cannot tell the wait from the step
    MachineProfile p = fitted;
    set_parameter(p, "compute.step_time_cv", 0);  // the machine's is all its codes' at once: fitted afresh
    for (const auto& f : fit_records(p, recs).fitted)
      if (is_code_parameter(f.key)) out[code].push_back(f);
  }
  return out;
}

}  // namespace mrplan
