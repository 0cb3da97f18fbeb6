#pragma once
// The ":::MLLOG {json}" lines of an MLPerf result log, in file order (MLCommons logging: every
// event has key, time_ms, value and metadata; submitters add their own metadata freely).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace mrplan {

struct MllogEvent {
  std::string key;
  double time_ms = 0;
  nlohmann::json value, metadata;  // metadata: an object, empty where the line has none
  int line = 0;                    // 1-based, for error messages
};

// Lines without ":::MLLOG " are skipped (submitters interleave their own output); a malformed
// event line is refused naming the file and line.
std::vector<MllogEvent> parse_mllog_events(const std::string& text, const std::string& file);

// The event's epoch: metadata.epoch_num, or metadata.epoch (some submitters' tracked_stats).
std::optional<int> event_epoch(const MllogEvent& e);

}  // namespace mrplan
