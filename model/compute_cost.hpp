#pragma once
// Roofline compute time per layer with an efficiency that saturates with work per kernel.
#include <string>
#include <vector>

#include "model/layer_table.hpp"
#include "model/optimizers.hpp"
#include "model/machine_profile.hpp"

namespace mrplan {

struct LayerTime {
  double fwd_s = 0;
  double bwd_s = 0;
};

// conv1d / conv2d / conv3d / linear for math-bound kinds; the op kind (batch_norm, max_pool,
// activation, ...) for memory-bound ones.
std::string layer_family(const Layer& layer);
bool is_math_family(const std::string& family);

// Efficiency of a math kernel of `flops` work run at `peak_flops`: efficiency[family] * w / (w + w_half),
// a Michaelis-Menten-style saturation (small local batches or coarse inputs leave the GPU
// under-occupied), with w_half = half_work * peak_flops / peak_fp32: the GPU fills after the same time
// whichever of its units runs the kernel.
double math_efficiency(const ComputeParams& c, const std::string& family, double flops, double peak_flops);

// The same parameters on a GPU with other peaks: efficiencies are fractions of peak and carry over;
// the saturation work scales with the fp32 peak, so a kernel fills the new GPU after the same time.
void move_to_peaks(ComputeParams& c, double peak_fp32_flops, double peak_fp16_flops);

// Roofline (Williams et al. 2009): max(flops / (peak * eff), bytes / (bw * eff_bw)) + overhead,
// both efficiencies scaled by backward_efficiency[family] for backward kernels.
double kernel_time_s(const ComputeParams& c, const std::string& family, double flops, double bytes, bool amp,
                     bool backward = false);

std::vector<LayerTime> layer_times(const LayerTable& table, const ComputeParams& c, bool amp);

// The kernels layer_times counts for a layer, forward and backward: one forward; backward one, or
// two (input and weight gradients) for a layer with parameters; a view (flatten) none.
struct LayerKernels {
  int forward = 0, backward = 0;
};
LayerKernels layer_kernels(const Layer& layer);

// Bytes an optimizer step moves per parameter: weight and gradient read, weight written, its state
// read and written.
double optimizer_bytes_per_param(Optimizer optimizer);

// Optimizer update: memory-bound sweep reading weights and gradients, writing weights, and
// reading and writing the optimizer's state (model/memory_fit), plus a cost per parameter tensor.
double optimizer_step_s(const ComputeParams& c, int64_t params, int64_t param_tensors, Optimizer optimizer);

// What a captured step runs on (plan `steps: captured`): each kernel's launch replaced by the
// graph's gap between kernels, no per-op wait for the whole step to overlap, and the optimizer one
// fused sweep without a cost per tensor (exec/fused_adam).
ComputeParams captured_step_params(const ComputeParams& c);
// A captured step of `table` on one rank alone: its layers' and fused optimizer's time on captured_step_params.
double captured_step_s(const LayerTable& table, const ComputeParams& c, bool amp, Optimizer optimizer);

// The ops of one whole training step: each layer's time alone scaled by its phase's factor, plus
// the phase's gradient sweep spread over the layers by their parameters, times `sharing`
// (node_sharing_factor). The optimizer step is not in it.
std::vector<LayerTime> whole_step_layer_times(const LayerTable& table, const ComputeParams& c, bool amp, double sharing);

// How much slower a rank computes when `ranks_on_node` of the node's `devices_per_node` train at
// once: 1 alone, the sharing slowdown with the node full, linear in the other ranks between
// (each adds its share of the contention; calibrate sharing measures the full node).
double node_sharing_factor(const NodeSharingParams& s, int ranks_on_node, int devices_per_node);

}  // namespace mrplan
