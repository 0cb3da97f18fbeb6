// The trainer behind `mrplan run`: the plan's stages in order, each model of a stage trained on its
// own group of ranks (exec/model_trainer), what a stage hands on passed to the next (exec/handoff),
// checkpointed (exec/checkpointer) and written as a Measurement.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include <unistd.h>

#include "exec/checkpointer.hpp"
#include "exec/communicator.hpp"
#include "exec/compute_microbench.hpp"
#include "exec/data_identity.hpp"
#include "exec/device_decoder.hpp"
#include "exec/durable_file.hpp"
#include "exec/error_once.hpp"
#include "exec/fusion.hpp"
#include "exec/grad_sync.hpp"
#include "exec/handoff.hpp"
#include "exec/host_tuning.hpp"
#include "exec/model_trainer.hpp"
#include "exec/resume_checks.hpp"
#include "exec/run.hpp"
#include "exec/run_context.hpp"
#include "exec/run_lock.hpp"
#include "exec/run_log.hpp"
#include "exec/run_outputs.hpp"
#include "exec/termination.hpp"
#include "model/errors.hpp"
#include "model/launch_env.hpp"
#include "model/method_rules.hpp"
#include "model/mllog_keys.hpp"
#include "model/plan_network.hpp"
#include "model/plan_yaml.hpp"
#include "model/record_header.hpp"
#include "model/sync_batchnorm.hpp"

namespace mrplan {

namespace fs = std::filesystem;

namespace {

void check_ranks(const Plan& plan, int ranks) {
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const auto& st = plan.stages[i];
    if (st.gpus() == ranks) continue;
    std::string split;
    if (st.models.size() > 1)
      for (const auto& m : st.models) split += fmt::format("{}{} ({})", split.empty() ? " = " : " + ", m.gpus, m.name);
    fail_input(plan.source_file, fmt::format("stages[{}].gpus", i),
               fmt::format("the stage wants {0} ranks{1} but {2} were launched (mpirun -np {0}, srun -n {0}, jsrun -n {0} or flux run -n {0})",
                           st.gpus(), split, ranks));
  }
}

// A model's seed: every stage's networks start from their own stream, so a run resumed at a
// stage's start builds exactly what the uninterrupted run built there.
uint64_t model_seed(uint64_t seed, size_t stage, size_t model) { return seed * 1000003 + stage * 101 + model; }

// Epochs one rank's models trained in the finished stages.
int epochs_of_rank(const Plan& plan, const Record& done, int rank) {
  size_t e = 0;
  for (size_t i = 0; i < done.stages.size(); ++i) e += done.stages[i].models.at(model_of_rank(plan.stages[i], rank)).per_epoch.size();
  return static_cast<int>(e);
}

// The run's epoch count a model of stage `si` starts from (--stop-after and checkpoint_every count
// it): the most any of its ranks trained before. After a fusion its ranks trained different models
// for different epochs; counted per rank, a periodic checkpoint (a collective) fell on one rank
// alone and the fine-tune deadlocked (issue 44).
int epochs_before(const Plan& plan, const Record& done, size_t si, size_t model) {
  const Stage& st = plan.stages[si];
  int most = 0;
  for (int r = first_rank_of(st, model); r < first_rank_of(st, model) + st.models[model].gpus; ++r)
    most = std::max(most, epochs_of_rank(plan, done, r));
  return most;
}

// Every model's record, from the root of its group to every rank.
std::vector<ModelRecord> gather_models(Communicator& world, const Stage& st, const ModelRecord& mine) {
  std::vector<ModelRecord> all;
  for (size_t j = 0; j < st.models.size(); ++j) {
    const int root = first_rank_of(st, j);
    const auto text = broadcast_text(world, world.rank() == root ? model_record_to_json(mine) : std::string(), root);
    all.push_back(model_record_from_json(text, fmt::format("model '{}' of stage '{}'", st.models[j].name, st.name)));
  }
  return all;
}

// MRMF: the fused model, the same on every rank (exec/fusion), from the model this rank trained.
SpecNet fuse(const RunContext& ctx, size_t si, size_t mine, SpecNetImpl& model) {
  const Stage& st = ctx.plan.stages[si];
  const size_t bottom = model_index(st, st.handoff.bottom_from), top = model_index(st, st.handoff.top_from);
  const size_t split = checked_fusion_split(ctx.plan, ctx.spec, si);
  SpecNet fused = build_network(ctx, st.models[top].resolution);
  std::optional<FusionParent> is;
  if (mine == bottom) is = FusionParent::bottom;
  if (mine == top) is = FusionParent::top;
  fuse_across_ranks(*fused, model, is, first_rank_of(st, bottom), first_rank_of(st, top), split, ctx.world);
  check_same_on_every_rank(*fused, ctx.world, fmt::format("the model fused at the end of stage '{}'", st.name));
  return fused;
}

// What a stage's end hands on, for the run's output (only rank 0 prints).
std::string stage_end_line(const Plan& plan, size_t si, const StageRecord& sr) {
  std::vector<std::string> why;
  for (const auto& m : sr.models)
    why.push_back(fmt::format("{}{}", sr.models.size() > 1 ? m.name + ": " : "",
                              m.stop_reason == StopReason::epochs ? fmt::format("its {:.4g} epochs", m.epochs)
                                                                            : fmt::format("{} after {:.4g} epochs", to_string(m.stop_reason), m.epochs)));
  std::string next;
  if (si + 1 < plan.stages.size()) {
    const auto& to = plan.stages[si + 1];
    const auto& h = plan.stages[si].handoff;
    const bool transfers = std::any_of(to.models.begin(), to.models.end(), [](const ModelRun& m) { return m.from_previous; });
    if (h.kind == Handoff::Kind::fuse) next = fmt::format("; {} and {} fused in {:.2f} s, on to '{}'", h.bottom_from, h.top_from, sr.fusion_s, to.name);
    else next = transfers ? fmt::format("; its weights go on to '{}'", to.name) : fmt::format("; '{}' starts from scratch", to.name);
  }
  return fmt::format("stage '{}' ends: {}, {:.1f} s{}", sr.name, fmt::join(why, "; "), sr.time_s, next);
}

// Transfer learning: the model starts from an earlier run's model.pt of the same network (every
// parameter and buffer, its shape checked), read on every rank as the plan is.
void load_pretrained(RunContext& ctx, const ModelRun& run, SpecNetImpl& model) {
  const auto file = resolve_pretrained(ctx.plan, *run.pretrained);
  SpecNet from = build_network(ctx, run.resolution);
  module_from_bytes(*from, read_bytes(file), file);
  initialise_from(*from, model, fmt::format("the pretrained model {}", file));
}

// What stage `si` hands on: the model fused across the ranks (MRMF: the fusion's time, the mean
// over the ranks, in the stage's record and the log), else the model this rank trained.
SpecNet hand_on(RunContext& ctx, size_t si, size_t mine, SpecNet model, StageRecord& sr) {
  const Stage& st = ctx.plan.stages[si];
  if (st.handoff.kind != Handoff::Kind::fuse) return model;
  const auto t0 = std::chrono::steady_clock::now();
  SpecNet fused = fuse(ctx, si, mine, *model);
  double fusion_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ctx.world.allreduce_sum(&fusion_s, 1);
  sr.fusion_s = fusion_s / ctx.ranks;
  finish_stage(sr);
  ctx.log.point(kFusionKey, fmt::format("{}", sr.fusion_s), fmt::format("{{\"stage\": \"{}\"}}", st.name));
  return fused;
}

// Gradients and parameters in GPU memory: NCCL, or MPI through host memory (--comm mpi); none on
// the CPU or for a group of one.
std::unique_ptr<Communicator> device_communicator(const RunContext& ctx, Communicator& host) {
  if (!ctx.device.is_cuda() || host.size() <= 1) return nullptr;
  return ctx.options.comm == TensorComm::mpi ? make_host_staged_communicator(host, ctx.device.index())
                                             : make_nccl_communicator(host, ctx.device.index());
}

// Concurrent models log from their groups' first ranks into parts, merged at the hand-off.
std::string part_log_path(const RunContext& ctx, size_t si, size_t k) {
  return (ctx.out / fmt::format("mllog.stage{}.model{}.part", si, k)).string();
}

// After the hand-off: the stage in the run's state, saved with the hand-off, and the watchdog told.
void save_stage(RunContext& ctx, size_t si, RunState& state, StageRecord sr, SpecNet& handed, const Checkpointer& checkpoints) {
  state.record.stages.push_back(std::move(sr));
  state.stage = si + 1;
  if (ctx.rank == 0) fmt::print("{}\n", stage_end_line(ctx.plan, si, state.record.stages.back()));
  if (ctx.rank == 0) checkpoints.save_run(state, &*handed);
  ctx.world.barrier();
  ctx.watchdog->set_last_checkpoint(checkpoints.last_good());
  ctx.watchdog->progress(fmt::format("stage '{}' finished", ctx.plan.stages[si].name));
}

// One stage on every rank: each group of ranks trains its model (continuing from `resume_from`
// where it checkpointed one), the models' records gathered, then the hand-off saved with the run's
// state. Returns false when --stop-after ended the run.
bool run_stage(RunContext& ctx, size_t si, RunState& state, SpecNet& handed, const Checkpointer& checkpoints,
               const Checkpointer* resume_from) {
  const auto& plan = ctx.plan;
  const auto& o = ctx.options;
  auto& world = ctx.world;
  const Stage& st = plan.stages[si];
  const size_t j = model_of_rank(st, ctx.rank);
  const ModelRun& run = st.models[j];
  // one group of ranks per model: gradients stay inside it, the groups meet only at the hand-off
  const bool concurrent = st.models.size() > 1;
  std::unique_ptr<Communicator> group = concurrent ? world.split(static_cast<int>(j)) : nullptr;
  Communicator& host = group ? *group : world;
  const std::unique_ptr<Communicator> device_comm = device_communicator(ctx, host);
  const bool staged = o.comm == TensorComm::mpi;
  Communicator& tensors = device_comm ? *device_comm : host;
  MlLog part_log(concurrent && host.rank() == 0 ? part_log_path(ctx, si, j) : "", resume_from != nullptr);
  const ModelJob job{si, j, host, tensors, concurrent ? part_log : ctx.log};

  torch::manual_seed(model_seed(o.seed, si, j));
  SpecNet model = build_network(ctx, run.resolution);
  auto opt = make_optimizer(run.optimizer, model->parameters(), run.learning_rate, plan.steps == StepExecution::captured);
  ModelProgress prog;
  if (resume_from && resume_from->has_model(si, j)) {
    resume_from->load_model(si, j, *model, *opt, prog, host.rank());
  } else {
    if (run.from_previous && handed) initialise_from(*handed, *model);
    if (run.pretrained) load_pretrained(ctx, run, *model);
    broadcast_module(*model, tensors);
    prog.total_epochs = epochs_before(plan, state.record, si, j);
    prog.record = start_model_record(ctx, job, *model, device_comm && !staged);
  }
  const bool done = prog.record.stop_reason != StopReason::none;  // resumed after it stopped, waiting for the others
  const auto end = done ? ModelEnd::stopped : train_model(ctx, job, *model, *opt, prog, checkpoints);
  double any_killed = end == ModelEnd::killed ? 1 : 0;
  world.allreduce_sum(&any_killed, 1);
  StageRecord sr{st.name, gather_models(world, st, prog.record)};
  finish_stage(sr);
  if (any_killed > 0) {  // the partial stage goes into the returned record, not into the checkpoint's
    state.record.stages.push_back(sr);
    return false;
  }
  handed = hand_on(ctx, si, j, model, sr);
  if (concurrent) {
    part_log = MlLog("", false);  // closed before rank 0 reads it
    world.barrier();
    std::vector<std::string> parts;
    for (size_t k = 0; k < st.models.size(); ++k) parts.push_back(part_log_path(ctx, si, k));
    if (ctx.rank == 0) ctx.log.merge(parts);
  }
  save_stage(ctx, si, state, std::move(sr), handed, checkpoints);
  // --stop-after at a stage's last epoch: killed right after the hand-off was saved (on every rank
  // when on any: the groups of a fusion stage counted their own epochs)
  double stop_now = o.stop_after_epochs > 0 && si + 1 < plan.stages.size() && prog.total_epochs >= o.stop_after_epochs ? 1 : 0;
  world.allreduce_sum(&stop_now, 1);
  return stop_now == 0;
}

// Plan and data checks that can fail before anything trains.
void check_before_training(const Plan& plan, const NetworkSpec& spec) {
  for (const auto& s : plan.stages)  // a network that cannot be built at some stage's resolution fails now, not mid-run
    for (const auto& m : s.models) model_run_table(plan, spec, m);
  for (size_t i = 0; i < plan.stages.size(); ++i) {  // every fusion's point and what a pretrained model freezes
    if (plan.stages[i].handoff.kind == Handoff::Kind::fuse) checked_fusion_split(plan, spec, i);
    if (const auto& pre = plan.stages[i].models.front().pretrained) {
      if (pre->freeze_epochs > 0) checked_freeze_through(plan, spec, i);
      if (pre->checkpoint.empty())
        fail_input(plan.source_file, fmt::format("stages[{}].pretrained.checkpoint", i),
                   "no pretrained model given: name it here or with `mrplan run --pretrained MODEL.pt` (an earlier run's model.pt)");
      if (!fs::is_regular_file(resolve_pretrained(plan, *pre)))
        fail_input(plan.source_file, fmt::format("stages[{}].pretrained.checkpoint", i),
                   fmt::format("{}: no such file (as given, or beside the plan)", pre->checkpoint));
    }
  }
  check_target_metric(layout_for(spec.name).task, plan.target_metric, plan.source_file);
  if (plan.validation_samples < 1)
    fail_input(plan.source_file, "dataset.validation_samples", "the execution backend needs validation samples for the target");
  for (const auto& s : plan.stages)
    for (const auto& m : s.models)
      if (const int ranks = batchnorm_pool_ranks(plan, m); ranks > 1)
        fail_input(plan.source_file, plan.batchnorm_group > 1 ? "comm.batchnorm_group" : "comm.batchnorm_samples",
                   fmt::format("{} pools batch-norm statistics over {} ranks; the execution backend keeps each rank's its own: set "
                               "batchnorm_group 1 and batchnorm_samples 0 (the model prices pools)",
                               m.name, ranks));
}

// The machine's speed now, timed as `calibrate compute` times its peak: by rank 0 alone, as
// calibration runs it, while the others sleep; `validate` sets it against the profile's peak.
double matmul_probe(Communicator& world, const torch::Device& dev) {
  double flops_per_s = world.rank() == 0 ? best_matmul_flops_per_s(dev.is_cuda() ? dev.index() : -1, 5) : 0.0;
  world.quiet_barrier();
  world.allreduce_sum(&flops_per_s, 1);
  return flops_per_s;
}

// "nid001, nid002, nid003", or the first and last few with the count between.
std::string host_list(const std::vector<std::string>& hosts) {
  if (hosts.size() <= 8) return fmt::format("{}", fmt::join(hosts, ", "));
  return fmt::format("{}, ... ({} more), {}", fmt::join(hosts.begin(), hosts.begin() + 3, ", "), hosts.size() - 6,
                     fmt::join(hosts.end() - 3, hosts.end(), ", "));
}

RunFacts run_facts(Communicator& world, const torch::Device& dev, uint64_t seed) {
  RunFacts f;
  f.hosts = node_names(rank_hosts(world));  // the run's size as MLPerf logs it
  f.ranks = world.size();
  f.nodes = std::max<int>(1, static_cast<int>(f.hosts.size()));
  f.accelerators_per_node = dev.is_cuda() ? (f.ranks + f.nodes - 1) / f.nodes : 0;
  f.seed = seed;
  f.platform = fmt::format("{} node{} ({}), {}", f.nodes, f.nodes == 1 ? "" : "s", host_list(f.hosts), dev.is_cuda() ? "CUDA GPUs" : "CPUs");
  return f;
}

std::map<std::string, std::string> provenance(const RunFacts& f, const torch::Device& dev, const RunOptions& o) {
  std::map<std::string, std::string> p;
  p["mrplan"] = o.version.empty() ? "unknown" : o.version;
  p["platform"] = f.platform;
  p["started_utc"] = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
  const auto env = detect_launch();
  p["launcher"] = env.launcher.empty() ? "none (one process)" : env.launcher;
  for (const char* job : {"SLURM_JOB_ID", "LSB_JOBID", "FLUX_JOB_ID", "PBS_JOBID"})
    if (const char* id = std::getenv(job)) p["job_id"] = fmt::format("{} ({})", id, job);
  p["ranks"] = std::to_string(f.ranks), p["nodes"] = std::to_string(f.nodes);
  p["hosts"] = fmt::format("{}", fmt::join(f.hosts, ","));
  p["device"] = dev.is_cuda() ? "cuda" : "cpu";
  p["devices_per_node"] = std::to_string(f.accelerators_per_node);
  p["seed"] = std::to_string(f.seed);
  if (o.deterministic) p["kernels"] = "deterministic";
  return p;
}

// How the data of `stage`'s first model is stored; InputError where the plan was predicted with
// another codec than the one the data has.
Codec stored_codec(const RunContext& ctx, size_t stage) {
  const auto first_data = fs::path(ctx.data_dir) / fmt::format("res{}", ctx.plan.stages[stage].models[0].resolution);
  const Codec stored = folder_codec(first_data.string(), ctx.layout);
  check_codec_fits(stored, ctx.layout, ctx.spec.name, first_data.string());
  if ((ctx.plan.codec != Codec::raw || ctx.plan.codec_named) && stored != ctx.plan.codec)  // what was predicted is not what would run
    fail_input(first_data.string(), "", fmt::format("is stored {} but the plan reads io.codec {}: `mrplan encode` the data or change the plan",
                                                    codec_name(stored), codec_name(ctx.plan.codec)));
  return stored;
}

// `what` run on rank 0 alone (a lock, a hash of the data), its answer or its error then the same on
// every rank, so that the ranks fail alike rather than wait for rank 0 in the next collective.
template <class What>
std::string on_rank0_alike(Communicator& world, What what) {
  std::string answer;
  bool failed = false;
  try {
    answer = what();
  } catch (const InputError& e) {
    answer = e.what(), failed = true;
  }
  answer = broadcast_text(world, (failed ? "E" : "V") + answer, 0);
  if (answer.front() == 'E') throw InputError(answer.substr(1));
  return answer.substr(1);
}

// The run continues where it was written: a resume into another folder would write a record and a
// log that begin mid-run (no run_start, a time to target of 0).
void check_resume_folder(const fs::path& out, const std::string& resume_dir) {
  std::error_code ec;
  if (!fs::exists(resume_dir, ec)) fail_input(resume_dir, "", "no such run folder to resume (--resume)");
  if (!fs::exists(out, ec) || !fs::equivalent(out, resume_dir, ec))
    fail_input("", "--out", fmt::format("'{}' is not the folder being resumed ('{}'): a resume continues the run in its own folder "
                                        "(copy the folder first to branch a run)", out.string(), resume_dir));
}

// The folders the plan's models read, one per resolution, in the plan's order.
std::vector<std::string> data_folders(const Plan& plan, const std::string& data_dir) {
  std::vector<std::string> folders;
  for (const auto& st : plan.stages)
    for (const auto& m : st.models)
      if (const auto f = (fs::path(data_dir) / fmt::format("res{}", m.resolution)).string(); std::find(folders.begin(), folders.end(), f) == folders.end())
        folders.push_back(f);
  return folders;
}

// A resume trains on with the seed and the data the run began with: another would change the data
// order or the samples mid-run while the Record names the first (issue 44).
void check_same_inputs(const Record& r, const RunOptions& o, const std::string& data_dir, const std::string& data_id) {
  const auto& p = r.provenance;
  if (p.contains("seed") && p.at("seed") != std::to_string(o.seed))
    fail_input("", "--seed", fmt::format("{}, but the run being resumed began with --seed {}: resume with that seed", o.seed, p.at("seed")));
  if (p.contains("data_identity") && p.at("data_identity") != data_id)
    fail_input(data_dir, "", fmt::format("holds other data than the run began with ({}, identity {}; now {}): resume with that data",
                                         p.contains("data_dir") ? p.at("data_dir") : "its data folder", p.at("data_identity"), data_id));
}

// What would train the plan once per task, or run other than the plan predicts: refused before anything starts.
void check_run_options(const Plan& plan, const RunOptions& o, int ranks) {
  // a launcher whose tasks MPI does not see would train the plan once per task, each alone
  if (const auto env = detect_launch(); env.size > 1 && env.size != ranks)
    fail_input(plan.source_file, "ranks",
               fmt::format("{} started {} tasks but MPI sees {}: this MPI was not built for {} (use its mpirun, or srun --mpi=pmix)",
                           env.launcher, env.size, ranks, env.launcher));
  check_ranks(plan, ranks);
  if (!o.stage_to.empty() && plan.staging == Staging::none)  // what ran would not be what was predicted
    fail_input(plan.source_file, "io.staging",
               "is none but --stage-to stages the data: set io.staging (host_memory or nvme) so that the "
               "plan's prediction prices the copy");
  if (!o.stage_to.empty() && plan.staging_async)  // the executor copies before the first epoch, not beside it
    fail_input(plan.source_file, "io.staging_async",
               "is true but --stage-to copies the data before training: set it false so that the "
               "plan's prediction prices the copy as it runs");
}

// The run's folder, made and locked by rank 0 for the run's life (every rank fails alike where
// another run holds it), and claimed unless the run resumes there.
std::unique_ptr<RunLock> open_run_folder(Communicator& world, const fs::path& out, const RunOptions& o) {
  const bool resuming = !o.resume_dir.empty();
  if (resuming) check_resume_folder(out, o.resume_dir);
  if (world.rank() == 0) fs::create_directories(out);
  world.barrier();
  std::unique_ptr<RunLock> lock;
  on_rank0_alike(world, [&] {
    if (world.rank() == 0) lock = std::make_unique<RunLock>(out);
    return std::string();
  });
  if (!resuming) claim_out_dir(out, o.overwrite, world);
  return lock;
}

// The identity of the data the plan reads (rank 0 hashes it, after checking every folder holds the
// same samples), the same on every rank.
std::string checked_data_identity(Communicator& world, const Plan& plan, const std::string& data_dir, const NetworkSpec& spec) {
  return on_rank0_alike(world, [&] {
    if (world.rank() != 0) return std::string();
    const auto folders = data_folders(plan, data_dir);
    auto id = data_identity(folders);  // first: it names a missing folder
    check_same_samples(folders, layout_for(spec.name));
    return id;
  });
}

// What the run began with, written once: a resume keeps the run's.
void begin_provenance(Record& r, const Plan& plan, const RunFacts& facts, const torch::Device& dev, const RunOptions& o,
                      const std::string& data_dir, const std::string& data_id) {
  if (!r.provenance.empty()) return;
  r.provenance = provenance(facts, dev, o);
  r.provenance["data_dir"] = fs::absolute(data_dir).lexically_normal().string();
  r.provenance["data_identity"] = data_id;
  for (const auto& st : plan.stages)  // what transfer learning started from
    if (const auto& pre = st.models.front().pretrained)
      r.provenance["pretrained"] = fs::absolute(resolve_pretrained(plan, *pre)).lexically_normal().string();
}

// How the data of the first stage to train is stored, and where it is decoded (a device decoder on
// a GPU where the plan asks for one); the run's record names the codec once.
const char* open_data_codec(RunContext& ctx, Record& r, size_t stage) {
  const Codec stored = stored_codec(ctx, stage);
  if (ctx.plan.decoder == DecoderPlace::device && ctx.device.is_cuda())
    ctx.decoder = std::make_shared<DeviceDecoder>(stored, ctx.device.index());
  if (!r.provenance.contains("data_codec")) {
    r.provenance["data_codec"] = codec_name(stored);
    if (ctx.plan.decoder == DecoderPlace::device && !ctx.decoder)  // a CPU run has no device to decode on
      r.warnings.push_back("io.decoder: device: this run has no GPU, so its samples are decoded on the host");
  }
  return codec_name(stored);
}

// A job ended from outside (a time limit, a cancel) says how to go on, in the job's output and in
// terminated.txt; why an earlier attempt ended is history once this one runs.
void note_when_terminated(const RunContext& ctx, const fs::path& checkpoints) {
  const fs::path ended_note = ctx.out / "terminated.txt";
  if (std::error_code ec; ctx.rank == 0) fs::remove(ended_note, ec);
  say_when_terminated(ctx.rank,
                      fmt::format("mrplan: the job was ended from outside (a time limit, a cancel or Ctrl-C); its checkpoints are in "
                                  "{}: go on with mrplan run {} --out {} --resume {}\n",
                                  checkpoints.string(), ctx.plan.source_file, ctx.out.string(), ctx.out.string()),
                      ended_note.string());
}

// The plan's stages from `state.stage` on, each handing on to the next through `handed` (a resumed
// run's from its checkpoint). Returns false when --stop-after ended the run.
bool train_stages(RunContext& ctx, RunState& state, SpecNet& handed, const Checkpointer& checkpoints, const LoadedRun* loaded,
                  Checkpointer* resumed_models) {
  if (state.stage > 0) {
    handed = build_network(ctx, handed_on_resolution(ctx.plan.stages[state.stage - 1]));
    module_from_bytes(*handed, loaded->handoff_bytes, (loaded->dir / "handoff.pt").string());
  }
  const size_t first = state.stage;
  try {
    for (size_t si = first; si < ctx.plan.stages.size(); ++si)
      if (!run_stage(ctx, si, state, handed, checkpoints, si == first ? resumed_models : nullptr)) return false;
  } catch (...) {  // the log's run_stop is written by the rank that reports the error (run_plan)
    ctx.log = MlLog("", false);
    throw;
  }
  return true;
}

// A run resumed after its last stage: nothing left to train, its outputs written again.
Record finished_already(Communicator& world, const Plan& plan, const fs::path& out, RunState& state, const LoadedRun& loaded) {
  add_totals(plan, state.record, false);
  if (world.rank() == 0) finish_outputs(out, state.record, loaded.handoff_bytes);
  world.barrier();
  return state.record;
}

// --stage-to's copy before the first stage, and the time the profile predicts for the run.
void stage_and_say_predicted(RunContext& ctx, Record& record) {
  const RunOptions& o = ctx.options;
  if (!o.stage_to.empty()) ctx.share = stage_run_data(ctx.world, ctx.plan, ctx.layout, ctx.data_dir, o, ctx.log, record);
  if (ctx.rank == 0 && o.predicted)
    fmt::print("predicted with {}: {} {:.1f} s\n", o.profile_file, o.predicted->reaches_target ? "time to target" : "trained",
               o.predicted->time_s);
}

// The record's totals and the run's outputs (rank 0), once every stage trained or --stop-after stopped it.
Record finish_run(RunContext& ctx, RunState& state, SpecNet handed, bool killed) {
  auto& r = state.record;
  if (killed)
    r.warnings.push_back(fmt::format("stopped after {} epochs (--stop-after); resume with --resume", ctx.options.stop_after_epochs));
  add_totals(ctx.plan, r, killed);
  if (ctx.rank == 0) {
    const std::string final_model = killed ? "" : module_to_bytes(*handed);
    write_run_outputs(ctx.out, ctx.log, r, killed ? nullptr : &final_model);
  }
  ctx.world.barrier();  // every rank returns once the outputs are there
  return r;
}

// --threads, else the cores shared among the ranks.
int threads_per_rank(const RunOptions& o, int ranks) {
  return o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::max(1u, std::thread::hardware_concurrency()) / ranks));
}

// The device this rank trains on, with the threads and kernels asked for; a captured plan is refused
// here, before any data is read, where the device cannot capture it.
torch::Device prepare_rank(Communicator& world, const Plan& plan, const RunOptions& o, int threads) {
  set_intra_op_threads(threads);
  if (o.deterministic) use_deterministic_kernels();
  const torch::Device dev = pick_device(o.device, o.comm, world);
  if (plan.steps == StepExecution::captured) check_capture(plan, dev);
  return dev;
}

// What the run is about to train, and where (rank 0).
void say_start(const RunContext& ctx, size_t stage, const RunFacts& facts, int threads, const char* codec, bool resuming) {
  if (ctx.rank != 0) return;
  fmt::print("run '{}': {} stage(s), {} rank(s) on {}, device {}, {} thread(s) per rank, data {} ({}){}\n", ctx.plan.name,
             ctx.plan.stages.size() - stage, ctx.ranks, facts.platform, ctx.device.str(), threads, ctx.data_dir, codec,
             resuming ? fmt::format(", resumed at stage {}", stage + 1) : "");
}

Record train_plan(Communicator& world, const Plan& plan, const RunOptions& o) {
  const int rank = world.rank(), ranks = world.size();
  check_run_options(plan, o, ranks);
  const int threads = threads_per_rank(o, ranks);
  const torch::Device dev = prepare_rank(world, plan, o, threads);
  const auto spec = plan_network(plan);
  check_before_training(plan, spec);
  const fs::path out = o.out_dir.empty() ? fs::path(".") : fs::path(o.out_dir);
  const bool resuming = !o.resume_dir.empty();
  const auto lock = open_run_folder(world, out, o);
  const std::string plan_yaml = plan_to_yaml(plan);
  const CheckpointIdentity id{plan_hash(plan_yaml), ranks, o.keep_checkpoints, ""};
  const Checkpointer checkpoints(out / "checkpoints", id, rank == 0);
  const Checkpointer resume_from(fs::path(o.resume_dir) / "checkpoints", id, rank == 0);

  RunState state{0, record_header(plan, spec.name, Source::measured, "local")};
  std::optional<LoadedRun> loaded;
  std::optional<Checkpointer> resumed_models;  // model checkpoints of the plan resumed (or, with --force, of the one before)
  if (resuming) {
    loaded = resume_from.load_run();
    if (!loaded) fail_input(resume_from.dir().string(), "", "no checkpoint to resume from");
    state = resumable_state(plan, plan_yaml, *loaded, ranks, o.force);
    resumed_models.emplace(resume_from.dir(), CheckpointIdentity{id.plan_hash, ranks, o.keep_checkpoints, loaded->facts.plan_hash}, rank == 0);
    if (state.stage >= plan.stages.size()) return finished_already(world, plan, out, state, *loaded);
  }
  const std::string data_dir = resolve_data_dir(plan, o);
  const std::string data_id = checked_data_identity(world, plan, data_dir, spec);
  if (resuming) check_same_inputs(state.record, o, data_dir, data_id);
  const RunFacts facts = run_facts(world, dev, o.seed);
  begin_provenance(state.record, plan, facts, dev, o, data_dir, data_id);
  if (!state.record.device_matmul_flops_per_s) state.record.device_matmul_flops_per_s = matmul_probe(world, dev);  // kept on resume
  if (!resuming && rank == 0) checkpoints.save_run(state, nullptr);  // a run killed in its first stage resumes from here
  // the probe's buffers go back to the kernel, so that every rank's first stage starts on the heap
  // a fresh process has, as model/startup_cost predicts it
  release_free_heap();
  MlLog log(rank == 0 ? (out / "mllog.txt").string() : "", resuming);
  if (!resuming) log_run_header(log, plan, spec.name, facts);
  else log.point(kResumeKey, "null", fmt::format("{{\"at_stage\": {}}}", state.stage + 1));  // the time since the kill is not trained
  RunContext ctx{plan,   o,   world, dev, spec, layout_for(spec.name), data_dir, out, checkpoints.dir(), log,
                 std::nullopt, rank, ranks, nullptr, epoch_work(plan, spec), nullptr, std::nullopt};
  say_start(ctx, state.stage, facts, threads, open_data_codec(ctx, state.record, state.stage), resuming);
  stage_and_say_predicted(ctx, state.record);
  note_when_terminated(ctx, checkpoints.dir());
  Watchdog watchdog(o.watchdog_s, rank, ranks, out / "heartbeats");
  watchdog.set_last_checkpoint(checkpoints.last_good());
  ctx.watchdog = &watchdog;

  SpecNet handed{nullptr};  // what the previous stage handed on
  const bool killed = !train_stages(ctx, state, handed, checkpoints, loaded ? &*loaded : nullptr, resuming ? &*resumed_models : nullptr);
  return finish_run(ctx, state, handed, killed);
}

}  // namespace

Record run_plan(const Plan& plan, const RunOptions& o) {
  keep_large_allocations_mapped();
  auto world = make_mpi_communicator();
  const auto token = broadcast_text(*world, fmt::format("{}-{}", ::getpid(), std::chrono::system_clock::now().time_since_epoch().count()), 0);
  try {
    return train_plan(*world, plan, o);
  } catch (const std::exception& e) {  // printed once however many ranks met it (exec/error_once)
    const bool input = dynamic_cast<const InputError*>(&e) || dynamic_cast<const std::filesystem::filesystem_error*>(&e);
    const int code = input ? 2 : 1;
    const auto out = o.out_dir.empty() ? fs::path(".") : fs::path(o.out_dir);
    const auto claims = out / "heartbeats";
    if (world->size() > 1 && !first_to_report(claims, token, e.what(), world->rank())) throw ReportedByAnotherRank{code};
    if (world->size() == 1 || first_to_report(claims, token, "run_stop", world->rank())) end_log_aborted(out / "mllog.txt");
    if (world->size() == 1) throw;
    // the other ranks may be waiting for this one in a collective: end them all now, not at the watchdog
    fmt::print(stderr, "mrplan: {}error: {} (rank {} of {}; ending every rank)\n", input ? "" : "internal ", e.what(), world->rank(), world->size());
    std::fflush(stderr);
    abort_job(code);
  }
}

}  // namespace mrplan
