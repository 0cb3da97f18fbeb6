#include "cli/inputs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "calibrate/calibrated_builtins.hpp"
#include "model/text_file.hpp"
#include "model/errors.hpp"
#include "model/plan_yaml.hpp"
#include "model/record.hpp"
#include "model/yaml_overrides.hpp"
#include "sim/builtin_plans.hpp"

namespace mrplan {

Plan load_plan(const std::string& arg) {
  if (arg.ends_with(".json")) {  // a Record, ingested or measured: the plan it ran
    const Record r = load_record_file(arg);
    if (r.plan_spec.empty()) fail_input(arg, "plan_spec", "this record holds no plan (a record written before plans were kept)");
    return plan_from_yaml_text(r.plan_spec, arg);
  }
  if (names_a_file(arg)) return load_plan_file(arg);
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

void add_plan_edit_options(CLI::App* cmd, PlanEdits& e, bool local_batch) {
  cmd->add_option("--set", e.sets, "KEY=VALUE: a dotted plan key (stages.0.learning_rate=0.002, io.codec=lut) or machine.KEY for the "
                                   "profile (machine.io.host_decode_GBps=3); repeatable");
  if (local_batch) cmd->add_option("--local-batch", e.local_batch, "every model's local batch")->check(CLI::Range(1, 1 << 20));
}

Plan edited(const Plan& plan, const PlanEdits& e) {
  Plan p = plan;
  if (e.local_batch > 0)
    for (auto& st : p.stages)
      for (auto& m : st.models) m.local_batch = e.local_batch;
  return with_overrides(p, parse_overrides(e.sets));
}

void add_keep_option(CLI::App* cmd, std::string& keep, const std::string& help) {
  cmd->add_option("--keep", keep, help + " (default: the plan's scaling)")->check(CLI::IsMember({"global", "local"}));
}

CLI::Option* add_named_option(CLI::App* cmd, const std::string& flag, const std::vector<std::string>& names, size_t default_index,
                              std::function<void(size_t)> set, const std::string& what, const std::string& help) {
  const std::string listed = names.size() < 2 ? fmt::format("{}", fmt::join(names, ""))
                                              : fmt::format("{} or {}", fmt::join(names.begin(), names.end() - 1, ", "), names.back());
  return cmd
      ->add_option_function<std::string>(
          flag,
          [names, set, flag, what, listed](const std::string& name) {
            const auto at = std::find(names.begin(), names.end(), name);
            if (at == names.end()) fail_input("command line", flag, fmt::format("'{}' is not {}: {}", name, what, listed));
            set(static_cast<size_t>(at - names.begin()));
          },
          help)
      ->option_text(default_index < names.size() ? fmt::format("{} (default {})", fmt::join(names, "|"), names[default_index])
                                                 : fmt::format("{}", fmt::join(names, "|")));
}

void add_device_option(CLI::App* cmd, DeviceKind& device, const std::string& help, bool with_auto) {
  if (with_auto) add_choice_option(cmd, "--device", device, {DeviceKind::cpu, DeviceKind::cuda, DeviceKind::automatic}, "a device", help);
  else add_choice_option(cmd, "--device", device, {DeviceKind::cpu, DeviceKind::cuda}, "a device", help);
}

Plan with_keep(Plan plan, const std::string& keep) {
  if (keep.empty()) return plan;
  plan.scaling = keep == "global" ? Scaling::strong : Scaling::weak;
  for (auto& st : plan.stages) st.scaling.reset();  // the command line says it for every stage
  return plan;
}

MachineProfile edited(const MachineProfile& machine, const PlanEdits& e) { return with_overrides(machine, parse_overrides(e.sets)); }

void add_optimizer_option(CLI::App* cmd, Optimizer& optimizer, const std::string& help) {
  cmd->add_option_function<std::string>(
         "--optimizer", [&optimizer](const std::string& name) { optimizer = parse_optimizer(name, "command line", "--optimizer"); },
         fmt::format("{} ({})", help, optimizer_names()))
      ->default_str(to_string(optimizer));
}

}  // namespace mrplan
