#include "model/builtin_profiles.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/embedded_files.hpp"
#include "model/errors.hpp"
#include "model/profile_yaml.hpp"

namespace mrplan {

std::vector<std::string> builtin_profile_names() { return embedded_names(builtin_machine_files()); }

MachineProfile builtin_hardware_profile(const std::string& name) {
  const auto* f = find_embedded(builtin_machine_files(), name == "cori" ? "cori-gpu" : name);
  if (!f)
    fail_input("", "machine", fmt::format("unknown built-in machine '{}' (known: {}; or give a profile YAML file)", name,
                                          fmt::join(builtin_profile_names(), ", ")));
  return profile_from_yaml_text(f->text, f->path);
}

}  // namespace mrplan
