#include "model/time_to_target.hpp"

#include <algorithm>

namespace mrplan {

double trained_time_s(const std::vector<LoggedTime>& lines) {
  const auto start = std::find_if(lines.begin(), lines.end(), [](const LoggedTime& l) { return l.key == "run_start"; });
  if (start == lines.end()) return 0;
  double total_ms = 0, segment_start = start->time_ms, last = start->time_ms;
  for (auto it = start + 1; it != lines.end(); ++it) {
    if (it->key == kResumeKey) {  // the time between the kill and the resume was nobody's training
      total_ms += last - segment_start;
      segment_start = last = it->time_ms;
      continue;
    }
    last = std::max(last, it->time_ms);  // merged logs of concurrent models are in time order only per part
    if (it->key == "run_stop") break;
  }
  return (total_ms + last - segment_start) / 1000.0;
}

}  // namespace mrplan
