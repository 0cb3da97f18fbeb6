#include "model/stop_reason.hpp"

#include <array>
#include <utility>

namespace mrplan {

namespace {
constexpr std::array<std::pair<StopReason, const char*>, 14> kNames = {{
    {StopReason::none, ""},
    {StopReason::target_reached, "target reached"},
    {StopReason::target_missed, "max_epochs (target not reached)"},
    {StopReason::epochs, "epochs"},
    {StopReason::iterations, "iterations"},
    {StopReason::switch_rule, "switch rule"},
    {StopReason::switch_never_fired, "max_epochs (switch rule never fired)"},
    {StopReason::plateau, "plateau"},
    {StopReason::forced_switch, "forced switch point"},
    {StopReason::max_epochs, "max_epochs"},
    {StopReason::logged, "logged"},
    {StopReason::run_success, "success"},
    {StopReason::run_aborted, "aborted"},
    {StopReason::unknown, "unknown"},
}};
}  // namespace

const char* to_string(StopReason r) {
  for (const auto& [reason, name] : kNames)
    if (reason == r) return name;
  return "?";
}

std::optional<StopReason> stop_reason_from_string(const std::string& text) {
  for (const auto& [reason, name] : kNames)
    if (text == name) return reason;
  return std::nullopt;
}

std::string stop_reason_names() {
  std::string out;
  for (const auto& [reason, name] : kNames)
    if (reason != StopReason::none) out += (out.empty() ? "\"" : ", \"") + std::string(name) + "\"";
  return out + " or \"\" (not stopped)";
}

}  // namespace mrplan
