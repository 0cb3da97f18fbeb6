// mrplan-fit-builtins: the built-in profiles fitted once, at build time, as YAML documents that the
// mrplan programs embed (calibrate/paper_calibration use_prefitted_profiles).
//   mrplan-fit-builtins [MLPERF_LOGS_ROOT MLPERF_FITS_YAML [--leave-out MACHINE | --list-folders]]
// (data/mlperf_fits.yaml: machines fitted to their logs; --leave-out: one fitted as if its logs were
// not there, the leave-one-system-out check of studies/mlperf-builtins, which --list-folders tells
// which logs to ingest as the build reads them)
#include <fmt/format.h>

#include <exception>
#include <string>

#include "calibrate/builtin_mlperf_fit.hpp"
#include "calibrate/calibrated_builtins.hpp"
#include "model/text_file.hpp"

namespace {

// machine|folder|ingest-mllog flags, one line per folder a machine's profile is fitted to (not the
// priors_only ones, which fit only their code's priors)
void list_folders(const std::string& logs_root, const std::string& fits_file) {
  for (const auto& m : mrplan::read_mlperf_fits(mrplan::read_text_file(fits_file, "the MLPerf fits"), fits_file))
    for (const auto& f : m.folders) {
      if (f.priors_only) continue;
      std::string flags;
      if (f.framework) flags += fmt::format(" --framework {}", mrplan::to_string(*f.framework));
      if (f.precision) flags += fmt::format(" --precision {}", mrplan::to_string(*f.precision));
      if (f.gpus) flags += fmt::format(" --gpus {}", *f.gpus);
      fmt::print("{}|{}|{}\n", m.name, mrplan::folder_path(f, logs_root), flags.empty() ? flags : flags.substr(1));
    }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 4 && std::string(argv[3]) == "--list-folders") {
      list_folders(argv[1], argv[2]);
      return 0;
    }
    const bool leave_out = argc == 5 && std::string(argv[3]) == "--leave-out";
    if (argc == 3 || leave_out) {
      mrplan::use_mlperf_logs(argv[1], mrplan::read_text_file(argv[2], "the MLPerf fits"), argv[2], leave_out ? argv[4] : "");
    } else if (argc != 1) {
      throw std::runtime_error("usage: mrplan-fit-builtins [MLPERF_LOGS_ROOT MLPERF_FITS_YAML [--leave-out MACHINE | --list-folders]]");
    }
    fmt::print("{}\n", mrplan::prefitted_profiles_yaml());
  } catch (const std::exception& e) {
    fmt::print(stderr, "mrplan-fit-builtins: {}\n", e.what());
    return 1;
  }
  return 0;
}
