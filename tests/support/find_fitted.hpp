#pragma once
// The fitted parameter named `key` among a fit's, or nullptr: what a test asserts a fit moved.
#include <string>
#include <vector>

#include "model/machine_profile.hpp"

namespace mrplan::testing {

inline const FittedParameter* find_fitted(const std::vector<FittedParameter>& fitted, const std::string& key) {
  for (const auto& p : fitted)
    if (p.key == key) return &p;
  return nullptr;
}

}  // namespace mrplan::testing
