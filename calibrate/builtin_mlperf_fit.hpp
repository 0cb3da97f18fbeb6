#pragma once
// Built-in machines fitted to their own public MLPerf HPC runs (data/mlperf_fits.yaml), at build
// time: `calibrate records` on the machine's logs, the epochs to target with every other system's
// runs of the benchmark as the population (calibrate/batch_epochs_fit).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/machine_profile.hpp"
#include "model/plan.hpp"

namespace mrplan {

// One folder of one system's logs of one benchmark, and what the logs do not say.
struct MlperfFolder {
  std::string logs;  // relative to the logs root, or to `root`
  std::optional<CommFramework> framework;
  std::optional<Precision> precision;
  std::optional<int> gpus;  // one instance's GPUs, where its logs give the whole system's (ingest-mllog --gpus)
  std::string root;         // the folder `logs` lies under where it is not the logs root: the repository, for logs the root lacks
  // Its runs give their code's fits at two GPU counts (code_fits), not the machine's profile: their
  // staging tool is another code's than the one the machine's single staging pace is fitted to.
  bool priors_only = false;
};

// One machine of data/mlperf_fits.yaml and its folders. The order is the file's: a machine borrows
// what it has not fitted itself from one listed above it (calibrated_builtins).
struct MlperfMachine {
  std::string name;
  std::vector<MlperfFolder> folders;
};

// data/mlperf_fits.yaml's text, in its order (a folder `in_repository` lies under the repository that
// holds `file` in its data/ folder, not under the logs root). InputError naming `file` and key where bad.
std::vector<MlperfMachine> read_mlperf_fits(const std::string& yaml_text, const std::string& file);

// Where a folder's logs lie: under the logs root, or under its `root` (in_repository).
std::string folder_path(const MlperfFolder& f, const std::string& logs_root);

// What the fit did, for the build's log.
struct MlperfFitSummary {
  int own_runs = 0, population_runs = 0;
  std::vector<std::string> skipped;  // population logs that would not ingest, with the reason
};

// Fits `profile` to its `own` folders under `logs_root` (each refused with its path when missing or
// empty), the population from every other `*/*/*/BENCHMARK/result_*.txt` there but the `hidden`
// folders (a system left out: studies/mlperf-builtins). A benchmark it has no runs of (none at all,
// for a machine without logs: `own` empty) gets the population's epochs to target, with the
// between-system spread, not another system's (calibrate/batch_epochs_fit). A population folder one
// of `machines` lists is that machine's runs (one system: at two batches they measure its tunings),
// any other its own system.
MlperfFitSummary fit_to_mlperf_logs(MachineProfile& profile, const std::vector<MlperfFolder>& own, const std::string& logs_root,
                                    const std::vector<MlperfFolder>& hidden = {}, const std::vector<MlperfMachine>& machines = {});

// Each code's (workload and allreduce library: calibrate/code_priors) parameters that one GPU count
// cannot fit (step-time spread, a validation pass's and staging's fixed parts) on this machine, where
// its runs of that code train at two or more GPU counts: `fitted`, the machine fitted to all its
// runs, fitted again to that code's alone (they are the code's, one value per key and code). What
// calibrate records takes as its priors for runs at one GPU count (builtin_code_fits). By code.
std::map<std::string, std::vector<FittedParameter>> code_fits(const MachineProfile& fitted, const std::vector<MlperfFolder>& own, const std::string& logs_root);

}  // namespace mrplan
