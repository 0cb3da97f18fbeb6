#include "calibrate/mllog_events.hpp"

#include <fmt/format.h>

#include <optional>
#include <sstream>

#include "calibrate/json_strict.hpp"
#include "model/errors.hpp"

namespace mrplan {

std::vector<MllogEvent> parse_mllog_events(const std::string& text, const std::string& file) {
  std::vector<MllogEvent> events;
  std::istringstream in(text);
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const auto pos = line.find(":::MLLOG ");
    if (pos == std::string::npos) continue;
    const auto where = fmt::format("line {}", lineno);
    const auto j = parse_json_strict(line.substr(pos + 9), file, where, "malformed :::MLLOG line");
    if (!j.is_object() || !j.contains("key") || !j["key"].is_string() || !j.contains("time_ms") || !j["time_ms"].is_number())
      fail_input(file, where, "an :::MLLOG line needs a string 'key' and a number 'time_ms'");
    MllogEvent e;
    e.key = j["key"];
    e.time_ms = j["time_ms"].get<double>();
    // milliseconds since 1970 (MLPerf logging rules): negative or past the year 2286 is no clock's reading
    if (!(e.time_ms >= 0 && e.time_ms <= 1e13))
      fail_input(file, where, fmt::format("time_ms {} is not a time (expected milliseconds since 1970, 0 to 1e13)", e.time_ms));
    e.value = j.value("value", nlohmann::json());
    e.metadata = j.value("metadata", nlohmann::json::object());
    if (!e.metadata.is_object()) e.metadata = nlohmann::json::object();
    for (const char* k : {"epoch_num", "epoch"})
      if (const auto it = e.metadata.find(k); it != e.metadata.end() && it->is_number() &&
                                              (!it->is_number_integer() || it->get<double>() < 0 || it->get<double>() > 1e9))
        fail_input(file, where, fmt::format("metadata.{} is {}: expected a whole epoch number from 0 to 1e9", k, it->dump()));
    e.line = lineno;
    events.push_back(std::move(e));
  }
  return events;
}

std::optional<int> event_epoch(const MllogEvent& e) {
  for (const char* k : {"epoch_num", "epoch"})
    if (auto it = e.metadata.find(k); it != e.metadata.end() && it->is_number_integer()) return it->get<int>();
  return std::nullopt;
}

}  // namespace mrplan
