#include "sim/builtin_plans.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/embedded_files.hpp"
#include "model/errors.hpp"
#include "model/plan_scaling.hpp"
#include "model/plan_yaml.hpp"

namespace mrplan {

std::span<const EmbeddedFile> builtin_plan_files();  // data/plans/*.yaml (sim/CMakeLists.txt)

std::vector<std::string> builtin_plan_names() { return embedded_names(builtin_plan_files()); }

bool is_builtin_plan(const std::string& name) {
  const auto at = name.find('@');
  return at != std::string::npos && find_embedded(builtin_plan_files(), name.substr(0, at));
}

Plan builtin_plan(const std::string& name, int gpus) {
  const auto at = name.find('@');
  const auto* file = at == std::string::npos ? nullptr : find_embedded(builtin_plan_files(), name.substr(0, at));
  if (!file)
    fail_input("", "plan",
               fmt::format("'{}' is neither a plan file nor a built-in plan APP@MACHINE (APP one of: {})", name,
                           fmt::join(builtin_plan_names(), ", ")));
  // the file leaves the machine out (it is the name's): read once with a stand-in, then given it
  Plan p = parsed_once<Plan>(*file, [](const EmbeddedFile& f) { return plan_from_yaml_text(std::string("machine: builtin\n") + f.text, f.path); });
  p.machine = name.substr(at + 1);
  p.name = name;
  p.source_file = "builtin:" + name;
  return gpus > 0 ? plan_at_gpus(p, gpus) : p;
}

}  // namespace mrplan
