#pragma once
// The wait for the slowest rank of a machine that has run at one GPU count, from machines that have
// run at two: what `calibrate records --straggler-from` gives the fit.
#include <string>
#include <utility>
#include <vector>

#include "calibrate/records_fit.hpp"
#include "model/machine_profile.hpp"

namespace mrplan {

// The median of the step-time spreads (compute.step_time_cv, or node_sharing.step_time_cv) that
// `calibrate records` fitted to runs at two or more GPU counts in each profile, and the median
// absolute deviation of their logarithms as a normal's sigma, no narrower than their median relative
// standard error. A profile without such a fit is
// refused, naming its file.
SpreadPrior straggler_prior(const std::vector<std::pair<std::string, MachineProfile>>& fitted);

}  // namespace mrplan
