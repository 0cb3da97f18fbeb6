#include "model/workload_options.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "model/errors.hpp"

namespace mrplan {

namespace {

bool width_scales(const Op& op) {
  return !op.fixed_filters && (op.kind == OpKind::conv || op.kind == OpKind::transposed_conv);
}

}  // namespace

NetworkSpec with_options(NetworkSpec spec, const WorkloadOptions& options, const std::string& where) {
  // a thousandfold the published filters is past any GPU's memory; beyond it the counts wrap
  if (!(options.width > 0 && options.width <= 1024)) fail_input(where, "width", fmt::format("{} is out of range (above 0, at most 1024)", options.width));
  if (options.size < 0) fail_input(where, "size", "must be >= 1 (or 0: the workload's own)");
  if (options.size > 0 && !spec.input_spatial.empty()) {
    const int64_t own = spec.input_spatial[0];
    for (auto& extent : spec.input_spatial) {
      const __int128 scaled = static_cast<__int128>(options.size) * extent / own;  // exact: no overflow on the way
      if (scaled < 1 || scaled > std::numeric_limits<int32_t>::max())
        fail_input(where, "size", fmt::format("{} gives an input extent outside 1..{} on an axis of {} (first axis {})", options.size,
                                              std::numeric_limits<int32_t>::max(), extent, own));
      extent = static_cast<int64_t>(scaled);
    }
  }
  const int64_t size = spec.input_spatial.empty() ? 0 : spec.input_spatial[0];
  std::erase_if(spec.ops, [&](const Op& op) { return size < op.min_size; });
  for (auto& op : spec.ops)
    if (width_scales(op) && options.width != 1.0)
      op.filters = std::max<int64_t>(1, std::lround(static_cast<double>(op.filters) * options.width));
  return spec;
}

}  // namespace mrplan
