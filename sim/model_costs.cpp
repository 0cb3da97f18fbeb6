#include "sim/model_costs.hpp"

#include <algorithm>
#include <cmath>

#include "model/allreduce_cost.hpp"
#include "model/compute_cost.hpp"
#include "model/io_cost.hpp"
#include "model/startup_cost.hpp"
#include "model/straggler.hpp"
#include "model/sync_batchnorm.hpp"

namespace mrplan {

namespace {
// The gradient allreduce pays its framework's cost per call (Horovod's where the profile has one).
CommParams gradient_comm(CommParams c, CommFramework f) {
  if (f == CommFramework::horovod && c.horovod_call_overhead_s > 0) c.call_overhead_s = c.horovod_call_overhead_s;
  return c;
}
}  // namespace

namespace {

struct BackwardTimeline {
  double bwd_s = 0, comm_total_s = 0, comm_exposed_s = 0;
  int buckets = 0;
  AllreduceAlgo algo = AllreduceAlgo::ring;
};

// Backward in reverse layer order with gradient buckets (PyTorch DDP, Li et al. 2020): a bucket's
// allreduce starts once backward has filled it (after backward when the plan does not overlap).
// The first `frozen` layers (transfer learning's frozen bottom) take no gradient: no backward, no
// bucket bytes.
BackwardTimeline backward_timeline(const std::vector<LayerTime>& times, const LayerTable& table, const Plan& plan, const ModelRun& run,
                                   const MachineProfile& m, size_t frozen = 0) {
  BackwardTimeline t;
  double bucket_bytes = 0, comm_free_at = 0;
  const CommParams grad_comm = gradient_comm(m.comm, plan.framework);
  auto flush = [&](double ready_at) {
    if (bucket_bytes <= 0) return;
    const auto ar = best_allreduce(bucket_bytes, run.gpus, m.gpus_per_node, grad_comm);
    t.algo = ar.algo;
    const double start = plan.overlap_comm ? std::max(ready_at, comm_free_at) : comm_free_at;
    comm_free_at = start + ar.seconds;
    t.comm_total_s += ar.seconds;
    bucket_bytes = 0;
    ++t.buckets;
  };
  for (size_t i = times.size(); i-- > frozen;) {
    t.bwd_s += times[i].bwd_s;
    bucket_bytes += static_cast<double>(table.layers[i].params) * 4.0;  // fp32 gradients
    if (bucket_bytes >= plan.bucket_bytes) flush(t.bwd_s);
  }
  flush(t.bwd_s);
  t.comm_exposed_s = plan.overlap_comm ? std::max(0.0, comm_free_at - t.bwd_s) : t.comm_total_s;
  return t;
}

// Layers up to and including the op named `last` (model/plan_network checked_freeze_through has
// refused a name the network lacks before any cost is asked).
size_t frozen_ops(const LayerTable& table, const std::string& last) {
  for (size_t i = 0; i < table.layers.size(); ++i)
    if (table.layers[i].name == last) return i + 1;
  return 0;
}

// The model's data: where its dataset sits (model/io_cost place_dataset) beside its memory, and the
// staging before training; the job io_per_iteration prices.
IoJob io_job(const Plan& plan, const ModelRun& run, const LayerTable& table, const MachineProfile& m, int ranks_on_node, ModelCosts& c) {
  IoJob job;
  job.sample_bytes = table.sample_bytes_on_disk + table.label_bytes_on_disk;
  job.device_bytes = static_cast<double>(table.input_shape.empty() ? 0 : [&] {
    int64_t p = 1;
    for (auto v : table.input_shape) p *= v;
    return p;
  }()) * 4.0;
  job.local_batch = run.local_batch;
  job.ranks_on_node = ranks_on_node;
  job.nodes = c.nodes;
  job.filesystem_nodes = plan.filesystem_nodes;
  job.codec = codec_rates(m, plan.codec, plan.decoder);
  job.decoder = plan.decoder;
  job.dataset_bytes = job.sample_bytes * static_cast<double>(plan.train_samples) / (job.codec ? job.codec->ratio : 1.0);
  job.staging = plan.staging;
  job.staging_async = plan.staging_async;
  job.workload = table.workload;
  job.staging_oversampling = plan.staging_oversampling;
  c.memory = estimate_memory(table, run.optimizer, plan.precision == Precision::amp, m.gpu_memory_bytes);
  job.device_room_bytes = m.gpu_memory_bytes - c.memory.total_bytes;
  c.placement = place_dataset(m, job);
  c.staging_s = staging_s(m, job, c.placement);
  job.staging_async = c.placement.async;  // streamed where no tier holds the share: the loader's reads
  job.samples_per_file = table.samples_per_file;
  return job;
}

// An epoch's exposed input pipeline, compute, communication and validation: a prefetcher overlaps
// producing batch i+1 with training on batch i; what it cannot hide is the first batch of each
// epoch plus any per-batch excess over the step time.
void price_epochs(const Plan& plan, const ModelRun& run, const MachineProfile& m, const IoJob& job, ModelCosts& c) {
  const double step_s = c.compute_iter_s + c.comm_exposed_iter_s;
  // validation after every epoch, as exec/trainer runs it: each rank its share of the held-out
  // samples, after the batches that recompute batch norm; a partial last batch counts by its samples
  auto per_rank = [&](int64_t samples) { return static_cast<double>((samples + run.gpus - 1) / run.gpus); };
  const double held_out = per_rank(plan.validation_samples) / run.local_batch;
  const double recompute = std::min(static_cast<double>(plan.precise_bn_batches) * run.local_batch, per_rank(plan.train_samples)) /
                           run.local_batch;
  c.inference_iter_s = plan.validation_samples > 0 ? c.eager_forward_iter_s * m.compute.inference_factor : 0.0;
  c.eval_batches = c.inference_iter_s > 0 ? held_out + recompute : 0.0;
  // a loader without persistent workers starts them at every pass, before its first batch (PyTorch
  // DataLoader's default; the MLPerf HPC DeepCAM reference's loaders)
  const double start_s = plan.persistent_workers ? 0.0 : m.io.worker_start_s;
  auto epoch_cost = [&](int epoch) {
    const auto io = io_per_iteration(m, job, epoch == 0 ? c.placement.first_epoch : c.placement.later_epochs);
    const double sync_s = plan.h2d_overlapped ? 0.0 : io.h2d_s;  // paid inside every step
    const double produce_s = io.read_s + io.decode_s + (plan.h2d_overlapped ? io.h2d_s : 0.0);
    const double iters = static_cast<double>(c.iterations_per_epoch);
    EpochCost e;
    e.compute_s = (c.compute_iter_s + io.device_s) * iters;
    e.comm_s = c.comm_exposed_iter_s * iters;
    e.io_s = start_s + produce_s + std::max(0.0, produce_s - (step_s + io.device_s)) * (iters - 1) + sync_s * iters;
    e.h2d_s = sync_s * iters;
    // each pass's own prefetcher starts empty: its first batch and any excess over a forward wait
    auto pass_io = [&](double batches) {
      return batches > 0 ? start_s + produce_s + std::max(0.0, produce_s - c.inference_iter_s) * (std::ceil(batches) - 1) : 0.0;
    };
    if (c.eval_batches > 0)
      e.eval_s = c.inference_iter_s * c.eval_batches + pass_io(held_out) + pass_io(recompute) + m.compute.eval_pass_s;
    return e;
  };
  c.first_epoch = epoch_cost(0);
  c.first_epoch.io_s += staging_start_s(m, job, c.placement);
  c.later_epoch = epoch_cost(1);
}

// A captured step is one replay, recorded as the forward phase; validation stays eager, its
// forward priced with launches.
void fold_into_replay(const LayerTable& table, const MachineProfile& m, bool amp, double sharing, ModelCosts& c) {
  c.eager_forward_iter_s = 0;
  for (const auto& t : whole_step_layer_times(table, m.compute, amp, sharing)) c.eager_forward_iter_s += t.fwd_s;
  c.forward_iter_s += c.backward_iter_s + c.optimizer_iter_s;
  c.backward_iter_s = c.optimizer_iter_s = 0;
}

// One step's phases and communication on `gpn` GPUs of a node: forward, then backward with its
// gradient buckets (backward_timeline); whole step vs ops alone, and ranks of one node slowing each
// other down.
void price_step(const Plan& plan, const ModelRun& run, const LayerTable& table, const MachineProfile& m, int gpn, ModelCosts& c) {
  const bool amp = plan.precision == Precision::amp;
  const double sharing = node_sharing_factor(m.node_sharing, gpn, m.gpus_per_node);
  // a captured step: its kernels without launches (exec/captured_step)
  const ComputeParams step = plan.steps == StepExecution::captured ? captured_step_params(m.compute) : m.compute;
  const auto times = whole_step_layer_times(table, step, amp, sharing);
  double fwd_s = 0;
  for (const auto& t : times) fwd_s += t.fwd_s;
  const auto bwd = backward_timeline(times, table, plan, run, m);
  c.comm_total_iter_s = run.gpus > 1 ? bwd.comm_total_s : 0.0;
  c.comm_exposed_iter_s = run.gpus > 1 ? bwd.comm_exposed_s : 0.0;
  // pooled batch-norm statistics wait inline in forward and backward: nothing hides them
  c.sync_batchnorm_iter_s = sync_batchnorm_iter_s(table, batchnorm_pool_ranks(plan, run), m.gpus_per_node, m);
  c.comm_exposed_iter_s += c.sync_batchnorm_iter_s;
  if (const auto& pre = run.pretrained; pre && pre->freeze_epochs > 0) {
    const auto frozen = backward_timeline(times, table, plan, run, m, frozen_ops(table, pre->freeze_through));
    c.frozen_epochs = pre->freeze_epochs;
    c.frozen_saved_compute_iter_s = bwd.bwd_s - frozen.bwd_s;
    c.frozen_saved_comm_iter_s = run.gpus > 1 ? bwd.comm_exposed_s - frozen.comm_exposed_s : 0.0;
  }
  c.buckets = bwd.buckets;
  c.allreduce_algorithm = run.gpus > 1 ? to_string(bwd.algo) : "none";
  const double opt_s = optimizer_step_s(step, c.params, table.total_param_tensors(), run.optimizer);
  c.forward_iter_s = fwd_s;
  c.eager_forward_iter_s = fwd_s;
  c.backward_iter_s = bwd.bwd_s + m.node_sharing.comm_steal_fraction * c.comm_total_iter_s;
  c.optimizer_iter_s = opt_s * sharing;
  if (plan.steps == StepExecution::captured) fold_into_replay(table, m, amp, sharing, c);
  c.compute_iter_s = c.forward_iter_s + c.backward_iter_s + c.optimizer_iter_s;
  // the allreduce waits for the slowest rank: a data-parallel run measures that wait as comm
  const double cv = gpn > 1 && m.node_sharing.step_time_cv > 0 ? m.node_sharing.step_time_cv : m.compute.step_time_cv;
  c.comm_exposed_iter_s += straggler_wait_s(c.compute_iter_s, cv, run.gpus);
}

}  // namespace

ModelCosts model_costs(const Plan& plan, const ModelRun& run, const LayerTable& table, const MachineProfile& m) {
  ModelCosts c;
  c.gpus = run.gpus;
  const int gpn = std::min(run.gpus, m.gpus_per_node);
  c.nodes = (run.gpus + m.gpus_per_node - 1) / m.gpus_per_node;
  c.global_batch = run.gpus * run.local_batch;
  c.recipe = run.recipe;
  // drop_last: a partial global batch is not trained (as the reference loaders do)
  c.iterations_per_epoch = std::max<int64_t>(1, plan.train_samples / c.global_batch);
  c.params = table.total_params();
  price_step(plan, run, table, m, gpn, c);
  const IoJob job = io_job(plan, run, table, m, gpn, c);
  price_epochs(plan, run, m, job, c);
  c.working_set_bytes = step_working_set_bytes(m.compute.first_touch, table.activation_bytes(), c.params);
  return c;
}

double add_startup(ModelCosts& c, const MachineProfile& machine, double warmup_s, double heap_held_bytes) {
  c.startup_s = startup_s(machine.compute.first_touch, c.working_set_bytes, heap_held_bytes) + warmup_s;
  c.first_epoch.compute_s += c.startup_s;
  return std::max(heap_held_bytes, c.working_set_bytes);
}

}  // namespace mrplan
