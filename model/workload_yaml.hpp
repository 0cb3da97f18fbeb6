#pragma once
// A network described layer by layer in YAML (the form `mrplan workload NAME --yaml` prints).
#include <string>

#include "model/network_spec.hpp"

namespace mrplan {

NetworkSpec workload_from_yaml_text(const std::string& text, const std::string& file = "<text>");
NetworkSpec load_workload_file(const std::string& path);
std::string workload_to_yaml(const NetworkSpec& spec);

}  // namespace mrplan
