#pragma once
// MLPerf HPC result logs and measured records named one by one or by a folder that holds them (an
// MLPerf results repository's tree, ../shared/mlperf-logs, ingest-mllog's --out): what users point
// ingest-mllog and calibrate records' --epochs-from at.
#include <string>
#include <vector>

namespace mrplan {

struct LogArgument {
  std::string path;
  bool from_folder = false;  // found in a folder given, not named: another benchmark's is skipped, not refused
};

// Each file as given; each folder as every result log (result*.txt) under it and, where
// `records_too`, every measured record (*.record.json), in path order. A folder with none is an
// error naming `option` and what it looked for.
std::vector<LogArgument> expand_log_folders(const std::vector<std::string>& args, bool records_too, const std::string& option);

}  // namespace mrplan
