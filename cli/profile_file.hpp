#pragma once
// The machine profile that `calibrate` subcommands update in turn.
#include <functional>
#include <string>

#include "model/machine_profile.hpp"

namespace mrplan {

// Loads the profile at `path` (a new `local` one with `devices_per_node` when the file is
// missing), lets `apply` put a fit into it, and writes it back atomically (temporary file, then
// rename, so an interrupted run leaves the old profile).
void update_profile(const std::string& path, int devices_per_node, const std::function<void(MachineProfile&)>& apply);

}  // namespace mrplan
