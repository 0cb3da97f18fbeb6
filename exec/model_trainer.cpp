#include "exec/model_trainer.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <optional>

#include "exec/captured_step.hpp"
#include "exec/fault_injection.hpp"
#include "exec/freezing.hpp"
#include "exec/fused_adam.hpp"
#include "exec/grad_sync.hpp"
#include "exec/lamb.hpp"
#include "exec/loader.hpp"
#include "exec/objective.hpp"
#include "exec/precise_batch_norm.hpp"
#include "exec/run_eta.hpp"
#include "exec/step_clock.hpp"
#include "model/errors.hpp"
#include "model/mllog_keys.hpp"
#include "model/method_rules.hpp"
#include "model/plan_network.hpp"
#include "model/record_header.hpp"

namespace mrplan {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPrefetchDepth = 2;  // batches the prefetcher keeps ready
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct NonFiniteLoss : InputError {  // the user's to act on: a learning rate, or the data (exec/loader checks its values)
  using InputError::InputError;
};

double learning_rate(const ModelRun& s, int epoch /* 0-based */, int iter, int iters) {
  double lr = s.learning_rate;
  if (epoch < s.warmup_epochs) lr *= (epoch + (iter + 1.0) / iters) / s.warmup_epochs;
  for (const auto& [e, f] : s.lr_decay)
    if (epoch >= e) lr *= f;
  return lr;
}

void set_lr(torch::optim::Optimizer& opt, double lr) {
  for (auto& g : opt.param_groups()) g.options().set_lr(lr);
}

// What one pass over the rank's batches measured.
struct EpochTimes {
  double io_s = 0, comm_s = 0, compute_s = 0, loss_sum = 0;
  StepPhases phases;
  int iterations = 0;
  bool window_switch = false;  // the switch rule fired at a window of iterations
  bool budget_spent = false;   // a fixed iteration budget ran out
};

// The validation metric on this group's share of the held-out samples, batch norm recomputed first
// where the plan asks (PreciseBN, Wu & Johnson 2021).
double validate(RunContext& ctx, const ModelJob& job, SpecNetImpl& model, const SampleStore& store, const ModelRun& run,
                const std::vector<int64_t>& bn_ids, BatchPool& batches) {
  const auto& objective = *ctx.objective;
  if (!bn_ids.empty()) {
    BatchNormRecompute recompute(model);
    Prefetcher tp(store, bn_ids, run.local_batch, kPrefetchDepth, /*keep_partial=*/true, &batches, ctx.decoder != nullptr);
    while (auto b = tp.next()) {
      batch_to_device(ctx, store, *b);
      model.forward(b->x);
    }
  }
  model.eval();
  std::vector<double> val(validation_sum_count(objective), 0.0);
  {
    torch::NoGradGuard ng;
    auto vids = validation_ids(ctx.plan.train_samples, ctx.plan.validation_samples, job.group.rank(), job.group.size(), ctx.share.has_value());
    Prefetcher vp(store, std::move(vids), run.local_batch, kPrefetchDepth, /*keep_partial=*/true, nullptr, ctx.decoder != nullptr);
    while (auto b = vp.next()) {
      batch_to_device(ctx, store, *b);
      add_validation_sums(objective, model.forward(b->x), b->y, val.data());
      ctx.watchdog->progress("validation");
    }
  }
  job.group.allreduce_sum(val.data(), val.size());
  return validation_metric(objective, ctx.plan.target_metric, val.data());
}

// What a model's epochs share over its stage: its data, the step's tools, and how its lines read.
struct ModelStage {
  RunContext& ctx;
  const ModelJob& job;
  const Stage& st;
  const ModelRun& mr;
  const SampleStore& store;
  const TrainingObjective& objective;
  GradSync* sync;  // over the parameters that train now (transfer learning's frozen layers left out)
  StepClock& clock;
  BatchPool& batches;
  int iters = 0;      // full batches per epoch
  MemberNodes nodes;  // where the run stages per node: its members' nodes
  std::string tag;    // "stage" or "stage/model" in messages
  // run --capture: the stage's step as a CUDA graph, captured after its first eager steps
  std::unique_ptr<CapturedStep> graph;
  int eager_steps = 0;
  // MLPerf's epoch number (this model's ranks' count over the run), and mrplan's keys that make the
  // switch and the fusions visible in the log
  std::string meta(int epoch) const {
    return fmt::format("{{\"epoch_num\": {}, \"stage\": \"{}\", \"model\": \"{}\", \"resolution\": {}}}", epoch, st.name, mr.name,
                       mr.resolution);
  }
};

// One training step on batch `b` of epoch `e` (0-based), its phases timed into `t`; its loss.
double train_step(ModelStage& ms, SpecNetImpl& model, torch::optim::Optimizer& opt, Batch& b, int e, EpochTimes& t) {
  // points: 0 copy to device 1 forward 2 backward 3 wait for allreduces 4 optimizer 5
  ms.clock.mark(0);
  batch_to_device(ms.ctx, ms.store, b);
  ms.clock.mark(1);
  set_lr(opt, learning_rate(ms.mr, e, t.iterations, ms.iters));
  opt.zero_grad();
  ms.sync->begin_step();
  auto loss = training_loss(ms.objective, model.forward(b.x), b.y);
  ms.clock.mark(2);
  loss.backward();
  ms.clock.mark(3);
  ms.sync->finish_step();
  ms.clock.mark(4);
  opt.step();
  ms.clock.mark(5);
  const double l = loss.item<double>();  // waits for the whole step, so the clock's read is free
  const auto iv = ms.clock.intervals_s();
  // host-to-device copies count as data time, as the simulator's timeline has them
  t.phases += StepPhases{iv[0], iv[1], iv[2], iv[4]};
  t.io_s += iv[0];
  t.comm_s += iv[3];
  t.compute_s += iv[1] + iv[2] + iv[4];
  return l;
}

// A captured step needs the allocator's, cuBLAS's and cuDNN's first-use work done: the stage's
// first steps run eagerly (PyTorch's CUDA semantics notes warm up 3 before capturing).
constexpr int kEagerStepsBeforeCapture = 3;

// run --capture: one training step as a replay of the stage's CUDA graph (captured on this step's
// batch, which the capture itself does not train on). The replay is one interval on the step's
// clock: it counts as the forward phase, backward and optimizer none (they are in the one graph).
double captured_train_step(ModelStage& ms, SpecNetImpl& model, torch::optim::Optimizer& opt, Batch& b, int e, EpochTimes& t) {
  ms.clock.mark(0);
  batch_to_device(ms.ctx, ms.store, b);
  ms.clock.mark(1);
  set_lr(opt, learning_rate(ms.mr, e, t.iterations, ms.iters));
  auto& fused = dynamic_cast<FusedAdam&>(opt);
  fused.copy_learning_rate_to_device();
  if (!ms.graph)
    ms.graph = std::make_unique<CapturedStep>(
        training_step([&ms, &model](const torch::Tensor& x, const torch::Tensor& y) { return training_loss(ms.objective, model.forward(x), y); }, opt),
        b.x, b.y, /*warmups=*/0);
  const auto loss = ms.graph->run(b.x, b.y);
  for (int point = 2; point <= 5; ++point) ms.clock.mark(point);
  const double l = loss.item<double>();
  const auto iv = ms.clock.intervals_s();
  t.phases += StepPhases{iv[0], iv[1], 0, 0};
  t.io_s += iv[0];
  t.compute_s += iv[1];
  return l;
}

// The epoch's batches until they run out, the iteration budget is spent or (MRT III-C for DeepCAM)
// the switch rule fires at a window of iterations: it watches the windows' mean loss over the
// group's ranks, so that every rank switches at the same iteration (a partial window is dropped).
EpochTimes train_epoch(ModelStage& ms, SpecNetImpl& model, torch::optim::Optimizer& opt, ModelProgress& prog, const Checkpointer& checkpoints) {
  const auto& mr = ms.mr;
  const int e = prog.epoch;  // 0-based epoch about to run
  const int window = mr.stop.kind == StopRule::Kind::switch_rule ? mr.stop.window_iterations : 0;
  model.train();
  auto ids = restricted_shuffle(ms.ctx.plan.train_samples, ms.job.group.rank(), ms.job.group.size(), mr.local_batch,
                                ms.ctx.options.seed * 31 + ms.job.stage, e, ms.nodes);
  Prefetcher pf(ms.store, std::move(ids), mr.local_batch, kPrefetchDepth, false, &ms.batches, ms.ctx.decoder != nullptr);
  EpochTimes t;
  double window_sum[2] = {0, 0};
  for (;;) {
    const auto t_data = Clock::now();
    auto b = pf.next();
    t.io_s += since(t_data);  // waiting for the prefetcher
    if (!b) break;
    act_on(fault_at("step", ms.ctx.rank));
    const bool captured = ms.ctx.plan.steps == StepExecution::captured && ms.eager_steps >= kEagerStepsBeforeCapture;
    const double l = captured ? captured_train_step(ms, model, opt, *b, e, t) : train_step(ms, model, opt, *b, e, t);
    if (!captured) ++ms.eager_steps;
    if (!std::isfinite(l))
      throw NonFiniteLoss(fmt::format("stage '{}' epoch {} iteration {}: the loss is {}; the last good checkpoint: {}", ms.tag, e + 1,
                                      t.iterations + 1, l, checkpoints.last_good()));
    t.loss_sum += l;
    ++t.iterations;
    ms.ctx.watchdog->progress(fmt::format("stage '{}' epoch {} iteration {}", ms.tag, e + 1, t.iterations));
    if (iteration_budget_spent(mr.stop, prog.record.iterations + t.iterations)) {
      t.budget_spent = true;
      break;
    }
    if (window == 0) continue;
    window_sum[0] += l;
    if (++window_sum[1] < window) continue;
    ms.job.group.allreduce_sum(window_sum, 2);
    prog.window_losses.push_back(window_sum[0] / window_sum[1]);
    window_sum[0] = window_sum[1] = 0;
    if (switch_fires_at_last(mr.stop, prog.window_losses)) {
      t.window_switch = true;
      break;
    }
  }
  return t;
}

// The finished epoch into the model's progress and record.
const EpochRecord& add_epoch(ModelProgress& prog, const EpochTimes& t, int iters, double train_loss, double val_metric, double epoch_s,
                             double eval_s) {
  ++prog.epoch;
  ++prog.total_epochs;
  prog.losses.push_back(train_loss);
  EpochRecord er;
  er.epoch = prog.epoch;
  er.fraction = static_cast<double>(t.iterations) / iters;
  er.io_s = t.io_s, er.comm_s = t.comm_s, er.compute_s = t.compute_s, er.epoch_s = epoch_s, er.eval_s = eval_s;
  er.phases = t.phases;
  er.loss = train_loss;
  er.metric = val_metric;
  ModelRecord& rec = prog.record;
  rec.epochs += er.fraction;
  rec.iterations += t.iterations;
  rec.io_s += t.io_s, rec.comm_s += t.comm_s, rec.compute_s += t.compute_s, rec.time_s += er.epoch_s;
  rec.eval_s += eval_s;
  if (!rec.phases) rec.phases.emplace();
  *rec.phases += t.phases;
  rec.per_epoch.push_back(er);
  return rec.per_epoch.back();
}

// MLPerf HPC's quality key is eval_accuracy, rising: a falling metric is logged negated there (as
// the CosmoFlow rules define it) and as itself under eval_error.
void log_epoch_end(const ModelStage& ms, int epoch_num, double val_metric) {
  const bool up = ms.ctx.plan.maximize;
  ms.job.log.point("eval_accuracy", json_number(up ? val_metric : -val_metric), ms.meta(epoch_num));
  if (!up) ms.job.log.point("eval_error", json_number(val_metric), ms.meta(epoch_num));
  ms.job.log.event("epoch_stop", "INTERVAL_END", "null", ms.meta(epoch_num));
}

void print_epoch(const ModelStage& ms, const ModelProgress& prog, const EpochRecord& er, const EpochTimes& t) {
  const ModelRecord& rec = prog.record;
  fmt::print("[{}] epoch {:3d}  loss {:.5f}  val {:.5f}  {:.2f} s (data {:.2f}, comm {:.2f}, compute {:.2f})  {}\n", ms.tag, prog.epoch,
             *er.loss, *er.metric, er.epoch_s, t.io_s, t.comm_s, t.compute_s,
             eta_text(time_left(ms.ctx.plan, ms.ctx.epoch_work, ms.job.stage, ms.job.model, rec.epochs, rec.time_s / rec.epochs)));
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(Optimizer optimizer, std::vector<torch::Tensor> params, double learning_rate,
                                                        bool fused) {
  if (fused && optimizer == Optimizer::adam) return std::make_unique<FusedAdam>(params, learning_rate);
  switch (optimizer) {
    case Optimizer::adam: return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(learning_rate));
    case Optimizer::sgd: return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(learning_rate));
    case Optimizer::momentum: return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(learning_rate).momentum(0.9));
    case Optimizer::lamb: return std::make_unique<Lamb>(params, LambOptions(learning_rate));
  }
  fail_input("", "optimizer", fmt::format("'{}' is not available in the execution backend", to_string(optimizer)));
}

ModelRecord start_model_record(const RunContext& ctx, const ModelJob& job, const SpecNetImpl& model, bool nccl) {
  const auto& run = ctx.plan.stages[job.stage].models[job.model];
  ModelRecord m = model_record_header(run, ctx.spec.name);
  m.params = model.table().total_params();
  m.iterations_per_epoch = ctx.plan.train_samples / job.group.size() / run.local_batch;
  m.allreduce_library = job.group.size() == 1 ? "none" : nccl ? "nccl" : "mpi";
  return m;
}

namespace {

struct EpochOutcome {
  double val_metric = 0;
  bool window_switch = false;  // the switch rule fired at a window of iterations inside the epoch
};

// One epoch's training, then validation on each rank's share of the held-out samples (batch norm
// recomputed first over `bn_ids`), logged and printed; a non-finite validation metric ends the run.
EpochOutcome train_and_validate(ModelStage& ms, SpecNetImpl& model, torch::optim::Optimizer& opt, ModelProgress& prog,
                                const Checkpointer& checkpoints, const std::vector<int64_t>& bn_ids) {
  const auto t_epoch = Clock::now();
  ms.job.log.event("epoch_start", "INTERVAL_START", "null", ms.meta(prog.total_epochs + 1));
  const EpochTimes t = train_epoch(ms, model, opt, prog, checkpoints);
  double sums[2] = {t.loss_sum, static_cast<double>(t.iterations)};  // epoch means over the group's ranks
  ms.job.group.allreduce_sum(sums, 2);
  const double train_loss = sums[0] / std::max(1.0, sums[1]);
  const auto t_eval = Clock::now();
  ms.job.log.event("eval_start", "INTERVAL_START", "null", ms.meta(prog.total_epochs + 1));
  const double val_metric = validate(ms.ctx, ms.job, model, ms.store, ms.mr, bn_ids, ms.batches);
  ms.job.log.event("eval_stop", "INTERVAL_END", "null", ms.meta(prog.total_epochs + 1));
  const double eval_s = since(t_eval);
  const EpochRecord& er = add_epoch(prog, t, ms.iters, train_loss, val_metric, since(t_epoch), eval_s);
  log_epoch_end(ms, prog.total_epochs, val_metric);
  if (ms.job.group.rank() == 0 && !ms.ctx.options.quiet) print_epoch(ms, prog, er, t);
  if (!std::isfinite(val_metric))  // never checkpointed: the last good checkpoint stays the last finite one
    throw NonFiniteLoss(fmt::format("stage '{}' epoch {}: the validation metric is {}; the last good checkpoint: {}", ms.tag, prog.epoch,
                                    val_metric, checkpoints.last_good()));
  return {val_metric, t.window_switch};
}

// After an epoch: the model's stop rule ends it, or --stop-after kills the run after a checkpoint;
// the plan's periodic checkpoints. None: train on.
std::optional<ModelEnd> after_epoch(ModelStage& ms, SpecNetImpl& model, torch::optim::Optimizer& opt, ModelProgress& prog,
                                    const Checkpointer& checkpoints, const EpochOutcome& o) {
  const Plan& plan = ms.ctx.plan;
  ModelRecord& rec = prog.record;
  const auto why = stop_after_epoch(ms.mr.stop, plan, {prog.epoch, rec.iterations, &prog.losses, o.val_metric}, o.window_switch);
  if (why == StopReason::switch_rule) rec.switch_epoch = prog.epoch;
  if (why != StopReason::none) {
    rec.stop_reason = why;
    // the stage's end checkpoints what it hands on; until then a stopped model of a concurrent
    // stage keeps its own, so that a resume does not train it again
    if (ms.st.models.size() > 1) checkpoints.save_model(ms.job.stage, ms.job.model, model, opt, prog, ms.job.group);
    return ModelEnd::stopped;
  }
  const bool killed = ms.ctx.options.stop_after_epochs > 0 && prog.total_epochs >= ms.ctx.options.stop_after_epochs;
  const bool periodic = plan.checkpoint_every > 0 && prog.total_epochs % plan.checkpoint_every == 0;
  if (periodic || killed) checkpoints.save_model(ms.job.stage, ms.job.model, model, opt, prog, ms.job.group);
  ms.job.group.barrier();
  if (periodic || killed) ms.ctx.watchdog->set_last_checkpoint(checkpoints.last_good());
  if (killed) return ModelEnd::killed;
  return std::nullopt;
}

}  // namespace

ModelEnd train_model(RunContext& ctx, const ModelJob& job, SpecNetImpl& model, torch::optim::Optimizer& opt, ModelProgress& prog,
                     const Checkpointer& checkpoints) {
  const auto& plan = ctx.plan;
  const Stage& st = plan.stages[job.stage];
  const ModelRun& mr = st.models[job.model];
  const SampleStore store = open_store(ctx, mr, st.name);
  StepClock clock(ctx.device.is_cuda() ? ctx.device.index() : -1, 6);
  // in flight at once: the queue, the batch being filled, the step's and the one before it
  BatchPool batches(kPrefetchDepth + 3);
  ModelStage ms{ctx, job, st, mr, store, objective_for(ctx, store), nullptr, clock, batches, 0, {}, "", nullptr, 0};
  // transfer learning: the pretrained model's bottom layers frozen for its first epochs
  std::vector<torch::Tensor> frozen;
  const int freeze_epochs = mr.pretrained ? mr.pretrained->freeze_epochs : 0;
  if (freeze_epochs > 0) frozen = bottom_parameters(model, checked_freeze_through(plan, ctx.spec, job.stage));
  std::unique_ptr<GradSync> sync;
  auto sync_over = [&](bool freeze) {
    sync.reset();  // its hooks go before the next sync's come
    set_trainable(frozen, !freeze);
    sync = std::make_unique<GradSync>(trainable_parameters(model), job.tensors, plan.bucket_bytes);
    ms.sync = sync.get();
  };
  bool frozen_now = prog.epoch < freeze_epochs;
  sync_over(frozen_now);
  ms.iters = static_cast<int>(prog.record.iterations_per_epoch);
  if (ms.iters < 1)
    fail_input(plan.source_file, "dataset.train_samples", fmt::format("too few samples for one batch per rank in stage '{}'", st.name));
  const int rank = job.group.rank(), ranks = job.group.size();
  // batch norm recomputed before each validation over the first batches of this rank's share
  const auto bn_ids = recompute_ids(plan.train_samples, rank, ranks, int64_t{plan.precise_bn_batches} * mr.local_batch, ctx.share.has_value());
  // where each node reads its staged share, the groups stay on their nodes
  if (ctx.share) ms.nodes = member_nodes(st, job.model, ctx.share->node_of_rank);
  ms.tag = st.models.size() == 1 ? st.name : st.name + "/" + mr.name;
  if (prog.epoch == 0)  // what the log reader needs to know of the model besides its epochs
    job.log.point(kModelKey, std::to_string(ranks),
                  fmt::format("{{\"stage\": \"{}\", \"model\": \"{}\", \"model_index\": {}, \"resolution\": {}, \"local_batch\": {}}}",
                              st.name, mr.name, job.model, mr.resolution, mr.local_batch));
  for (;;) {
    if (frozen_now && prog.epoch >= freeze_epochs) {
      sync_over(frozen_now = false);
      if (job.group.rank() == 0 && !ctx.options.quiet)
        fmt::print("{}: layers through '{}' train from epoch {} on\n", ms.tag, mr.pretrained->freeze_through, prog.epoch + 1);
    }
    const EpochOutcome o = train_and_validate(ms, model, opt, prog, checkpoints, bn_ids);
    if (const auto end = after_epoch(ms, model, opt, prog, checkpoints, o)) return *end;
  }
}

}  // namespace mrplan
