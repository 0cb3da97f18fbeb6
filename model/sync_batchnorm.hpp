#pragma once
// Batch norm with statistics pooled over a group of ranks (SyncBatchNorm process groups; MLPerf HPC
// DeepCAM's batchnorm_group_size): what it adds to a step beside the per-rank layer.
#include "model/layer_table.hpp"
#include "model/machine_profile.hpp"

namespace mrplan {

// Per step, for each batch-norm layer of `table`: a forward allreduce of its 2C statistics (sum
// and sum of squares) and a backward allreduce of its 2C gradient sums over `group` ranks, each on
// the critical path, plus the two kernels per direction that gather and reduce them (PyTorch
// SyncBatchNorm: batch_norm_stats / gather_stats_with_counts, backward_reduce / backward_elemt).
// The collectives are issued inline in the step, not by the gradient hook, so the profile's
// per-bucket call overhead does not apply. 0 for group <= 1.
double sync_batchnorm_iter_s(const LayerTable& table, int group, int gpus_per_node, const MachineProfile& m);

}  // namespace mrplan
