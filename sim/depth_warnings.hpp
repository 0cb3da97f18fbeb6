#pragma once
// Where a prediction is out of its depth: the convergence model used beyond what it was fitted on,
// fits borrowed from another machine, a plan the profile cannot run as written. Said in the
// Record's warnings (and so by predict, sweep and optimize).
#include <string>
#include <vector>

#include "model/machine_profile.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

// How far a global batch may stray from the curves' reference batch, with no critical batch
// fitted, before the epochs to target are a guess (McCandlish et al. 2018: below the critical batch
// epochs barely move; it is unknown here).
constexpr double kBatchExtrapolation = 4.0;

std::vector<std::string> depth_warnings(const PreparedPlan& p, const MachineProfile& machine);

}  // namespace mrplan
