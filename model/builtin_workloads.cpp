#include "model/builtin_workloads.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/embedded_files.hpp"
#include "model/errors.hpp"
#include "model/layer_table.hpp"
#include "model/workload_yaml.hpp"

namespace mrplan {


std::vector<std::string> builtin_workload_names() { return embedded_names(builtin_workload_files()); }

NetworkSpec builtin_workload(const std::string& name, const WorkloadOptions& options) {
  const auto* file = find_embedded(builtin_workload_files(), name);
  if (!file)
    fail_input("", "workload", fmt::format("unknown built-in workload '{}' (known: {})", name,
                                           fmt::join(builtin_workload_names(), ", ")));
  const auto& base = parsed_once<NetworkSpec>(*file, [](const EmbeddedFile& f) { return workload_from_yaml_text(f.text, f.path); });
  return with_options(base, options, name);
}

std::vector<int64_t> nearest_working_sizes(const std::string& name, const WorkloadOptions& options, const std::vector<int64_t>& resolutions) {
  const int64_t size = builtin_workload(name, options).input_spatial.at(0);
  auto works = [&](int64_t s) {
    try {
      const auto spec = builtin_workload(name, {s, options.width});
      for (int64_t r : resolutions) resolve(spec, coarsened_spatial(spec, r), 1, 4.0, spec.coarse_upsamples_output ? r : 1);
      return true;
    } catch (const InputError&) {
      return false;
    }
  };
  std::vector<int64_t> out;
  for (int64_t s = size - 1; s >= std::max<int64_t>(1, size / 2); --s)
    if (works(s)) {
      out.push_back(s);
      break;
    }
  for (int64_t s = size + 1; s <= 2 * size; ++s)
    if (works(s)) {
      out.push_back(s);
      break;
    }
  return out;
}

}  // namespace mrplan
