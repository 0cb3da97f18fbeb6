#include "model/builtin_profiles.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/errors.hpp"
#include "model/profile_yaml.hpp"

namespace mrplan {

// data/machines/*.yaml, built into the binary (cmake/embed_text.cmake): read by the reader a
// user's profile goes through.
extern const char* const kSummitYaml;
extern const char* const kCoriGpuYaml;
extern const char* const kPerlmutterYaml;

std::vector<std::string> builtin_profile_names() { return {"summit", "cori-gpu", "perlmutter"}; }

MachineProfile builtin_hardware_profile(const std::string& name) {
  if (name == "summit") return profile_from_yaml_text(kSummitYaml, "data/machines/summit.yaml");
  if (name == "cori-gpu" || name == "cori") return profile_from_yaml_text(kCoriGpuYaml, "data/machines/cori-gpu.yaml");
  if (name == "perlmutter") return profile_from_yaml_text(kPerlmutterYaml, "data/machines/perlmutter.yaml");
  fail_input("", "machine", fmt::format("unknown built-in machine '{}' (known: {}; or give a profile YAML file)", name,
                                        fmt::join(builtin_profile_names(), ", ")));
}

}  // namespace mrplan
