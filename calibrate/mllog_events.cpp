#include "calibrate/mllog_events.hpp"

#include <fmt/format.h>

#include <optional>
#include <sstream>

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
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line.substr(pos + 9));
    } catch (const nlohmann::json::parse_error& e) {
      fail_input(file, where, std::string("malformed :::MLLOG line: ") + e.what());
    }
    if (!j.is_object() || !j.contains("key") || !j["key"].is_string() || !j.contains("time_ms") || !j["time_ms"].is_number())
      fail_input(file, where, "an :::MLLOG line needs a string 'key' and a number 'time_ms'");
    MllogEvent e;
    e.key = j["key"];
    e.time_ms = j["time_ms"].get<double>();
    e.value = j.value("value", nlohmann::json());
    e.metadata = j.value("metadata", nlohmann::json::object());
    if (!e.metadata.is_object()) e.metadata = nlohmann::json::object();
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
