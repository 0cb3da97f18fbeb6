#pragma once
// Batch norm with statistics pooled over a group of ranks (SyncBatchNorm process groups; MLPerf HPC
// DeepCAM's batchnorm_group_size): what it adds to a step beside the per-rank layer.
#include "model/layer_table.hpp"
#include "model/machine_profile.hpp"
#include "model/plan.hpp"

namespace mrplan {

// Per step, for each batch-norm layer of `table`: a forward allreduce of its 2C statistics (sum
// and sum of squares) and a backward allreduce of its 2C gradient sums over `group` ranks, each on
// the critical path, plus the two kernels per direction that gather and reduce them (PyTorch
// SyncBatchNorm: batch_norm_stats / gather_stats_with_counts, backward_reduce / backward_elemt).
// The collectives are issued inline in the step, not by the gradient hook: each costs the profile's
// comm.sync_batchnorm_call_us (fitted to runs that pool; JUWELS Booster's v2.0 DeepCAM ~0.1 ms, its
// 2048-GPU steps otherwise 28% short), not its per-bucket call overhead. 0 for group <= 1.
double sync_batchnorm_iter_s(const LayerTable& table, int group, int gpus_per_node, const MachineProfile& m);

// The ranks one pool of a model run asks for: the plan's comm.batchnorm_group, or as many as hold its
// comm.batchnorm_samples where that is more (MLPerf HPC DeepCAM's recipes pool pairs of ranks at
// local batch 1 and none at 2 or more).
int batchnorm_pool_asked(const Plan& plan, const ModelRun& run);
// The ranks it spans: what it asks for, at most the run's GPUs.
int batchnorm_pool_ranks(const Plan& plan, const ModelRun& run);

}  // namespace mrplan
