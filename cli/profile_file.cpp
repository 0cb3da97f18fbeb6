#include "cli/profile_file.hpp"

#include <filesystem>
#include <fstream>

#include "model/profile_yaml.hpp"

namespace mrplan {

MachineProfile load_or_new_profile(const std::string& path, int devices_per_node) {
  if (std::filesystem::exists(path)) return load_profile_file(path);
  MachineProfile p;
  p.name = "local";
  p.description = "this machine, measured by mrplan calibrate";
  p.gpus_per_node = devices_per_node;
  return p;
}

void save_profile(const MachineProfile& p, const std::string& path) {
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  std::ofstream(path + ".tmp") << profile_to_yaml(p);
  std::filesystem::rename(path + ".tmp", path);
}

}  // namespace mrplan
