#pragma once
// A network at another input size or width than its file's: how a plan's workload_options shape a
// built-in or a user's workload (the CPU-sized variants of the papers' networks).
#include <cstdint>
#include <string>

#include "model/network_spec.hpp"

namespace mrplan {

struct WorkloadOptions {
  int64_t size = 0;    // dense input extent along the first spatial axis; 0 = the workload's own
  double width = 1.0;  // multiplier on every convolution's filter count (CPU-sized variants)
};

// `spec` with its first spatial extent set to `size` (the others in proportion), the filters of its
// convolutions scaled by `width` (except ops marked fixed_filters), and the ops whose min_size the
// size is below left out. Throws InputError naming `where` for a width <= 0.
NetworkSpec with_options(NetworkSpec spec, const WorkloadOptions& options, const std::string& where);

}  // namespace mrplan
