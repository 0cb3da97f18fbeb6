#include "cli/profile_keys.hpp"

#include <fmt/format.h>

#include <cmath>

#include "model/profile_parameters.hpp"

namespace mrplan {

namespace {

std::string accepted(const YamlNumber& y) {
  std::string out;
  if (y.positive) {
    out = "> 0";
  } else if (const auto lower = parameter_lower_bound(y.key); lower && std::isfinite(*lower)) {
    out = fmt::format(">= {}", *lower);
  } else {
    out = "any";
  }
  if (std::isfinite(y.upper)) out += fmt::format(", <= {}", y.upper);
  return out;
}

}  // namespace

std::string profile_keys_markdown() {
  std::string out = "| key | required | default | accepted |\n| --- | --- | --- | --- |\n";
  for (const auto& y : yaml_numbers())
    out += fmt::format("| `{}` | {} | {} | {} |\n", y.key, y.required ? "yes" : "", y.required ? "" : y.fallback_from ? y.fallback_from : fmt::format("{}", y.fallback),
                       accepted(y));
  return out;
}

}  // namespace mrplan
