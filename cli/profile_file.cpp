#include "cli/profile_file.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "model/profile_yaml.hpp"

namespace mrplan {

void update_profile(const std::string& path, int devices_per_node, const std::function<void(MachineProfile&)>& apply) {
  MachineProfile p;
  if (std::filesystem::exists(path)) {
    p = load_profile_file(path);
  } else {
    p.name = "local";
    p.description = "this machine, measured by mrplan calibrate";
    p.gpus_per_node = devices_per_node;
  }
  apply(p);
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  std::ofstream(path + ".tmp") << profile_to_yaml(p);
  std::filesystem::rename(path + ".tmp", path);
  fmt::print("wrote {}\n", path);
}

}  // namespace mrplan
