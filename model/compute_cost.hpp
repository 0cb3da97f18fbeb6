#pragma once
// Roofline compute time per layer with an efficiency that saturates with work per kernel.
#include <string>
#include <vector>

#include "model/layer_table.hpp"
#include "model/machine_profile.hpp"

namespace mrplan {

struct LayerTime {
  double fwd_s = 0;
  double bwd_s = 0;
};

// conv1d / conv2d / conv3d / linear for math-bound kinds; "elementwise" for the rest.
std::string layer_family(const Layer& layer);

// Efficiency of a math kernel of `flops` work: peak * w / (w + w_half) (a Michaelis-Menten-style
// saturation; small local batches or coarse inputs leave the GPU under-occupied).
double math_efficiency(const ComputeParams& c, const std::string& family, double flops);

// Roofline (Williams et al. 2009): max(flops / (peak * eff), bytes / (bw * eff_bw)) + overhead.
double kernel_time_s(const ComputeParams& c, const std::string& family, double flops, double bytes, bool amp);

std::vector<LayerTime> layer_times(const LayerTable& table, const ComputeParams& c, bool amp);

// Optimizer update: memory-bound sweep over parameters and their state (bytes per parameter).
double optimizer_step_s(const ComputeParams& c, int64_t params, double state_bytes_per_param);

}  // namespace mrplan
