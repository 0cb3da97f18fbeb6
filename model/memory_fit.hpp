#pragma once
// Per-GPU memory of data-parallel training: weights, gradients, optimizer state, activations.
#include <string>

#include "model/layer_table.hpp"
#include "model/optimizers.hpp"

namespace mrplan {

struct MemoryEstimate {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;  // forward outputs kept for backward, whole local batch
  double total_bytes = 0;
  double capacity_bytes = 0;
  bool fits = true;
};

// Optimizer state per parameter: sgd 0, momentum 4, adam/lamb 8 bytes (fp32 moments).
double optimizer_state_bytes_per_param(Optimizer optimizer);

// `table` must be resolved at the local batch. amp keeps an fp32 master copy plus fp16 weights.
MemoryEstimate estimate_memory(const LayerTable& table, Optimizer optimizer, bool amp, double capacity_bytes);

}  // namespace mrplan
