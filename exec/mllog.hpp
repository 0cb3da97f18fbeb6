#pragma once
// MLPerf-style log lines (":::MLLOG {json}") so existing MLPerf log tools can read a run.
#include <fstream>
#include <string>
#include <vector>

#include "model/time_to_target.hpp"

namespace mrplan {

// A number as JSON: a non-finite one (a diverged run's loss) as null, which JSON readers accept.
std::string json_number(double v);

class MlLog {
 public:
  // Empty path: disabled. Appending, the lines already there count in times().
  explicit MlLog(const std::string& path, bool append);
  void event(const std::string& key, const std::string& event_type, const std::string& value_json,
             const std::string& metadata_json = "{}");
  void point(const std::string& key, const std::string& value_json, const std::string& metadata_json = "{}") {
    event(key, "POINT_IN_TIME", value_json, metadata_json);
  }
  // Appends the lines of `parts` (logs the roots of concurrent models' groups wrote, MRMF) in time
  // order, and removes the part files.
  void merge(const std::vector<std::string>& parts);
  // Every line's key and time, in file order (model/time_to_target.hpp reads the run's time from them).
  const std::vector<LoggedTime>& times() const { return times_; }

 private:
  std::ofstream out_;
  std::vector<LoggedTime> times_;
};

}  // namespace mrplan
