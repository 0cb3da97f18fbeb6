// The trainer behind `mrplan run`: stages of a plan (baseline, or MRT coarse -> transfer ->
// dense), data-parallel over MPI, timed per iteration, checkpointed, written as a Measurement.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "exec/communicator.hpp"
#include "exec/compute_microbench.hpp"
#include "exec/grad_sync.hpp"
#include "exec/host_tuning.hpp"
#include "exec/lamb.hpp"
#include "exec/loader.hpp"
#include "exec/mllog.hpp"
#include "exec/objective.hpp"
#include "exec/precise_batch_norm.hpp"
#include "exec/run.hpp"
#include "exec/spec_network.hpp"
#include "exec/step_clock.hpp"
#include "model/errors.hpp"
#include "model/learning_curve.hpp"
#include "model/method_rules.hpp"
#include "model/plan_yaml.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct NonFiniteLoss : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where the run stands; what a checkpoint holds besides model and optimizer state.
struct Progress {
  size_t stage = 0;
  int epoch = 0;         // epochs completed in this stage
  int total_epochs = 0;  // across stages
  std::vector<double> losses;         // mean training loss per epoch of this stage
  std::vector<double> window_losses;  // per window of iterations, where the switch rule watches those
  Record record;
};

std::string resolve_data_dir(const Plan& plan, const RunOptions& o) {
  std::string d = !o.data_dir.empty() ? o.data_dir : plan.data_dir;
  if (d.empty()) fail_input(plan.source_file, "data.dir", "the plan names no data folder (add data: {dir: ...} or pass --data)");
  fs::path p(d);
  if (p.is_relative() && o.data_dir.empty() && !plan.source_file.empty() && !fs::exists(p))
    p = fs::path(plan.source_file).parent_path() / p;
  return p.string();
}

double learning_rate(const ModelRun& s, int epoch /* 0-based */, int iter, int iters) {
  double lr = s.learning_rate;
  if (epoch < s.warmup_epochs) lr *= (epoch + (iter + 1.0) / iters) / s.warmup_epochs;
  for (const auto& [e, f] : s.lr_decay)
    if (epoch >= e) lr *= f;
  return lr;
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const ModelRun& s, std::vector<torch::Tensor> params) {
  if (s.optimizer == "adam") return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(s.learning_rate));
  if (s.optimizer == "sgd") return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(s.learning_rate));
  if (s.optimizer == "momentum")
    return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(s.learning_rate).momentum(0.9));
  if (s.optimizer == "lamb") return std::make_unique<Lamb>(params, LambOptions(s.learning_rate));
  fail_input("", "optimizer", fmt::format("'{}' is not available in the execution backend yet (adam, sgd, momentum, lamb)", s.optimizer));
}

void set_lr(torch::optim::Optimizer& opt, double lr) {
  for (auto& g : opt.param_groups()) g.options().set_lr(lr);
}

// MRT III-C: copy what Op::transfer marks (convolutions, batch norms); a transferable parameter
// whose shape differs is an error naming it.
void transfer_weights(SpecNetImpl& from, SpecNetImpl& to) {
  torch::NoGradGuard ng;
  auto src = from.named_parameters();
  auto dst = to.named_parameters();
  for (const auto& name : to.transferable_parameter_names()) {
    auto* s = src.find(name);
    if (!s) fail_input("", "transfer", fmt::format("parameter '{}' has no counterpart in the previous stage's model", name));
    if (s->sizes() != dst[name].sizes())
      fail_input("", "transfer", fmt::format("parameter '{}' has shape {} in the previous stage but {} now", name,
                                             fmt::join(s->sizes(), "x"), fmt::join(dst[name].sizes(), "x")));
    dst[name].copy_(*s);
  }
  auto sb = from.named_buffers();
  for (auto& b : to.named_buffers())
    if (auto* s = sb.find(b.key()); s && s->sizes() == b.value().sizes()) b.value().copy_(*s);
}

// Atomic: write everything under temporary names, then rename; state.json is renamed last and is
// what --resume trusts.
void save_checkpoint(const fs::path& dir, SpecNetImpl& model, torch::optim::Optimizer& opt, const Progress& p) {
  fs::create_directories(dir);
  torch::serialize::OutputArchive m;
  model.save(m);
  m.save_to((dir / "model.pt.tmp").string());
  torch::serialize::OutputArchive o;
  opt.save(o);
  o.save_to((dir / "optimizer.pt.tmp").string());
  torch::save(torch::globalContext().defaultGenerator(torch::kCPU).get_state(), (dir / "rng.pt.tmp").string());
  nlohmann::json j;
  j["stage"] = p.stage;
  j["epoch"] = p.epoch;
  j["total_epochs"] = p.total_epochs;
  j["losses"] = p.losses;
  j["window_losses"] = p.window_losses;
  j["record"] = nlohmann::json::parse(record_to_json(p.record));
  std::ofstream(dir / "state.json.tmp") << j.dump(1);
  for (const char* f : {"model.pt", "optimizer.pt", "rng.pt", "state.json"})
    fs::rename(dir / (std::string(f) + ".tmp"), dir / f);
}

// One GPU per rank (the node-local rank picks it) when asked for or, on auto, when there is one.
torch::Device pick_device(const std::string& want, const Communicator& comm) {
  if (want != "auto" && want != "cpu" && want != "cuda")
    fail_input("", "--device", fmt::format("'{}' is not a device (cpu, cuda, auto)", want));
  const bool gpu = torch::cuda::is_available();
  if (want == "cuda" && !gpu) fail_input("", "--device", "cuda was asked for but LibTorch sees no GPU (or is a CPU build)");
  if (want == "cpu" || !gpu) return torch::Device(torch::kCPU);
  if (comm.size() > 1 && !nccl_compiled())
    fail_input("", "--device", "several ranks on GPUs need NCCL, which this build lacks; use --device cpu or rebuild with CUDA");
  return torch::Device(torch::kCUDA, static_cast<torch::DeviceIndex>(comm.local_rank() % torch::cuda::device_count()));
}

}  // namespace

Record run_plan(const Plan& plan, const RunOptions& o) {
  keep_large_allocations_mapped();
  auto comm = make_mpi_communicator();
  const int rank = comm->rank(), ranks = comm->size();
  for (size_t i = 0; i < plan.stages.size(); ++i)
    if (plan.stages[i].gpus() != ranks)
      fail_input(plan.source_file, fmt::format("stages[{}].gpus", i),
                 fmt::format("the stage wants {} ranks but {} were launched (mpirun -np {})", plan.stages[i].gpus(), ranks,
                             plan.stages[i].gpus()));
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  set_intra_op_threads(o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, hw / ranks)));
  torch::manual_seed(o.seed);
  const torch::Device dev = pick_device(o.device, *comm);
  // gradients and parameters travel over NCCL on GPUs, over MPI on CPUs; scalars always over MPI
  std::unique_ptr<Communicator> nccl;
  if (dev.is_cuda() && ranks > 1) nccl = make_nccl_communicator(*comm, dev.index());
  Communicator& tensor_comm = nccl ? *nccl : *comm;

  if (plan.method == Method::mrmf) fail_input(plan.source_file, "method", "mrmf plans are not run by this version");
  const auto spec = plan_network(plan);
  for (const auto& s : plan.stages)  // a network that cannot be built at some stage's resolution fails now, not mid-run
    for (const auto& m : s.models) model_run_table(plan, spec, m);
  const auto layout = layout_for(spec.name);
  check_target_metric(layout.task, plan.target_metric, plan.source_file);
  const std::string data_dir = resolve_data_dir(plan, o);
  if (plan.validation_samples < 1)
    fail_input(plan.source_file, "dataset.validation_samples", "the execution backend needs validation samples for the target");
  const fs::path out = o.out_dir.empty() ? fs::path(".") : fs::path(o.out_dir);
  const fs::path ckpt = out / "checkpoints";
  if (rank == 0) fs::create_directories(out);

  Progress prog;
  prog.record.source = Source::measured;
  prog.record.plan = plan.name;
  prog.record.workload = spec.name;
  prog.record.machine = "local";
  prog.record.method = plan.method;
  prog.record.target_metric = plan.target_metric;
  prog.record.target_value = plan.target_value;
  prog.record.target_maximize = plan.maximize;
  prog.record.plan_spec = plan_to_yaml(plan);
  bool resuming = false;
  if (!o.resume_dir.empty()) {
    const fs::path state = fs::path(o.resume_dir) / "checkpoints" / "state.json";
    if (!fs::exists(state)) fail_input(state.string(), "", "no checkpoint to resume from");
    std::ifstream in(state);
    const auto j = nlohmann::json::parse(in);
    prog.stage = j["stage"], prog.epoch = j["epoch"], prog.total_epochs = j["total_epochs"];
    prog.losses = j["losses"].get<std::vector<double>>();
    prog.window_losses = j.value("window_losses", std::vector<double>{});
    prog.record = record_from_json(j["record"].dump(), state.string());
    resuming = true;
  }
  if (!prog.record.device_matmul_flops_per_s) {  // a resumed run keeps its first start's
    // the machine's speed now, timed as `calibrate compute` times its peak: by rank 0 alone, as
    // calibration runs it, while the others sleep; `validate` sets it against the profile's peak
    double flops_per_s = rank == 0 ? best_matmul_flops_per_s(dev.is_cuda() ? dev.index() : -1, 5) : 0.0;
    comm->quiet_barrier();
    comm->allreduce_sum(&flops_per_s, 1);
    prog.record.device_matmul_flops_per_s = flops_per_s;
  }
  // the probe's buffers go back to the kernel, so that every rank's first stage starts on the heap
  // a fresh process has, as model/startup_cost predicts it
  release_free_heap();
  MlLog log(rank == 0 ? (out / "mllog.txt").string() : "", resuming);
  if (!resuming) {
    log.event("run_start", "INTERVAL_START", "null");
    log.point("number_of_ranks", std::to_string(ranks));
    log.point("accelerators_per_node", std::to_string(ranks));
    log.point("number_of_nodes", "1");
    log.point("global_batch_size", std::to_string(plan.stages.front().global_batch()));
  }
  SpecNet previous{nullptr};
  bool stopped_early = false;
  std::optional<Objective> objective;  // the masks are the same at every resolution: weigh them once

  for (size_t si = prog.stage; si < plan.stages.size() && !stopped_early; ++si) {
    const Stage& st = plan.stages[si];
    const ModelRun& mr = st.models.front();  // baseline and MRT stages train one model
    const SampleStore store((fs::path(data_dir) / fmt::format("res{}", mr.resolution)).string(), layout);
    const auto spatial = coarsened_spatial(spec, mr.resolution);
    std::vector<int64_t> want{spec.input_channels};
    want.insert(want.end(), spatial.begin(), spatial.end());
    if (store.sample_shape() != want)
      fail_input(data_dir, fmt::format("res{}", mr.resolution),
                 fmt::format("samples are {} but stage '{}' needs {}", fmt::join(store.sample_shape(), "x"), st.name,
                             fmt::join(want, "x")));
    if (plan.train_samples + plan.validation_samples > store.size())
      fail_input(plan.source_file, "dataset",
                 fmt::format("{} training + {} validation samples requested, {} holds {}", plan.train_samples,
                             plan.validation_samples, data_dir, store.size()));
    if (!objective) {
      objective = make_objective(layout, store, plan.train_samples);
      if (objective->class_weights.defined()) objective->class_weights = objective->class_weights.to(dev);
    }
    SpecNet model(spec, spatial, spec.coarse_upsamples_output ? mr.resolution : 1);
    model->to(dev);
    auto opt = make_optimizer(mr, model->parameters());
    const bool resume_here = resuming && si == prog.stage && prog.epoch > 0;
    if (resume_here) {
      torch::serialize::InputArchive m, oa;
      m.load_from((fs::path(o.resume_dir) / "checkpoints" / "model.pt").string());
      model->load(m);
      oa.load_from((fs::path(o.resume_dir) / "checkpoints" / "optimizer.pt").string());
      opt->load(oa);
      torch::Tensor rng;
      torch::load(rng, (fs::path(o.resume_dir) / "checkpoints" / "rng.pt").string());
      { auto gen = torch::globalContext().defaultGenerator(torch::kCPU); gen.set_state(rng); }
    } else {
      if (resuming && si == prog.stage && si > 0 && !previous) {
        // resumed right at a switch: the checkpoint holds the previous stage's model
        const auto& pm = plan.stages[si - 1].models.front();
        previous = SpecNet(spec, coarsened_spatial(spec, pm.resolution), spec.coarse_upsamples_output ? pm.resolution : 1);
        torch::serialize::InputArchive m;
        m.load_from((fs::path(o.resume_dir) / "checkpoints" / "model.pt").string());
        previous->to(dev);
        previous->load(m);
        torch::Tensor rng;
        torch::load(rng, (fs::path(o.resume_dir) / "checkpoints" / "rng.pt").string());
        { auto gen = torch::globalContext().defaultGenerator(torch::kCPU); gen.set_state(rng); }
      }
      if (si > 0 && mr.from_previous && previous) transfer_weights(*previous, *model);
      broadcast_module(*model, tensor_comm);
      prog.epoch = 0;
      prog.losses.clear();
      prog.window_losses.clear();
      StageRecord sr;
      sr.name = st.name;
      ModelRecord m;
      m.name = mr.name;
      m.workload = spec.name, m.resolution = mr.resolution, m.gpus = mr.gpus, m.local_batch = mr.local_batch;
      m.params = model->table().total_params();
      m.iterations_per_epoch = plan.train_samples / ranks / mr.local_batch;
      m.allreduce_algorithm = ranks == 1 ? "none" : nccl ? "nccl" : "mpi";
      sr.models.push_back(m);
      sr.gpus = ranks;
      sr.global_batch = st.global_batch();
      prog.record.stages.push_back(sr);
    }
    ModelRecord& srec = prog.record.stages.back().single();
    GradSync sync(model->parameters(), tensor_comm, plan.bucket_bytes);
    StepClock clock(dev.is_cuda() ? dev.index() : -1, 6);
    constexpr int prefetch_depth = 2;
    // in flight at once: the queue, the batch being filled, the step's and the one before it
    BatchPool batches(prefetch_depth + 3);
    const int iters = static_cast<int>(srec.iterations_per_epoch);
    if (iters < 1)
      fail_input(plan.source_file, "dataset.train_samples", fmt::format("too few samples for one batch per rank in stage '{}'", st.name));
    bool stage_done = false;
    // MRT III-C for DeepCAM: the rule watches the mean loss of windows of iterations (over all
    // ranks, so every rank switches at the same iteration) and may end the stage mid-epoch
    const int window = mr.stop.kind == StopRule::Kind::switch_rule ? mr.stop.window_iterations : 0;
    // batch norm recomputed before each validation over the first batches of this rank's share
    std::vector<int64_t> recompute_ids;
    for (int64_t v = rank; v < plan.train_samples && static_cast<int64_t>(recompute_ids.size()) < int64_t{plan.precise_bn_batches} * mr.local_batch;
         v += ranks)
      recompute_ids.push_back(v);
    while (!stage_done) {
      const int e = prog.epoch;  // 0-based epoch about to run
      const auto t_epoch = Clock::now();
      if (rank == 0) log.event("epoch_start", "INTERVAL_START", "null", fmt::format("{{\"epoch_num\": {}}}", prog.total_epochs + 1));
      model->train();
      auto ids = restricted_shuffle(plan.train_samples, rank, ranks, mr.local_batch, o.seed * 31 + si, e);
      Prefetcher pf(store, std::move(ids), mr.local_batch, prefetch_depth, false, &batches);
      double io_s = 0, comm_s = 0, compute_s = 0, loss_sum = 0;
      StepPhases phases;
      double window_sum[2] = {0, 0};
      bool window_switch = false;
      int it = 0;
      for (;;) {
        const auto t_data = Clock::now();
        auto b = pf.next();
        if (!b) {
          io_s += since(t_data);
          break;
        }
        io_s += since(t_data);  // waiting for the prefetcher
        // points: 0 copy to device 1 forward 2 backward 3 wait for allreduces 4 optimizer 5
        clock.mark(0);
        if (dev.is_cuda()) b->x = b->x.to(dev), b->y = b->y.to(dev);
        clock.mark(1);
        set_lr(*opt, learning_rate(mr, e, it, iters));
        opt->zero_grad();
        sync.begin_step();
        auto loss = training_loss(*objective, model->forward(b->x), b->y);
        clock.mark(2);
        loss.backward();
        clock.mark(3);
        sync.finish_step();
        clock.mark(4);
        opt->step();
        clock.mark(5);
        const double l = loss.item<double>();  // waits for the whole step, so the clock's read is free
        const auto iv = clock.intervals_s();
        // host-to-device copies count as data time, as the simulator's timeline has them
        phases += StepPhases{iv[0], iv[1], iv[2], iv[4]};
        io_s += iv[0];
        comm_s += iv[3];
        compute_s += iv[1] + iv[2] + iv[4];
        if (!std::isfinite(l))
          throw NonFiniteLoss(fmt::format("stage '{}' epoch {} iteration {}: the loss is {}; the last good checkpoint is kept in {}",
                                          st.name, e + 1, it + 1, l, ckpt.string()));
        loss_sum += l;
        ++it;
        if (window > 0) {  // a partial window at the end of an epoch is dropped
          window_sum[0] += l;
          if (++window_sum[1] < window) continue;
          comm->allreduce_sum(window_sum, 2);
          prog.window_losses.push_back(window_sum[0] / window_sum[1]);
          window_sum[0] = window_sum[1] = 0;
          if (switch_fires_at_last(mr.stop, prog.window_losses)) {
            window_switch = true;
            break;
          }
        }
      }
      // epoch means over all ranks, then validation on each rank's shard of the held-out samples
      double sums[2] = {loss_sum, static_cast<double>(it)};
      comm->allreduce_sum(sums, 2);
      const double train_loss = sums[0] / std::max(1.0, sums[1]);
      const auto t_eval = Clock::now();
      if (!recompute_ids.empty()) {
        BatchNormRecompute recompute(*model);
        Prefetcher tp(store, recompute_ids, mr.local_batch, prefetch_depth, /*keep_partial=*/true, &batches);
        while (auto b = tp.next()) {
          if (dev.is_cuda()) b->x = b->x.to(dev);
          model->forward(b->x);
        }
      }
      model->eval();
      std::vector<double> val(validation_sum_count(*objective), 0.0);
      {
        torch::NoGradGuard ng;
        std::vector<int64_t> vids;
        for (int64_t v = rank; v < plan.validation_samples; v += ranks) vids.push_back(plan.train_samples + v);
        Prefetcher vp(store, vids, mr.local_batch, prefetch_depth, /*keep_partial=*/true);
        while (auto b = vp.next()) {
          if (dev.is_cuda()) b->x = b->x.to(dev), b->y = b->y.to(dev);
          add_validation_sums(*objective, model->forward(b->x), b->y, val.data());
        }
      }
      comm->allreduce_sum(val.data(), val.size());
      const double val_metric = validation_metric(*objective, plan.target_metric, val.data());
      const double eval_s = since(t_eval);
      ++prog.epoch;
      ++prog.total_epochs;
      prog.losses.push_back(train_loss);
      EpochRecord er;
      er.epoch = prog.epoch;
      er.io_s = io_s, er.comm_s = comm_s, er.compute_s = compute_s, er.epoch_s = since(t_epoch), er.eval_s = eval_s;
      er.phases = phases;
      er.loss = train_loss;
      er.metric = val_metric;
      srec.per_epoch.push_back(er);
      srec.epochs = prog.epoch;
      srec.iterations += it;
      srec.io_s += io_s, srec.comm_s += comm_s, srec.compute_s += compute_s, srec.time_s += er.epoch_s;
      srec.eval_s += eval_s;
      if (!srec.phases) srec.phases.emplace();
      *srec.phases += phases;
      if (rank == 0) {
        log.point(plan.maximize ? "eval_accuracy" : "eval_error", fmt::format("{}", val_metric),
                  fmt::format("{{\"epoch_num\": {}}}", prog.total_epochs));
        log.event("epoch_stop", "INTERVAL_END", "null", fmt::format("{{\"epoch_num\": {}}}", prog.total_epochs));
        if (!o.quiet)
          fmt::print("[{}] epoch {:3d}  loss {:.5f}  val {:.5f}  {:.2f} s (data {:.2f}, comm {:.2f}, compute {:.2f})\n", st.name,
                     prog.epoch, train_loss, val_metric, er.epoch_s, io_s, comm_s, compute_s);
      }
      // stopping
      const auto why = stop_after_epoch(mr.stop, plan, {prog.epoch, srec.iterations, &prog.losses, val_metric}, window_switch);
      const bool is_switch = why == StopReason::switch_rule;
      if (is_switch) srec.switch_epoch = prog.epoch;
      if (why != StopReason::none) {
        srec.stop_reason = to_string(why);
        stage_done = true;
      }
      const bool killed = o.stop_after_epochs > 0 && prog.total_epochs >= o.stop_after_epochs && !(stage_done && si + 1 == plan.stages.size());
      if (stage_done && si + 1 < plan.stages.size()) {  // the next stage starts from the transfer
        prog.stage = si + 1;
        prog.epoch = 0;
      }
      const bool last = stage_done && si + 1 == plan.stages.size();
      const bool periodic = last || (plan.checkpoint_every > 0 && prog.total_epochs % plan.checkpoint_every == 0);
      // at the switch the checkpoint holds the coarse model and points at the next stage's start
      if (rank == 0 && (periodic || is_switch || killed)) save_checkpoint(ckpt, *model, *opt, prog);
      comm->barrier();
      if (killed) {
        stopped_early = true;
        prog.record.warnings.push_back(fmt::format("stopped after {} epochs (--stop-after); resume with --resume", prog.total_epochs));
        break;
      }
    }
    previous = model;
  }
  auto& r = prog.record;
  for (auto& s : r.stages) finish_stage(s);
  r.totals = run_totals(r.stages, !stopped_early && r.stages.back().single().stop_reason == to_string(StopReason::target_reached));
  if (rank == 0) {
    log.event("run_stop", "INTERVAL_END", "null",
              fmt::format("{{\"status\": \"{}\"}}", r.totals.reached_target ? "success" : stopped_early ? "aborted" : "target_not_reached"));
    std::ofstream(out / "record.json.tmp") << record_to_json(r);
    fs::rename(out / "record.json.tmp", out / "record.json");
  }
  return r;
}

}  // namespace mrplan
