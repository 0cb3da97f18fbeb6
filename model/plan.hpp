#pragma once
// A plan: workload + machine + method + stages. Each stage trains one model (baseline, MRT) or
// several at once on disjoint shares of its GPUs (MRMF), then hands on to the next stage. Read by
// the simulator (sim/) and the execution backend (exec/), so both describe the same run.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/optimizers.hpp"
#include "model/workload_options.hpp"
#include "model/codec.hpp"
#include "model/learning_curve.hpp"

namespace mrplan {

enum class Method { baseline, mrt, mrmf, transfer };
const char* to_string(Method m);
std::optional<Method> method_from_string(const std::string& name);

enum class Precision { fp32, amp };

// How each training step runs: launched op by op, or captured as one CUDA graph per stage and
// replayed (exec/captured_step, `run --capture`), each kernel without its launch cost.
enum class StepExecution { eager, captured };
const char* to_string(StepExecution s);

// Which framework runs the gradient allreduce: each pays its own cost per call (PyTorch DDP per
// bucket; Horovod per tensor-fusion cycle, MRT IV-A trains CosmoFlow with TensorFlow + Horovod).
enum class CommFramework { ddp, horovod };
const char* to_string(CommFramework f);
std::optional<CommFramework> comm_framework_from_string(const std::string& name);

// Where the dataset is copied before training (MLPerf HPC's staging phase): that tier, or the next
// farther one where a node's share does not fit; `nearest`: the nearest tier it fits; `none`: read
// from the parallel file system, the page cache serving later epochs where it holds the share.
enum class Staging { none, nvme, host_memory, device_memory, nearest };
const char* to_string(Staging s);
std::optional<Staging> staging_from_string(const std::string& name);
const char* to_string(Precision p);

// What a plan keeps when it moves to another GPU count (sweep, predict --gpus, optimize, the
// built-ins' GPU counts): strong scaling keeps each model's global batch, weak its local batch.
enum class Scaling { strong, weak };
const char* to_string(Scaling s);
std::optional<Scaling> scaling_from_string(const std::string& name);

// How a model's training in a stage ends.
struct StopRule {
  enum class Kind { epochs, iterations, switch_rule, target, plateau } kind = Kind::target;
  double epochs = 0;          // Kind::epochs
  int64_t iterations = 0;     // Kind::iterations: a fixed budget of steps
  SwitchRule rule;            // Kind::switch_rule
  int window_iterations = 0;  // 0: the rule looks at epochs; > 0: at windows of this many iterations
  int eval_iterations = 0;    // Kind::target: validate every this many iterations (0: every epoch)
  int max_epochs = 1000;
};
const char* to_string(StopRule::Kind k);

// Transfer learning (NAS 2019, ../shared/papers/related-abstracts.md): the model starts from one
// trained on related data (last campaign's simulations), its bottom layers optionally frozen for a
// while so that the new data first trains the top.
struct Pretrained {
  std::string checkpoint;      // a run's model.pt; empty: given at run time (`run --pretrained PATH`)
  std::string freeze_through;  // the ops up to and including this one are frozen; empty: none
  int freeze_epochs = 0;       // for this many epochs, then trained with the rest
};

// One model trained inside a stage, data parallel over its own GPUs.
struct ModelRun {
  std::string name;      // unique within the stage; a one-model stage's model carries the stage's name
  int resolution = 1;    // coarsening factor per spatial axis (1 = original)
  int gpus = 1;
  int local_batch = 1;
  StopRule stop;
  Optimizer optimizer = Optimizer::adam;
  double learning_rate = 1e-3;
  int warmup_epochs = 0;                          // linear learning-rate warm-up
  std::vector<std::pair<int, double>> lr_decay;   // (epoch, factor): piecewise-constant schedule
  // The hyper-parameters that set the epochs to target beyond the batch, as a result log states them
  // (calibrate/mllog_ingest recipe_text); runs of one recipe at one batch share its tuning on every
  // system (model/learning_curve). Empty: not stated.
  std::string recipe;
  bool from_previous = true;  // starts from what the previous stage hands on; false: from scratch
  std::optional<Pretrained> pretrained;  // transfer learning: starts from a model trained on related data
};

// How a stage's models become the next stage's starting point.
struct Handoff {
  enum class Kind { transfer, fuse } kind = Kind::transfer;
  // Kind::fuse (MRMF): the bottom layer group (the ops up to and including `split_after`) of model
  // `bottom_from` joined to the top layer group of model `top_from`; an empty split_after takes the
  // network's own (NetworkSpec::fusion_split_after).
  std::string bottom_from, top_from, split_after;
};

struct Stage {
  std::string name;
  std::vector<ModelRun> models;  // one, or several trained concurrently on split GPUs (MRMF)
  Handoff handoff;
  std::optional<Scaling> scaling;  // this stage's own, over the plan's (the MRT paper's DeepCAM: docs/plan-format.md)

  int gpus() const;          // over all its models
  int global_batch() const;  // over all its models
  // The model named `name`; nullptr when the stage has none of that name.
  const ModelRun* find(const std::string& name) const;
};

struct Plan {
  std::string name;
  std::string source_file;         // where it was read from, for error messages
  std::string workload = "cosmoflow-mrt";  // built-in name or workload YAML path
  WorkloadOptions workload_options;
  std::string machine = "summit";  // built-in name or profile YAML path
  Scaling scaling = Scaling::strong;
  Method method = Method::mrt;
  Precision precision = Precision::fp32;
  StepExecution steps = StepExecution::eager;
  // The ML framework the code runs on, as its system description names it without versions ("pytorch",
  // "pytorch nvidia release"): part of the code whose fits make priors (calibrate/code_priors). Empty: not stated.
  std::string software;
  int64_t train_samples = 8192;
  int64_t validation_samples = 0;
  std::string target_metric = "val_loss";
  double target_value = 0;
  bool maximize = false;           // accuracy-like metrics rise
  int precise_bn_batches = 0;      // exec: batch-norm statistics recomputed over this many training
                                   // batches per rank before each validation (0: running averages)
  double bucket_bytes = 25e6;      // gradient bucket (PyTorch DDP default 25 MB)
  bool overlap_comm = true;        // allreduce during backward (DDP) or after it (Horovod tape)
  int batchnorm_group = 1;         // ranks that pool batch-norm statistics (model/sync_batchnorm); 1: each its own
  int batchnorm_samples = 0;       // ...or as many ranks as hold this many samples, where more (0: the group alone)
  CommFramework framework = CommFramework::ddp;
  Staging staging = Staging::none;
  bool staging_async = false;      // the copy runs beside the first epoch, which waits on it (NVIDIA's
                                   // DeepCAM, synchronous_staging false), not as a phase before it
  int staging_oversampling = 1;    // a node stages this many shares, a wider pool to shuffle from
                                   // (NVIDIA's DeepCAM's data_oversampling_factor)
  int filesystem_nodes = 0;        // nodes reading the file system at once, this job's among them (a weak-scaling
                                   // submission's instances share its aggregate rate); 0: this job's alone
  Codec codec = Codec::raw;                    // how the samples are stored (`mrplan encode`)
  bool codec_named = false;                    // io.codec written in the plan: the data must match it, raw included
  DecoderPlace decoder = DecoderPlace::host;   // where a codec decodes them
  bool h2d_overlapped = true;      // the input pipeline also prefetches to the GPU (tf.data); false: a
                                   // synchronous copy per step (PyTorch .to(device) on pageable memory)
  bool persistent_workers = true;  // the loader keeps its workers between passes (DALI, tf.data); false: it
                                   // starts them at every pass (PyTorch DataLoader's default)
  std::vector<Stage> stages;
  // execution backend only
  std::string data_dir;      // holds res1/ (dense) and resF/ (coarsened by F) HDF5 folders
  int checkpoint_every = 0;  // epochs; 0: only at the switch and at the end
};

}  // namespace mrplan
