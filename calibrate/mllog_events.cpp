#include "calibrate/mllog_events.hpp"

#include <fmt/format.h>

#include <optional>
#include <set>
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
    std::vector<std::set<std::string>> keys;  // per open object: JSON allows a key twice, a log that does so is ambiguous
    const nlohmann::json::parser_callback_t unique_keys = [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
      if (ev == nlohmann::json::parse_event_t::object_start) keys.emplace_back();
      if (ev == nlohmann::json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
      if (ev == nlohmann::json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
        fail_input(file, where, fmt::format("the key '{}' appears twice in one object", parsed.get<std::string>()));
      return true;
    };
    try {
      j = nlohmann::json::parse(line.substr(pos + 9), unique_keys);
    } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number beyond double
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
