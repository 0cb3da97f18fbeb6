#include "model/fusion.hpp"

#include <fmt/format.h>

#include "model/errors.hpp"

namespace mrplan {

size_t fusion_split(const NetworkSpec& spec, const std::string& split_after, const std::string& file, const std::string& key) {
  const std::string& name = split_after.empty() ? spec.fusion_split_after : split_after;
  if (name.empty())
    fail_input(file, key, fmt::format("workload '{}' names no fusion point (fusion_split_after); give split_after: OP", spec.name));
  for (size_t i = 0; i < spec.ops.size(); ++i)
    if (spec.ops[i].name == name) {
      if (i + 1 == spec.ops.size()) fail_input(file, key, fmt::format("fusion point '{}' is the last op: the top group would be empty", name));
      return i;
    }
  fail_input(file, key,
             fmt::format("fusion point '{}' does not exist in workload '{}' (its own: '{}')", name, spec.name, spec.fusion_split_after));
}

void check_fusible(const LayerTable& bottom, int bottom_res, const LayerTable& fused, int fused_res, size_t last_bottom,
                   const std::string& file, const std::string& key) {
  for (size_t i = 0; i <= last_bottom && i < fused.layers.size(); ++i) {
    const auto& a = bottom.layers.at(i);
    const auto& b = fused.layers.at(i);
    if (a.params != b.params)
      fail_input(file, key,
                 fmt::format("op '{}' has {} parameters at resolution factor {} but {} in the fused model (factor {}): it cannot "
                             "come from the bottom model; move the fusion point before it",
                             b.name, a.params, bottom_res, b.params, fused_res));
  }
}

FusionBytes fusion_bytes(const LayerTable& fused, size_t last_bottom) {
  FusionBytes f;
  for (size_t i = 0; i < fused.layers.size(); ++i) {
    const bool bottom = in_bottom_group(i, last_bottom);
    (bottom ? f.bottom_bytes : f.top_bytes) += 4.0 * static_cast<double>(fused.layers[i].params);
    (bottom ? f.bottom_tensors : f.top_tensors) += fused.layers[i].param_tensors;
  }
  return f;
}

}  // namespace mrplan
