#pragma once
// The methods' rules, once, for the simulator, the trainer and the log reader (DESIGN.md, "Rules
// of thumb"): which stage orders a method allows, how a model's training in a stage ends, what a
// stage hands on, and how stage and run times add up.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/plan.hpp"
#include "model/stop_reason.hpp"
#include "model/record.hpp"

namespace mrplan {

// Stage order and shape per method; throws InputError naming the plan file and key:
// baseline: one stage of one model. MRT: a coarse stage, then a finer one, one model each (MRT
// III-C). MRMF: K >= 1 fusion stages of two models each (the lower-resolution one gives the bottom
// layer group, the higher-resolution one the top), resolutions rising from stage to stage, then
// one model that fine-tunes the fused model (MRMF Fig. 2).
void check_method_structure(const Plan& plan);

// ---- how a model's training in a stage ends (one rule for trainer, simulator and log reader)


// What a model's training has shown so far in its stage, at the end of an epoch.
struct Observed {
  int epochs = 0;                     // completed epochs
  int64_t iterations = 0;             // completed iterations
  const std::vector<double>* epoch_losses = nullptr;  // mean training loss per epoch
  std::optional<double> metric;       // this epoch's validation metric
};

// Whether the model stops after this epoch, and why. `window_switch`: the switch rule already fired
// at a window of iterations inside this epoch (StopRule::window_iterations > 0).
StopReason stop_after_epoch(const StopRule& stop, const Plan& plan, const Observed& seen, bool window_switch);
// The rule on windows of iterations (MRT III-C for DeepCAM): fires at the newest window?
bool switch_fires_at_last(const StopRule& stop, const std::vector<double>& losses);
// A fixed budget of iterations is spent (the model stops mid-epoch).
bool iteration_budget_spent(const StopRule& stop, int64_t iterations);

// Whether a sweep's switch point moves model `j` of stage `i`: MRT's coarse model; MRMF's
// lower-resolution model of every fusion stage (its stage length).
bool sweep_moves(const Plan& plan, size_t i, size_t j);

// ---- what a stage hands on

// Index of the model named `name` in the stage (std::out_of_range when it has none of that name).
size_t model_index(const Stage& stage, const std::string& name);
// Index into `plan.stages[stage].models` of the model that gives the next stage its starting point
// whole (MRT: the stage's one model; MRMF: the top_from model, whose resolution the fused model has).
size_t handed_on_model(const Stage& stage);
// Resolution of what the stage hands on.
int handed_on_resolution(const Stage& stage);

// The progress model j of stage i starts from: MRMF, what the previous stage handed on (a fusion
// stage's first stage and models from scratch start from none; it may be < 0); transfer learning,
// `pretrained` (model/learning_curve pretrained_start).
double start_progress(const Plan& plan, size_t i, size_t j, double handed, double pretrained);
// MRMF: what a fusion stage hands on, from its models' progress (in the stage's order).
double handed_on_progress(const ConvergenceParams& p, const Stage& stage, std::span<const double> progress);

// ---- how times add up

struct TimeSplit {
  double io_s = 0, comm_s = 0, compute_s = 0, eval_s = 0;
  double time_s() const { return io_s + comm_s + compute_s + eval_s; }
};
// Index of the model that sets a stage's time: concurrent models wait for the slowest (MRMF).
size_t slowest_model(std::span<const TimeSplit> models);
// Fills a stage record's wall time, epochs and components from its models and fusion_s: a stage
// lasts as long as its slowest model plus its hand-off, and holds all its GPUs throughout.
void finish_stage(StageRecord& stage);
// Sums the stages into the run's totals (time to target, GPU-hours at each stage's GPU count).
RecordTotals run_totals(const std::vector<StageRecord>& stages, bool reached_target);

}  // namespace mrplan
