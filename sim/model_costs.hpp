#pragma once
// Per-iteration and per-epoch cost of one model in a stage on its GPUs: the timeline of one
// iteration (input pipeline, forward, backward with bucketed allreduce, optimizer) summed over an epoch.
#include <string>

#include "model/io_cost.hpp"
#include "model/layer_table.hpp"
#include "model/machine_profile.hpp"
#include "model/memory_fit.hpp"
#include "model/plan.hpp"

namespace mrplan {

struct EpochCost {
  double io_s = 0;       // exposed input pipeline time
  double comm_s = 0;     // exposed allreduce time
  double compute_s = 0;  // forward + backward + optimizer
  double h2d_s = 0;      // the part of io_s that copies batches to the device inside the step
  double eval_s = 0;     // the validation pass at the epoch's end, its reads included
  double epoch_s() const { return io_s + comm_s + compute_s + eval_s; }
};

struct ModelCosts {
  int gpus = 1;
  int nodes = 1;
  int global_batch = 1;
  std::string recipe;  // the model's (ModelRun::recipe): which measured tuning its epochs take
  int64_t iterations_per_epoch = 0;
  double compute_iter_s = 0;  // forward + backward + optimizer, the three below
  double forward_iter_s = 0;    // a captured step's whole replay (plan steps: captured), as the executor records it
  double eager_forward_iter_s = 0;  // the forward launched op by op, as validation runs it
  double backward_iter_s = 0;   // with what the allreduce steals from it
  double optimizer_iter_s = 0;  // with the gradient bookkeeping
  double comm_total_iter_s = 0;    // all buckets, overlapped or not
  double comm_exposed_iter_s = 0;  // what backward did not hide, pooled batch-norm statistics included
  double sync_batchnorm_iter_s = 0;  // pooling batch-norm statistics over the plan's batchnorm_group
  int buckets = 0;
  std::string allreduce_algorithm;
  double inference_iter_s = 0;  // a forward pass without autograd at the local batch (0: not modelled)
  double eval_batches = 0;      // such passes per validation: the rank's held-out share and, with the
                                // plan's precise_bn_batches, the batches that recompute batch norm
  double working_set_bytes = 0;  // a step's peak live bytes (model/startup_cost)
  double staging_s = 0;          // copying this model's dataset (its resolution) to the staged tier, before training
  double startup_s = 0;          // in first_epoch's compute: touching what the heap did not hold yet, and warming up
  Placement placement;     // where this model's dataset sits (model/io_cost)
  EpochCost first_epoch;   // reads from placement.first_epoch
  EpochCost later_epoch;   // reads from placement.later_epochs
  // transfer learning's first frozen_epochs epochs: per iteration, what the frozen layers' backward
  // and their gradients' allreduce do not cost (model_time takes it off those epochs)
  int frozen_epochs = 0;
  double frozen_saved_compute_iter_s = 0, frozen_saved_comm_iter_s = 0;
  int64_t params = 0;
  MemoryEstimate memory;
};

// Timeline of one iteration for `table` (resolved at the model's local batch) on the model's GPUs.
ModelCosts model_costs(const Plan& plan, const ModelRun& run, const LayerTable& table, const MachineProfile& machine);

// Adds the model's start-up to its first epoch (first touch, and its workload's warm-up,
// compute.warmup_s), for a process whose heap already holds `heap_held_bytes` (the largest working
// set of the earlier stages it ran); returns what it holds after.
double add_startup(ModelCosts& c, const MachineProfile& machine, double warmup_s, double heap_held_bytes);

}  // namespace mrplan
