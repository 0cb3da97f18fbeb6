#pragma once
// Time to target, one definition for the trainer, its Record, `validate` and `ingest-mllog`
// (docs/record-schema.md): the wall time from run_start to run_stop in the run's MLPerf log, less
// each gap between a killed attempt's last line and the `mrplan_resume` line its resume began with.
#include <string>
#include <vector>

#include "model/mllog_keys.hpp"

namespace mrplan {

struct LoggedTime {
  std::string key;
  double time_ms = 0;
};

// Seconds trained by the log's lines (in file order): to run_stop, or to the last line of a run that
// has none yet (killed, or stopped to be resumed); 0 without a run_start.
double trained_time_s(const std::vector<LoggedTime>& lines);

}  // namespace mrplan
