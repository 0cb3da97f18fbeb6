#include "model/compute_cost.hpp"

#include <algorithm>

#include "model/memory_fit.hpp"

namespace mrplan {

namespace {
double lookup(const std::map<std::string, double>& m, const std::string& k, double fallback) {
  const auto it = m.find(k);
  return it == m.end() ? fallback : it->second;
}
}  // namespace

std::string layer_family(const Layer& l) {
  switch (l.kind) {
    case OpKind::conv:
    case OpKind::depthwise_conv:
    case OpKind::transposed_conv:
      return "conv" + std::to_string(l.spatial_rank) + "d";
    case OpKind::linear:
      return "linear";
    default:
      return to_string(l.kind);
  }
}

bool is_math_family(const std::string& f) { return f == "linear" || f.rfind("conv", 0) == 0; }


double math_efficiency(const ComputeParams& c, const std::string& family, double flops, double peak_flops) {
  auto it = c.efficiency.find(family);
  double peak = 0.5;
  if (it != c.efficiency.end()) {
    peak = it->second;
  } else if (!c.efficiency.empty()) {  // a family no data covered: the mean of the known ones
    double s = 0;
    for (const auto& [k, v] : c.efficiency) s += v;
    peak = s / static_cast<double>(c.efficiency.size());
  }
  const double half_work = lookup(c.half_work_flops_by_family, family, c.half_work_flops) * peak_flops / c.peak_fp32_flops;
  return peak * flops / (flops + half_work);
}

void move_to_peaks(ComputeParams& c, double peak_fp32_flops, double peak_fp16_flops) {
  const double r = peak_fp32_flops / c.peak_fp32_flops;
  c.half_work_flops *= r;
  for (auto& [family, w] : c.half_work_flops_by_family) w *= r;
  c.peak_fp32_flops = peak_fp32_flops;
  c.peak_fp16_flops = peak_fp16_flops;
}

double kernel_time_s(const ComputeParams& c, const std::string& family, double flops, double bytes, bool amp,
                     bool backward) {
  const double b = backward ? lookup(c.backward_efficiency, family, 1.0) : 1.0;
  const double mem_s = bytes / (c.mem_bandwidth_Bps * lookup(c.mem_efficiency_by_kind, family, c.mem_efficiency) * b);
  double math_s = 0;
  if (is_math_family(family) && flops > 0) {
    const double peak = amp ? c.peak_fp16_flops : c.peak_fp32_flops;
    math_s = flops / (peak * math_efficiency(c, family, flops, peak) * b);
  }
  return std::max(math_s, mem_s) + c.kernel_overhead_s;
}

LayerKernels layer_kernels(const Layer& l) {
  if (l.kind == OpKind::flatten) return {};
  return {1, l.params > 0 ? 2 : 1};
}

std::vector<LayerTime> layer_times(const LayerTable& t, const ComputeParams& c, bool amp) {
  std::vector<LayerTime> out;
  out.reserve(t.layers.size());
  for (const auto& l : t.layers) {
    const auto k = layer_kernels(l);
    if (k.forward == 0) {  // a view: no kernel
      out.push_back({});
      continue;
    }
    const auto fam = layer_family(l);
    const double bytes = l.bytes_read + l.bytes_written;
    LayerTime lt;
    lt.fwd_s = kernel_time_s(c, fam, l.fwd_flops, bytes, amp);
    // backward: its kernels (input and weight gradients for a layer with parameters) each reading
    // the saved activation and the output gradient
    lt.bwd_s = 0;
    for (int i = 0; i < k.backward; ++i) lt.bwd_s += kernel_time_s(c, fam, l.bwd_flops / k.backward, bytes, amp, true);
    out.push_back(lt);
  }
  return out;
}

double optimizer_bytes_per_param(Optimizer optimizer) { return 8.0 + 2.0 * optimizer_state_bytes_per_param(optimizer); }

double optimizer_step_s(const ComputeParams& c, int64_t params, int64_t param_tensors, Optimizer optimizer) {
  return static_cast<double>(params) * optimizer_bytes_per_param(optimizer) / (c.mem_bandwidth_Bps * c.mem_efficiency) +
         static_cast<double>(param_tensors) * c.optimizer_tensor_s + c.kernel_overhead_s;
}

double node_sharing_factor(const NodeSharingParams& s, int ranks_on_node, int devices_per_node) {
  if (ranks_on_node <= 1 || devices_per_node <= 1) return 1.0;
  const double share = std::min(1.0, static_cast<double>(ranks_on_node - 1) / static_cast<double>(devices_per_node - 1));
  return 1.0 + (s.slowdown - 1.0) * share;
}

ComputeParams captured_step_params(const ComputeParams& c) {
  ComputeParams out = c;
  out.kernel_overhead_s = c.captured_kernel_gap_s;
  out.step_forward.per_op_s = out.step_backward.per_op_s = 0;
  out.optimizer_tensor_s = 0;
  return out;
}

double captured_step_s(const LayerTable& table, const ComputeParams& c, bool amp, Optimizer optimizer) {
  const auto cap = captured_step_params(c);
  double s = optimizer_step_s(cap, table.total_params(), table.total_param_tensors(), optimizer);
  for (const auto& t : whole_step_layer_times(table, cap, amp, 1.0)) s += t.fwd_s + t.bwd_s;
  return s;
}

std::vector<LayerTime> whole_step_layer_times(const LayerTable& table, const ComputeParams& c, bool amp, double sharing) {
  auto times = layer_times(table, c, amp);
  const double s_per_byte = 1.0 / (c.mem_bandwidth_Bps * c.mem_efficiency);
  for (size_t i = 0; i < times.size(); ++i) {
    const double params = static_cast<double>(table.layers[i].params);
    // an op's time in a step is never below nothing, however much of it a step overlaps
    times[i].fwd_s = std::max(0.0, times[i].fwd_s * c.step_forward.factor + params * c.step_forward.bytes_per_param * s_per_byte +
                                       c.step_forward.per_op_s) * sharing;
    times[i].bwd_s = std::max(0.0, times[i].bwd_s * c.step_backward.factor + params * c.step_backward.bytes_per_param * s_per_byte +
                                       c.step_backward.per_op_s) * sharing;
  }
  return times;
}

}  // namespace mrplan
