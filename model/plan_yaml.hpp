#pragma once
#include <string>

#include "model/machine_profile.hpp"
#include "model/plan.hpp"

namespace mrplan {

Plan plan_from_yaml_text(const std::string& text, const std::string& file = "<text>");
Plan load_plan_file(const std::string& path);
std::string plan_to_yaml(const Plan& plan);

// Checks a plan against the machine it runs on (GPU counts, batches); throws InputError naming
// the plan file and key.
void check_plan_against_machine(const Plan& plan, const MachineProfile& machine);
// InputError naming `file` and the io key where the codec, decoder and staging do not go together.
void check_data_path(const Plan& plan, const std::string& file);

}  // namespace mrplan
