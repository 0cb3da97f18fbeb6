#include "cli/inputs.hpp"

#include <filesystem>

#include "calibrate/paper_calibration.hpp"
#include "model/errors.hpp"
#include "model/plan_yaml.hpp"
#include "sim/builtin_plans.hpp"

namespace mrplan {

Plan load_plan(const std::string& arg) {
  if (std::filesystem::exists(arg) || arg.ends_with(".yaml") || arg.ends_with(".yml")) return load_plan_file(arg);
  return builtin_plan(arg);
}

MachineProfile machine_for(const Plan& plan, const std::string& override_machine) {
  const std::string m = override_machine.empty() ? plan.machine : override_machine;
  std::filesystem::path p(m);
  if ((m.ends_with(".yaml") || m.ends_with(".yml")) && p.is_relative() && !std::filesystem::exists(p) &&
      !plan.source_file.empty())
    p = std::filesystem::path(plan.source_file).parent_path() / p;
  try {
    return resolve_profile(p.string());
  } catch (const InputError& e) {
    if (std::filesystem::exists(p)) throw;
    std::string why = e.what();
    if (why.rfind("machine: ", 0) == 0) why = why.substr(9);  // said once, with the plan's file
    fail_input(plan.source_file, "machine", why);
  }
}

}  // namespace mrplan
