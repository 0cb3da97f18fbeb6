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
  std::string logs;  // relative to the logs root
  std::optional<CommFramework> framework;
  std::optional<Precision> precision;
};

// data/mlperf_fits.yaml's text: machine -> its folders. InputError naming `file` and key where bad.
std::map<std::string, std::vector<MlperfFolder>> read_mlperf_fits(const std::string& yaml_text, const std::string& file);

// What the fit did, for the build's log.
struct MlperfFitSummary {
  int own_runs = 0, population_runs = 0;
  std::vector<std::string> skipped;  // population logs that would not ingest, with the reason
};

// Fits `profile` to its `own` folders under `logs_root` (each refused with its path when missing or
// empty), the population from every other `*/*/*/BENCHMARK/result_*.txt` there.
MlperfFitSummary fit_to_mlperf_logs(MachineProfile& profile, const std::vector<MlperfFolder>& own, const std::string& logs_root);

}  // namespace mrplan
