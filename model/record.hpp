#pragma once
// A Prediction or a Measurement: the same fields whichever produced it (DESIGN.md, "The loop").
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/plan.hpp"
#include "model/stop_reason.hpp"

namespace mrplan {

enum class Source { predicted, measured };
const char* to_string(Source s);

// Where a step's time goes, summed over an epoch or a stage. compute_s = forward + backward +
// optimizer; h2d_s is part of io_s. Measured with CUDA events on a GPU, the host clock on a CPU.
struct StepPhases {
  double h2d_s = 0;
  double forward_s = 0;
  double backward_s = 0;   // gradients, and the share of the allreduce that backward did not hide is comm_s
  double optimizer_s = 0;  // optimizer step plus gradient bookkeeping
  StepPhases& operator+=(const StepPhases& o) {
    h2d_s += o.h2d_s, forward_s += o.forward_s, backward_s += o.backward_s, optimizer_s += o.optimizer_s;
    return *this;
  }
};

struct EpochRecord {
  int epoch = 0;  // 1-based within the stage
  double io_s = 0;       // exposed I/O
  double comm_s = 0;     // exposed communication
  double compute_s = 0;  // forward + backward + optimizer
  double epoch_s = 0;    // wall time of the epoch, validation pass included
  double eval_s = 0;     // the validation pass (predicted where the profile has compute.inference_factor)
  double fraction = 1;   // < 1 for a last, partial epoch (iteration-level stops)
  std::optional<StepPhases> phases;  // absent in records written before phases were timed
  std::optional<double> loss;
  std::optional<double> metric;
};

// One model's training inside a stage, on its own GPUs: what it is and how its time went.
struct ModelRecord {
  std::string name;  // the plan's name for it (a one-model stage's model carries the stage's name)
  std::string workload;
  int resolution = 1;
  int gpus = 1;
  int local_batch = 1;
  std::string recipe;  // the plan's (ModelRun::recipe): the hyper-parameters its epochs to target were reached with
  int64_t params = 0;
  double memory_bytes = 0;
  double memory_capacity_bytes = 0;
  bool memory_fits = true;
  int64_t iterations_per_epoch = 0;
  int64_t iterations = 0;
  double epochs = 0;
  std::optional<double> switch_epoch;  // what the switch rule chose, when the model has one
  StopReason stop_reason = StopReason::none;
  std::string allreduce_algorithm;  // predicted: the algorithm the cost model chose (ring, tree, ...; "none" on one GPU)
  std::string allreduce_library;    // measured: what ran the gradient allreduce (nccl, mpi; "none" on one rank)
  std::string data_tiers;  // predicted: where the epochs read (model/io_cost placement_text); empty: not known
  std::vector<EpochRecord> per_epoch;
  double io_s = 0, comm_s = 0, compute_s = 0, time_s = 0;
  double eval_s = 0;  // part of time_s spent in validation passes
  std::optional<StepPhases> phases;
};

// A stage: its models (trained one after the other's hand-off, several at once for MRMF) and its
// wall time, which model/method_rules derives from them: the slowest model's time and components
// plus the hand-off at its end (fusion_s: gathering and broadcasting a fused model).
struct StageRecord {
  std::string name;
  std::vector<ModelRecord> models;
  int gpus = 1;
  int global_batch = 1;
  double epochs = 0;  // the slowest model's
  double fusion_s = 0;
  double io_s = 0, comm_s = 0, compute_s = 0, time_s = 0;
  double eval_s = 0;
  // The stage's one model; throws naming the stage when it trains several (MRMF fusion stages).
  const ModelRecord& single() const;
  ModelRecord& single();
};

struct RecordTotals {
  double time_to_target_s = 0;
  double gpu_hours = 0;
  double io_s = 0, comm_s = 0, compute_s = 0;
  double epochs = 0;
  bool reached_target = false;
};

struct Quantiles {
  double p10 = 0, p50 = 0, p90 = 0;
};
// A prediction's spread (sim/monte_carlo): over draws of the profile's fitted parameters and seeds.
struct RecordSpread {
  Quantiles time_to_target_s, gpu_hours;
  int samples = 0, reached = 0;  // draws, and how many reach the target
  uint64_t seed = 0;             // the draws are reproducible from it
};

struct Record {
  static constexpr const char* current_schema = "mrplan.record/2";
  std::string schema = current_schema;
  Source source = Source::predicted;
  std::string plan;
  std::string workload;
  std::string machine;
  Method method = Method::baseline;
  std::string target_metric;
  double target_value = 0;
  bool target_maximize = false;  // accuracy-like metrics rise to the target; losses and errors fall
  std::vector<StageRecord> stages;
  RecordTotals totals;
  std::vector<std::string> warnings;
  std::optional<RecordSpread> spread;  // predictions with --samples
  std::string plan_spec;  // the plan it ran or predicts, as YAML (what `validate` re-predicts)
  // Measured runs: the best fp32 matmul at the run's start, timed as `calibrate compute` times
  // the profile's peak_fp32_flops (on rank 0 alone): the machine's drift since calibration.
  std::optional<double> device_matmul_flops_per_s;
  // Measured runs from result logs: the data staging before the first epoch (inside the time to
  // target where the log stages after run_start), and the log's keys mrplan does not interpret,
  // each with its first value as JSON text.
  std::optional<double> staging_s;
  std::map<std::string, std::string> log_keys;
  // Measured runs: where, when and with what they ran (mrplan version and commit, hosts, job id,
  // launcher, devices per node, seed), as text.
  std::map<std::string, std::string> provenance;
};

std::string record_to_json(const Record& record, int indent = 2);
std::string model_record_to_json(const ModelRecord& model);
// Refuses missing fields, wrong types, NaN and negative times, naming the file and field. Reads
// schema 2 and schema 1 (one model per stage, its breakdown on the stage).
Record record_from_json(const std::string& text, const std::string& file = "<json>");
ModelRecord model_record_from_json(const std::string& text, const std::string& file = "<json>");
Record load_record_file(const std::string& path);

}  // namespace mrplan
