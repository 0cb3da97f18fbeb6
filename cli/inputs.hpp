#pragma once
// Resolving the PLAN and profile arguments the subcommands share.
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "exec/device_kind.hpp"
#include "model/machine_profile.hpp"
#include "model/plan.hpp"

namespace mrplan {

// PLAN is a YAML file or a built-in APP@MACHINE name.
Plan load_plan(const std::string& plan_arg);
// The plan's machine (or `override_machine`): a built-in name (calibrated) or a profile YAML.
MachineProfile machine_for(const Plan& plan, const std::string& override_machine = "");

// What predict, sweep and optimize let the command line change: `--set KEY=VALUE` (plan keys, or
// machine.KEY for the profile: model/yaml_overrides.hpp) and `--local-batch` for every model.
struct PlanEdits {
  std::vector<std::string> sets;
  int local_batch = 0;
};
// `local_batch`: whether to add --local-batch (optimize searches its own axis of that name).
void add_plan_edit_options(CLI::App* cmd, PlanEdits& edits, bool local_batch = true);
Plan edited(const Plan& plan, const PlanEdits& edits);
// --keep global|local: what moving to another GPU count keeps; left out, the plan's `scaling`.
void add_keep_option(CLI::App* cmd, std::string& keep, const std::string& help);
// An option naming one of a closed set (an enum's values by name): --help shows the names and the
// default (the choice `var` holds; none where it holds none of them, e.g. an empty optional), and
// any other name is refused with them.
CLI::Option* add_named_option(CLI::App* cmd, const std::string& flag, const std::vector<std::string>& names, size_t default_index,
                              std::function<void(size_t)> set, const std::string& what, const std::string& help);
template <class E>
CLI::Option* add_choice_option(CLI::App* cmd, const std::string& flag, E& var, const std::vector<std::pair<std::string, E>>& choices,
                               const std::string& what, const std::string& help) {
  std::vector<std::string> names;
  size_t current = choices.size();
  for (size_t i = 0; i < choices.size(); ++i) {
    names.push_back(choices[i].first);
    if (choices[i].second == var) current = i;
  }
  return add_named_option(
      cmd, flag, names, current, [&var, choices](size_t i) { var = choices[i].second; }, what, help);
}
// The same, each value named by its enum's own `to_string` (`var` an E or an optional E).
template <class V, class E>
CLI::Option* add_choice_option(CLI::App* cmd, const std::string& flag, V& var, std::initializer_list<E> values, const std::string& what,
                               const std::string& help) {
  std::vector<std::pair<std::string, V>> choices;
  for (const E e : values) choices.emplace_back(to_string(e), e);
  return add_choice_option(cmd, flag, var, choices, what, help);
}
// --device cpu|cuda, and auto where `with_auto` (run: the GPUs where LibTorch sees one)
void add_device_option(CLI::App* cmd, DeviceKind& device, const std::string& help, bool with_auto = false);
// --optimizer, read by the optimizer table's names (model/optimizers)
void add_optimizer_option(CLI::App* cmd, Optimizer& optimizer, const std::string& help);
Plan with_keep(Plan plan, const std::string& keep);
MachineProfile edited(const MachineProfile& machine, const PlanEdits& edits);

}  // namespace mrplan
