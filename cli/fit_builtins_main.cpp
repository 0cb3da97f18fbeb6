// mrplan-fit-builtins: the built-in profiles fitted once, at build time, as YAML documents that the
// mrplan programs embed (calibrate/paper_calibration use_prefitted_profiles).
//   mrplan-fit-builtins [MLPERF_LOGS_ROOT MLPERF_FITS_YAML [--leave-out MACHINE]]
// (data/mlperf_fits.yaml: machines fitted to their logs; --leave-out: one fitted as if its logs were
// not there, the leave-one-system-out check of studies/mlperf-builtins)
#include <fmt/format.h>

#include <exception>
#include <string>

#include "calibrate/calibrated_builtins.hpp"
#include "model/text_file.hpp"

int main(int argc, char** argv) {
  try {
    const bool leave_out = argc == 5 && std::string(argv[3]) == "--leave-out";
    if (argc == 3 || leave_out) {
      mrplan::use_mlperf_logs(argv[1], mrplan::read_text_file(argv[2], "the MLPerf fits"), argv[2], leave_out ? argv[4] : "");
    } else if (argc != 1) {
      throw std::runtime_error("usage: mrplan-fit-builtins [MLPERF_LOGS_ROOT MLPERF_FITS_YAML [--leave-out MACHINE]]");
    }
    fmt::print("{}\n", mrplan::prefitted_profiles_yaml());
  } catch (const std::exception& e) {
    fmt::print(stderr, "mrplan-fit-builtins: {}\n", e.what());
    return 1;
  }
  return 0;
}
