#include "model/startup_cost.hpp"

#include <algorithm>

namespace mrplan {

double step_working_set_bytes(const ComputeParams::FirstTouch& t, double activation_bytes, int64_t params) {
  return t.activation_factor * activation_bytes + t.param_factor * 4.0 * static_cast<double>(params);  // fp32 parameters
}

double startup_s(const ComputeParams::FirstTouch& t, double working_set_bytes, double heap_held_bytes) {
  if (!(t.bandwidth_Bps > 0)) return 0.0;
  return std::max(0.0, working_set_bytes - heap_held_bytes) / t.bandwidth_Bps;
}

}  // namespace mrplan
