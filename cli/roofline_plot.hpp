#pragma once
// Achieved FLOP/s against arithmetic intensity (Williams et al. 2009), one point per timed op.
#include <string>
#include <vector>

#include "calibrate/compute_fit.hpp"

namespace mrplan {

// Forward passes of math ops, by family, under the measured peak and bandwidth roofs.
void roofline_plot(const std::vector<OpTimingSample>& samples, const ComputeParams& roofs, const std::string& png);

}  // namespace mrplan
