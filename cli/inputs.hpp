#pragma once
// Resolving the PLAN and profile arguments the subcommands share.
#include <string>

#include "model/machine_profile.hpp"
#include "model/plan.hpp"

namespace mrplan {

// PLAN is a YAML file or a built-in APP@MACHINE name.
Plan load_plan(const std::string& plan_arg);
// The plan's machine (or `override_machine`): a built-in name (calibrated) or a profile YAML.
MachineProfile machine_for(const Plan& plan, const std::string& override_machine = "");

}  // namespace mrplan
