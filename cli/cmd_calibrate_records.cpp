#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "calibrate/batch_epochs_fit.hpp"
#include "calibrate/calibrated_builtins.hpp"
#include "calibrate/code_priors.hpp"
#include "calibrate/mllog_ingest.hpp"
#include "calibrate/records_fit.hpp"
#include "calibrate/system_json.hpp"
#include "cli/commands.hpp"
#include "cli/log_files.hpp"
#include "cli/output_file.hpp"
#include "cli/text_table.hpp"
#include "model/errors.hpp"
#include "model/learning_curve.hpp"
#include "model/plan_yaml.hpp"
#include "model/profile_parameters.hpp"
#include "model/profile_yaml.hpp"
#include "model/text_file.hpp"

namespace mrplan {

namespace {

struct RecordsArgs {
  std::string profile, out;
  std::vector<std::string> records, epochs_from, priors_from;
  bool force = false;
};

// The records fitted are runs of the profile's machine: of one machine, and where a run timed its
// device (mrplan run's matmul probe), within a factor of 20 of the profile's fp32 peak. Records of
// this 2-core VM fitted into Perlmutter wrote a bandwidth efficiency of 0.0023 for it (issue 44).
void check_records_of(const std::vector<NamedRecord>& recs, const MachineProfile& profile) {
  for (const auto& r : recs) {
    if (r.record.machine != recs.front().record.machine)
      fail_input(r.file, "machine", fmt::format("'{}', but {} is of '{}': fit one machine's records at a time (--force to mix them)",
                                                r.record.machine, recs.front().file, recs.front().record.machine));
    const auto speed = r.record.device_matmul_flops_per_s;
    const double peak = profile.compute.peak_fp32_flops;
    if (speed && *speed > 0 && peak > 0 && (*speed < peak / 20 || *speed > peak * 20))
      fail_input(r.file, "device_matmul_flops_per_s",
                 fmt::format("its device ran matmuls at {:.3g} TFLOP/s, {:.0f}x {} profile '{}''s fp32 peak of {:.3g} TFLOP/s: a run of another "
                             "machine (fit it into that machine's profile, or --force)",
                             *speed / 1e12, *speed < peak ? peak / *speed : *speed / peak, *speed < peak ? "below" : "above", profile.name,
                             peak / 1e12));
  }
}

void print_fit(const RecordsFit& fit, const MachineProfile& prior) {
  TextTable t({"parameter", "prior", "fitted", "std error"});
  for (const auto& f : fit.fitted) {
    MachineProfile p = prior;
    const auto slot = find_parameter(p, f.key);
    // a workload's warm-up the prior does not list yet has none
    t.add({f.key, slot ? fmt::format("{:.4g}", *slot->values.front() / slot->to_internal) : "-", fmt::format("{:.4g}", f.value),
           f.std_error == 0          ? "exact"
           : std::isinf(f.std_error) ? "not pinned"
                                     : fmt::format("{:.2g}", f.std_error)});
  }
  fmt::print("fitted from {} records:\n{}", fit.used.size(), t.str());
  if (!fit.bounded.empty())
    fmt::print("bounded, not pinned (the records narrow them less than twofold; more GPU counts or batches pin them): {}\n",
               fmt::join(fit.bounded, ", "));
  if (!fit.at_prior.empty())
    fmt::print("left at their priors (the records' times do not depend on them): {}\n", fmt::join(fit.at_prior, ", "));
  TextTable o({"record", "quantity", "measured", "prior", "fitted", "error"});
  for (const auto& r : fit.observations)
    o.add({r.record, r.quantity, fmt::format("{:.4g}", r.measured), fmt::format("{:.4g}", r.prior), fmt::format("{:.4g}", r.fitted),
           fmt::format("{:+.1f}%", 100 * (r.fitted - r.measured) / r.measured)});
  fmt::print("\n{}", o.str());
  for (const auto& w : fit.warnings) fmt::print("warning: {}\n", w);
  for (const auto& n : fit.notes) fmt::print("note: {}\n", n);
  if (!fit.band.empty()) fmt::print("note: {}\n", fit.band);
}

// A system of the epochs' fit: its name, and the machines of a code's runs.
std::string system_label(const SystemEpochs& s) {
  if (s.machines.empty()) return s.name;
  if (s.name == "(fitted)") return fmt::format("(fitted), with its code's runs of {}", fmt::join(s.machines, ", "));
  return fmt::format("{}: {}", s.name, fmt::join(s.machines, ", "));
}

void print_epochs_fit(const BatchEpochsFit& fit) {
  if (!fit.fitted.empty()) {
    TextTable t({"parameter", "fitted", "std error"});
    for (const auto& f : fit.fitted)
      t.add({f.key, fmt::format("{:.4g}", f.value), f.std_error == 0 ? "exact" : fmt::format("{:.2g}", f.std_error)});
    fmt::print("\nepochs to target of {} fitted from {} runs:\n{}", fit.workload, fit.observations.size(), t.str());
  }
  for (const auto& p : fit.at_prior) fmt::print("left at its prior: {}\n", p);
  if (!fit.observations.empty()) {
    TextTable o({"record", "machine", "global batch", "epochs", "fitted"});
    for (const auto& r : fit.observations)
      o.add({r.record, r.machine, fmt::format("{}", r.global_batch), fmt::format("{:g}", r.measured), fmt::format("{:g}", r.fitted)});
    fmt::print("\n{}", o.str());
  }
  if (!fit.systems.empty()) {
    fmt::print("\npopulation: factor {:.3g}, critical batch {:.0f}; spread of a seed within a system and batch {:.1f}% at {:.3g} epochs "
               "(as 1/sqrt of a run's epochs), between systems {:.1f}% (persistent factor), of a batch's tuning {:.1f}%\n",
               fit.population_factor, fit.population_critical, 100 * fit.seed_sd, fit.seed_ref, 100 * fit.system_sd, 100 * fit.tuning_sd);
    TextTable t({"system", "runs", "batches", "factor / population", "tuning by batch", "pulled to population"});
    for (const auto& s : fit.systems) {
      std::vector<std::string> tunings;
      for (const auto& [slot, v] : s.tuning) tunings.push_back(fmt::format("{}: {:.3f}", to_string(slot), v));
      t.add({system_label(s), fmt::format("{}", s.runs), fmt::format("{}", s.batches), fmt::format("{:.3f}", s.factor),
             tunings.empty() ? "-" : fmt::format("{}", fmt::join(tunings, ", ")), fmt::format("{:.0f}%", 100 * s.shrinkage)});
    }
    fmt::print("{}", t.str());
  }
  for (const auto& [id, text] : fit.recipes) fmt::print("recipe {}: {}\n", id, text);
  for (const auto& s : fit.skipped) fmt::print("no epochs to target from {}\n", s);
  for (const auto& n : fit.notes) fmt::print("note: {}\n", n);
}

// The priors of what one GPU count cannot fit that the profiles gave, and the profiles left out.
void print_code_priors(const std::optional<CodePriors>& priors) {
  if (!priors) return;
  for (const auto& l : priors->left_out) fmt::print("left out of the priors: {}\n", l);
  for (const auto& p : priors->priors)
    fmt::print("prior of {}: {:.3g} ({} at one sigma), {}\n", p.key, p.value,
               p.additive ? fmt::format("±{:.2g}", p.sd) : fmt::format("x/{:.2f}", std::exp(p.log_sd)), p.source);
}

// Without --priors-from, records at one GPU count take the priors of what that count cannot fit from
// the built-in machines that ran their code at two (the build's fits, data/mlperf_fits.yaml), the
// prior's own machine left out; said either way.
std::vector<std::pair<std::string, MachineProfile>> builtin_priors_for(const std::vector<NamedRecord>& recs, const MachineProfile& prior) {
  std::set<int> gpus;
  std::vector<Plan> plans;
  for (const auto& r : recs) {
    if (r.record.plan_spec.empty() || r.record.stages.empty()) return {};
    plans.push_back(plan_from_yaml_text(r.record.plan_spec, r.file));
    gpus.insert(r.record.stages.front().gpus);
  }
  const auto code = code_of(plans);
  if (gpus.size() != 1 || !code) return {};
  std::vector<std::pair<std::string, MachineProfile>> out;
  for (auto& s : builtin_code_fits())
    if (s.second.name != prior.name && has_fits_of(s.second, *code)) out.push_back(std::move(s));
  if (out.empty())
    fmt::print("no built-in machine has run {} at two GPU counts: what one count cannot fit (the wait for the slowest rank, the first "
               "epoch's warm-up, a validation pass's and staging's fixed parts) has no prior (give --priors-from)\n",
               *code);
  return out;
}

// Which run a log holds: its text where it is one (a copy elsewhere is the same run), else its path
// (a plan file, which many runs share).
std::string run_of(const std::string& path, const std::string& text) {
  if (text.find(":::MLLOG") != std::string::npos) return fmt::format("text {:x}", std::hash<std::string>{}(text));
  std::error_code ec;
  const auto c = std::filesystem::weakly_canonical(path, ec);
  return "path " + (ec ? path : c.string());
}

// The same for a record's log, read where it can be (it may have moved since the record was made).
std::string run_of_log(const std::string& log) {
  std::ostringstream text;
  if (std::ifstream in(log, std::ios::binary); in) text << in.rdbuf();
  return run_of(log, text.str());
}

// The other machines' runs of --epochs-from, read before any fit. A public result log is read as
// ingest-mllog reads it, its folder its system (a log's platform key can be wrong: LBNL's v1.0 logs
// say DGX A100), its ML framework from the submission's system description beside it. A run the
// fitted records hold already (the same log, or a copy of it; a record ingested from one) would
// count twice, and is left out; in a folder given, another benchmark's logs are passed over (named
// one by one, they are refused by the fit).
std::vector<NamedRecord> epochs_from(const std::vector<std::string>& args, const std::vector<NamedRecord>& recs) {
  namespace fs = std::filesystem;
  std::set<std::string> fitted_runs;  // ingested records keep their log as their plan
  for (const auto& r : recs) fitted_runs.insert(run_of_log(r.record.plan));
  std::vector<NamedRecord> others;
  size_t other_benchmark = 0, same_run = 0;
  for (const auto& [f, from_folder] : expand_log_folders(args, true, "--epochs-from")) {
    const bool json = fs::path(f).extension() == ".json";
    Record r;
    std::string text;  // a log's, read once: for which run it is and for its record
    if (json) r = load_record_file(f);
    else text = read_text_file(f, "the log file");
    if (fitted_runs.count(json ? run_of_log(r.plan) : run_of(f, text))) {
      ++same_run;
      continue;
    }
    if (!json) {
      MllogOptions o;
      o.software = software_beside(f);
      r = record_from_mllog(text, f, o);
      r.machine = fs::path(f).parent_path().string();
    }
    if (from_folder && !recs.empty() && r.workload != recs.front().record.workload) {
      ++other_benchmark;
      continue;
    }
    others.push_back({f, std::move(r)});
  }
  if (same_run > 0)
    fmt::print(stderr,
               "note: --epochs-from: {} of its runs are the fitted records' own (the same log, a copy, or a record of it): counted once\n",
               same_run);
  if (other_benchmark > 0)
    fmt::print(stderr, "note: --epochs-from: {} logs or records in its folders are of another benchmark than {}: left out\n",
               other_benchmark, recs.front().record.workload);
  return others;
}

void calibrate_records(const RecordsArgs& a) {
  const bool builtin = !names_a_file(a.profile);
  if (builtin && a.out.empty())
    throw CLI::ValidationError("--out", fmt::format("'{}' is a built-in profile: give --out FILE.yaml for the fitted copy", a.profile));
  const MachineProfile prior = resolve_profile(a.profile);
  std::vector<NamedRecord> recs;
  std::map<std::string, std::string> seen;  // a record's JSON -> the file it came from
  for (const auto& f : a.records) {
    auto r = load_record_file(f);
    // the same run given twice (the same file, or a copy) would count twice in the fit
    if (const auto [at, fresh] = seen.emplace(record_to_json(r), f); !fresh) {
      fmt::print(stderr, "note: {} is the same record as {}: counted once\n", f, at->second);
      continue;
    }
    recs.push_back({f, std::move(r)});
  }
  const auto others = epochs_from(a.epochs_from, recs);  // read before any fit: a bad file ends the command before it prints one
  std::vector<std::pair<std::string, MachineProfile>> priors_from;
  for (const auto& f : a.priors_from) priors_from.emplace_back(f, resolve_profile(f));
  if (!a.force && !recs.empty()) check_records_of(recs, prior);
  if (priors_from.empty()) priors_from = builtin_priors_for(recs, prior);
  MachineProfile fitted = prior;
  // the epochs first (they refuse another workload's records at once), the times second: neither
  // fit moves what the other fits
  const auto epochs = fit_batch_epochs(fitted, recs, others);
  const auto fit = fit_records(fitted, recs, priors_from);
  print_code_priors(fit.priors);
  print_fit(fit, prior);
  for (const auto& h : held_near_priors(fitted)) fmt::print("held near other machines' fits (one GPU count cannot fit it): {} {:.4g}\n", h.key, h.value);
  for (const auto& e : epochs) print_epochs_fit(e);
  write_output(a.out.empty() ? a.profile : a.out, profile_to_yaml(fitted), "profile");
}

}  // namespace

void register_calibrate_records(CLI::App& cal) {
  auto* c = cal.add_subcommand("records",
                               "Fit a profile's timing parameters (compute efficiency, validation pass, first epoch's warm-up and reads, kernel overhead, allreduce) "
                               "from measured records of any cluster, through the simulator (least squares, standard errors), "
                               "and the epochs to target at the records' global batch");
  auto a = std::make_shared<RecordsArgs>();
  c->add_option("records", a->records, "measured record.json files (ingest-mllog writes them from MLPerf logs)")->required();
  c->add_option("--profile", a->profile, "prior profile: built-in name or YAML (updated in place unless --out)")->required();
  c->add_option("--out", a->out, "write the fitted profile here");
  c->add_option("--epochs-from", a->epochs_from,
                "measured records (record.json) or MLPerf result logs of the same workload from other machines: with the fitted "
                "records', their epochs to target fit a population curve of epochs against global batch (the critical batch), "
                "each machine's effect on it pulled toward the population by its evidence; the fitted records' machine keeps its own; "
                "their times are not fitted; a folder gives every result log and record under it, those of other benchmarks left out")
      ->expected(1, -1);
  c->add_option("--priors-from,--straggler-from", a->priors_from,
                "profiles of other machines that calibrate records fitted to runs of the same code (workload, allreduce "
                "library and, where the records name it, ML framework) at two or more GPU counts: the medians of their step-time spreads (the wait for the slowest rank), "
                "validation passes' and staging's fixed parts are the priors of what one GPU count cannot fit; other code's are "
                "left out. Without it, records at one GPU count take the built-in machines' fits of their code (to their "
                "MLPerf HPC runs at two counts)")
      ->expected(1, -1);
  c->add_flag("--force", a->force, "fit records of several machines, or whose device is far from the profile's, all the same");
  c->callback([a] { calibrate_records(*a); });
}

}  // namespace mrplan
