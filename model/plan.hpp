#pragma once
// A plan: workload + machine + method + stages. Read by the simulator (sim/) and, later, by the
// execution backend (exec/), so both describe the same run.
#include <optional>
#include <string>
#include <vector>

#include "model/builtin_workloads.hpp"
#include "model/learning_curve.hpp"

namespace mrplan {

// One model trained inside a stage. MRT stages hold one; MRMF stages will hold two trained
// concurrently on a split of the stage's GPUs.
struct ModelRun {
  int resolution = 1;   // coarsening factor per spatial axis (1 = original)
  int gpus = 1;
  int local_batch = 1;
};

// How a stage ends.
struct StopRule {
  enum class Kind { epochs, switch_rule, target, plateau } kind = Kind::target;
  double epochs = 0;         // Kind::epochs
  SwitchRule rule;           // Kind::switch_rule
  int window_iterations = 0; // 0: the rule looks at epochs; > 0: at windows of this many iterations
  int eval_iterations = 0;   // Kind::target: validate every this many iterations (0: every epoch)
  int max_epochs = 1000;
};
const char* to_string(StopRule::Kind k);

struct Stage {
  std::string name;
  std::vector<ModelRun> models;  // exactly one until MRMF lands
  StopRule stop;
  std::string optimizer = "adam";
  double learning_rate = 1e-3;
  bool transfer_from_previous = true;  // MRT: initialise from the previous stage's model
  int warmup_epochs = 0;                // linear learning-rate warm-up
  std::vector<std::pair<int, double>> lr_decay;  // (epoch, factor): piecewise-constant schedule

  const ModelRun& model() const { return models.front(); }
  int gpus() const;
  int global_batch() const;
};

struct Plan {
  std::string name;
  std::string source_file;         // where it was read from, for error messages
  std::string workload = "cosmoflow-mrt";  // built-in name or workload YAML path
  WorkloadOptions workload_options;
  std::string machine = "summit";  // built-in name or profile YAML path
  std::string method = "mrt";      // baseline | mrt
  std::string precision = "fp32";  // fp32 | amp
  int64_t train_samples = 8192;
  int64_t validation_samples = 0;
  std::string target_metric = "val_loss";
  double target_value = 0;
  bool maximize = false;           // accuracy-like metrics rise
  int precise_bn_batches = 0;      // exec: batch-norm statistics recomputed over this many training
                                   // batches per rank before each validation (0: running averages)
  double bucket_bytes = 25e6;      // gradient bucket (PyTorch DDP default 25 MB)
  bool overlap_comm = true;        // allreduce during backward (DDP) or after it (Horovod tape)
  bool staged_to_nvme = false;
  bool h2d_overlapped = true;      // the input pipeline also prefetches to the GPU (tf.data); false: a
                                   // synchronous copy per step (PyTorch .to(device) on pageable memory)
  std::vector<Stage> stages;
  // execution backend only
  std::string data_dir;      // holds res1/ (dense) and resF/ (coarsened by F) HDF5 folders
  int checkpoint_every = 0;  // epochs; 0: only at the switch and at the end
};

}  // namespace mrplan
