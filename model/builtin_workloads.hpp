#pragma once
// The networks of the papers: data/workloads/*.yaml, op lists (never typed-in totals) built into the
// binary and read by the reader a user's workload file goes through.
#include <string>
#include <vector>

#include "model/network_spec.hpp"
#include "model/workload_options.hpp"

namespace mrplan {

std::vector<std::string> builtin_workload_names();
// Throws InputError naming the known workloads when `name` is not one of them.
NetworkSpec builtin_workload(const std::string& name, const WorkloadOptions& options = {});

// The sizes nearest to the workload's size (at most one below and one above, within a factor of
// two) at which its network resolves at every one of `resolutions`: what to suggest when a size
// does not divide by the strides on the way to an op.
std::vector<int64_t> nearest_working_sizes(const std::string& name, const WorkloadOptions& options, const std::vector<int64_t>& resolutions);

}  // namespace mrplan
