#include "model/plan_network.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "model/builtin_workloads.hpp"
#include "model/errors.hpp"
#include "model/fusion.hpp"
#include "model/text_file.hpp"
#include "model/workload_yaml.hpp"

namespace mrplan {

bool workload_is_file(const Plan& plan) {
  return names_a_file(plan.workload);
}

NetworkSpec plan_network(const Plan& plan) {
  const auto& w = plan.workload;
  if (workload_is_file(plan)) {
    std::filesystem::path p(w);
    if (p.is_relative() && !plan.source_file.empty() && !std::filesystem::exists(p))
      p = std::filesystem::path(plan.source_file).parent_path() / p;
    return with_options(load_workload_file(p.string()), plan.workload_options, plan.source_file);
  }
  try {
    return builtin_workload(w, plan.workload_options);
  } catch (const InputError& e) {
    fail_input(plan.source_file, "workload", e.what());
  }
}

namespace {

// For a built-in workload, the nearest sizes at which every resolution of the plan works.
std::string size_hint(const Plan& plan) {
  const auto names = builtin_workload_names();
  if (std::find(names.begin(), names.end(), plan.workload) == names.end()) return "";
  std::vector<int64_t> res;
  for (const auto& s : plan.stages)
    for (const auto& m : s.models) res.push_back(m.resolution);
  std::sort(res.begin(), res.end());
  res.erase(std::unique(res.begin(), res.end()), res.end());
  const auto sizes = nearest_working_sizes(plan.workload, plan.workload_options, res);
  if (sizes.empty()) return "";
  return fmt::format("; workload_options.size {} works at resolutions {}", fmt::join(sizes, " or "), fmt::join(res, ", "));
}

}  // namespace

LayerTable model_run_table(const Plan& plan, const NetworkSpec& spec, const ModelRun& run) {
  const double elem = plan.precision == Precision::amp ? 2.0 : 4.0;
  const int64_t up = spec.coarse_upsamples_output ? run.resolution : 1;
  try {
    return resolve(spec, coarsened_spatial(spec, run.resolution), run.local_batch, elem, up);
  } catch (const InputError& e) {
    fail_input(plan.source_file, "stages.resolution", fmt::format("at resolution {}: {}{}", run.resolution, e.what(), size_hint(plan)));
  }
}

size_t checked_fusion_split(const Plan& plan, const NetworkSpec& spec, size_t i) {
  const auto& s = plan.stages[i];
  const auto key = fmt::format("stages[{}].handoff.fuse.split_after", i);
  const size_t split = fusion_split(spec, s.handoff.split_after, plan.source_file, key);
  const auto& bottom = *s.find(s.handoff.bottom_from);
  const auto& top = *s.find(s.handoff.top_from);
  check_fusible(model_run_table(plan, spec, bottom), bottom.resolution, model_run_table(plan, spec, top), top.resolution, split,
                plan.source_file, key);
  return split;
}

size_t checked_freeze_through(const Plan& plan, const NetworkSpec& spec, size_t i) {
  const auto& name = plan.stages[i].models.front().pretrained->freeze_through;
  const auto key = fmt::format("stages[{}].pretrained.freeze_through", i);
  std::vector<std::string> names;
  for (size_t k = 0; k < spec.ops.size(); ++k) {
    if (spec.ops[k].name != name) {
      names.push_back(spec.ops[k].name);
      continue;
    }
    if (k + 1 == spec.ops.size()) fail_input(plan.source_file, key, fmt::format("'{}' is the last op: nothing would train", name));
    return k;
  }
  fail_input(plan.source_file, key, fmt::format("'{}' is no op of workload '{}' (its ops: {})", name, spec.name, fmt::join(names, ", ")));
}

}  // namespace mrplan
