#pragma once
// "did you mean": the nearest of `known` to a mistyped word, within two edits.
#include <optional>
#include <string>
#include <vector>

namespace mrplan {
std::optional<std::string> nearest_word(const std::string& typed, const std::vector<std::string>& known);
}  // namespace mrplan
