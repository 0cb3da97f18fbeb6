#pragma once
// What ranks training at once cost each other (`calibrate sharing`): a rank's step is slower than
// alone by a share of itself (memory bandwidth and caches of one node) and by a share of the time
// its gradient allreduce runs (on CPUs the comm thread and MPI's progress take the cores compute
// runs on; on GPUs NCCL's kernels take SMs).
#include <string>
#include <vector>

#include "model/machine_profile.hpp"
#include "model/microbench_samples.hpp"

namespace mrplan {

struct NodeSharingFit {
  double slowdown = 1, slowdown_std_error = 0;      // node_sharing.slowdown
  double comm_steal = 0, comm_steal_std_error = 0;  // node_sharing.comm_steal_fraction
  double step_time_cv = 0, step_time_cv_std_error = 0;  // node_sharing.step_time_cv
  std::vector<double> relative_residuals;  // of the shared step
  std::vector<double> modelled_wait_s;     // allreduce + wait for the slowest rank, per timing
};

// Weighted least squares (relative error) of shared - alone = (slowdown - 1) alone + steal allreduce;
// a term that comes out negative is dropped and the other fitted alone. The step time spread: the
// shared wait beyond the allreduce alone is the wait for the slowest rank (model/straggler),
// max(0, wait - allreduce) = cv * shared * E[max of ranks standard normals], fitted through the
// origin in relative error.
NodeSharingFit fit_node_sharing(const std::vector<NodeSharingTiming>& timings);

// Writes the node_sharing section and its fitted entries; compute stays.
void apply_node_sharing_fit(MachineProfile& profile, const NodeSharingFit& fit, const std::string& source);

}  // namespace mrplan
