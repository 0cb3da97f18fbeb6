#pragma once
// gnuplot script for a sweep: time to target vs switch point per GPU count (the rule's choice
// marked, the baseline dashed; vs the GPU count for a method without a switch or a baseline alone)
// beside stacked I/O / comm / compute bars per method and GPU-hours vs GPUs.
#include <string>
#include <vector>

#include "sim/sweep.hpp"

namespace mrplan {

std::string sweep_plot_script(const std::vector<SweepPoint>& points, const std::string& title, const std::string& png);

}  // namespace mrplan
