#include "sim/search_space.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "model/errors.hpp"
#include "model/method_table.hpp"
#include "sim/builtin_plans.hpp"

namespace mrplan {

std::vector<Plan> builtin_templates(const std::string& app, const std::string& machine, std::vector<Method> methods,
                                    const std::string& pretrained) {
  const bool asked = !methods.empty();  // none asked: every method the application has a plan of
  if (!asked)
    for (const auto& r : method_table())
      if ((r.single_stage || !app.ends_with("-mlperf")) && (!r.pretrained || !pretrained.empty())) methods.push_back(r.method);
  for (Method m : methods)
    if (method_row(m).pretrained && pretrained.empty())
      fail_input("command line", "--methods",
                 fmt::format("{} starts from a pretrained model: give --pretrained MODEL.pt (an earlier run's model of related data)",
                             method_row(m).display));
  const auto names = builtin_plan_names();
  auto known = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  std::vector<Plan> out;
  // an application no built-in plan is of (a misspelt name) is the argument's error, not a method's
  std::vector<std::string> apps;
  for (const auto& n : names)
    if (const auto app_of = n.substr(0, n.rfind('-')); std::find(apps.begin(), apps.end(), app_of) == apps.end()) apps.push_back(app_of);
  if (!app.ends_with("-mlperf") && std::find(apps.begin(), apps.end(), app) == apps.end())
    fail_input("command line", "APP@MACHINE", fmt::format("'{}' is no application with built-in plans (known: {})", app, fmt::join(apps, ", ")));
  if (app.ends_with("-mlperf")) {  // MLPerf's reference trains the dense model alone
    for (Method m : methods)
      if (!method_row(m).single_stage)
        fail_input("command line", "--methods", fmt::format("'{}' is MLPerf's reference training: --methods baseline only", app));
    if (!known(app)) fail_input("command line", "PLAN", fmt::format("no built-in plan '{}' (built-in plans: {})", app, fmt::join(names, ", ")));
    return {builtin_plan(app + "@" + machine)};
  }
  for (Method m : methods) {
    const auto& row = method_row(m);
    size_t found = 0;
    for (const auto& suffix : row.plan_suffixes)
      if (known(app + suffix)) {
        out.push_back(builtin_plan(app + suffix + "@" + machine)), ++found;
        if (row.pretrained) start_from(out.back(), pretrained);
      }
    if (found == 0 && (asked || row.every_app_has_one))
      fail_input("command line", "--methods",
                 fmt::format("'{}' has no built-in {} plan (built-in plans: {})", app, to_string(m), fmt::join(names, ", ")));
  }
  return out;
}

std::vector<int> doubling_values(int from, int to) {
  std::vector<int> out;
  for (long g = std::max(1, from); g <= to; g *= 2) out.push_back(static_cast<int>(g));
  return out;
}

SearchSpace default_space(std::vector<Plan> templates, const MachineProfile& machine) {
  SearchSpace s;
  s.templates = std::move(templates);
  s.gpus = doubling_values(machine.gpus_per_node, 4096);
  for (int b = 1; b <= 64; ++b) s.local_batches.push_back(b);
  for (int e = 1; e <= 200; ++e) s.switch_epochs.push_back(e);
  return s;
}

}  // namespace mrplan
