#include "calibrate/json_strict.hpp"

#include <fmt/format.h>

#include <set>
#include <vector>

#include "model/errors.hpp"

namespace mrplan {

nlohmann::json parse_json_strict(const std::string& text, const std::string& file, const std::string& where,
                                 const std::string& malformed) {
  std::vector<std::set<std::string>> keys;  // per open object
  const nlohmann::json::parser_callback_t unique_keys = [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
    if (ev == nlohmann::json::parse_event_t::object_start) keys.emplace_back();
    if (ev == nlohmann::json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (ev == nlohmann::json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
      fail_input(file, where, fmt::format("the key '{}' appears twice in one object", printable(parsed.get<std::string>())));
    return true;
  };
  try {
    return nlohmann::json::parse(text, unique_keys);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number beyond double
    fail_input(file, where, malformed + ": " + e.what());
  }
}

}  // namespace mrplan
