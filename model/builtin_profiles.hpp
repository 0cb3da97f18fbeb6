#pragma once
// Machine profiles with public hardware numbers only; efficiencies and overheads are priors
// until calibrated (calibrate/paper_calibration.hpp fits them from the MRT paper's rows).
#include <string>
#include <vector>

#include "model/machine_profile.hpp"

namespace mrplan {

std::vector<std::string> builtin_profile_names();
MachineProfile builtin_hardware_profile(const std::string& name);  // throws InputError if unknown

}  // namespace mrplan
