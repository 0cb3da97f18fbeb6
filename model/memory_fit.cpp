#include "model/memory_fit.hpp"

#include <fmt/format.h>

#include "model/errors.hpp"

namespace mrplan {

double optimizer_state_bytes_per_param(Optimizer optimizer) {
  for (const auto& r : optimizer_table())
    if (r.optimizer == optimizer) return r.state_bytes_per_param;
  return 0;
}

MemoryEstimate estimate_memory(const LayerTable& t, Optimizer optimizer, bool amp, double capacity) {
  MemoryEstimate m;
  const double p = static_cast<double>(t.total_params());
  m.weights_bytes = p * (amp ? 6.0 : 4.0);
  m.gradients_bytes = p * 4.0;
  m.optimizer_bytes = p * optimizer_state_bytes_per_param(optimizer);
  m.activations_bytes = t.activation_bytes();
  m.total_bytes = m.weights_bytes + m.gradients_bytes + m.optimizer_bytes + m.activations_bytes;
  m.capacity_bytes = capacity;
  m.fits = m.total_bytes <= capacity;
  return m;
}

}  // namespace mrplan
