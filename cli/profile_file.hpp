#pragma once
// The machine profile that `calibrate` subcommands update in turn.
#include <string>

#include "model/machine_profile.hpp"

namespace mrplan {

// The profile at `path`, or a new `local` one with `devices_per_node` when the file is missing.
MachineProfile load_or_new_profile(const std::string& path, int devices_per_node);

// Atomic: written to a temporary file, then renamed, so an interrupted run leaves the old profile.
void save_profile(const MachineProfile& profile, const std::string& path);

}  // namespace mrplan
