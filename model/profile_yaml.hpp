#pragma once
#include <string>

#include "model/machine_profile.hpp"

namespace mrplan {

MachineProfile profile_from_yaml_text(const std::string& text, const std::string& file = "<text>");
MachineProfile load_profile_file(const std::string& path);
std::string profile_to_yaml(const MachineProfile& profile);

}  // namespace mrplan
