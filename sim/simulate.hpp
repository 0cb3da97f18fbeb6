#pragma once
// The simulator: a plan on a machine profile -> a predicted Record.
#include <optional>
#include <string>
#include <vector>

#include "model/layer_table.hpp"
#include "model/machine_profile.hpp"
#include "model/plan.hpp"
#include "model/record.hpp"
#include "sim/stage_costs.hpp"

namespace mrplan {

// The plan's network: a built-in name or a workload YAML file.
NetworkSpec plan_network(const Plan& plan);
// Layer table of one model run (resolution, local batch, coarse output upsample when needed).
LayerTable model_run_table(const Plan& plan, const NetworkSpec& spec, const ModelRun& run);

// Everything per stage that does not depend on the switch point, computed once: a sweep then
// evaluates many switch points at the cost of a few multiplications each.
struct PreparedPlan {
  Plan plan;
  NetworkSpec spec;
  std::optional<ConvergenceParams> convergence;
  std::vector<StageCosts> stages;
  std::vector<std::optional<double>> rule_switch_epochs;  // per stage: where its switch rule fires
};
PreparedPlan prepare(const Plan& plan, const MachineProfile& machine);

struct StageEpochs {
  double epochs = 0;
  std::optional<double> switch_epoch;  // the switch rule's own choice, when the stage has one
  const char* stop_reason = "";  // static text: sweeps evaluate millions of these
  bool reached_target = true;
  double metric_offset_epochs = 0;  // dense-equivalent epochs already gained (after a transfer)
};

// How many epochs each stage trains; `forced_switch_epochs` overrides the first MRT stage's stop.
std::vector<StageEpochs> stage_epochs(const PreparedPlan& p, std::optional<double> forced_switch_epochs = {});

struct Totals {
  double time_s = 0, io_s = 0, comm_s = 0, compute_s = 0, eval_s = 0, gpu_hours = 0;
  double epochs[2] = {0, 0};  // first and second stage
  bool reached_target = true;
};
// Wall time of a stage that trains `epochs` (possibly fractional) epochs.
EpochCost stage_time(const StageCosts& c, double epochs);
Totals totals(const PreparedPlan& p, const std::vector<StageEpochs>& epochs);

// Full prediction with per-epoch breakdown.
Record simulate(const Plan& plan, const MachineProfile& machine);
Record simulate(const PreparedPlan& prepared, const MachineProfile& machine,
                std::optional<double> forced_switch_epochs = {});

}  // namespace mrplan
