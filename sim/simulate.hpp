#pragma once
// The simulator: a plan on a machine profile -> a predicted Record.
#include <optional>
#include <string>
#include <vector>

#include "model/layer_table.hpp"
#include "model/machine_profile.hpp"
#include "model/plan_network.hpp"
#include "model/plan.hpp"
#include "model/record.hpp"
#include "sim/model_costs.hpp"

namespace mrplan {

// Everything per stage that does not depend on the switch point, computed once: a sweep then
// evaluates many switch points at the cost of a few multiplications each.
struct PreparedStage {
  size_t first = 0;                    // flat index of its first model (see model_epochs)
  std::vector<ModelCosts> models;      // in plan order
  std::vector<std::optional<double>> rule_switch_epochs;  // per model: where its switch rule fires
  double fusion_s = 0;                 // the hand-off at its end (MRMF: gather and broadcast the fused model)
  int gpus = 0;
};
struct PreparedPlan {
  Plan plan;
  NetworkSpec spec;
  std::optional<ConvergenceParams> convergence;
  std::optional<double> dense_target_epochs;  // where the dense curve crosses the target (reference batch)
  std::vector<PreparedStage> stages;
  size_t model_count = 0;
  double staging_s = 0;  // the staging phase before the first stage: each resolution's dataset once
};
PreparedPlan prepare(const Plan& plan, const MachineProfile& machine);
// Every model's layer table, stage by stage: they depend on the plan alone, so a fit that prepares
// one plan under thousands of profiles (calibrate/records_fit's posterior) builds them once.
using PlanTables = std::vector<std::vector<LayerTable>>;
PlanTables plan_tables(const Plan& plan);
PreparedPlan prepare(const Plan& plan, const MachineProfile& machine, const PlanTables& tables);
// prepare in parts, for searches that combine stages prepared apart (sim/optimize): the plan, its
// network and convergence; one stage's models without their start-up; every model's start-up, each
// stage's from the heap the stages before it grew (so after the stages are in place).
PreparedPlan prepare_shell(const Plan& plan, const MachineProfile& machine);
PreparedStage prepare_stage(const PreparedPlan& shell, size_t stage, const MachineProfile& machine,
                            const std::vector<LayerTable>* tables = nullptr);  // the stage's, where built already
void add_startups(PreparedPlan& p, const MachineProfile& machine);

struct ModelEpochs {
  double epochs = 0;
  std::optional<double> switch_epoch;  // the switch rule's own choice, when the model has one
  StopReason stop_reason = StopReason::none;
  bool reached_target = true;
  double metric_offset_epochs = 0;  // dense-equivalent epochs already gained (after a transfer or fusion)
  double progress = 0;              // the model's progress at the stage's end (MRMF fusion benefit)
};

// How many epochs every model of every stage trains, flattened in plan order (PreparedStage::first
// says where a stage's models start). `forced_switch_epochs` overrides the stop of every pre-training
// model a sweep moves (model/method_rules: sweep_moves).
std::vector<ModelEpochs> model_epochs(const PreparedPlan& p, std::optional<double> forced_switch_epochs = {});
// The same into `out` (its capacity reused: searches call this millions of times).
void model_epochs(const PreparedPlan& p, std::optional<double> forced_switch_epochs, std::vector<ModelEpochs>& out);

struct Totals {
  double time_s = 0, io_s = 0, comm_s = 0, compute_s = 0, eval_s = 0, fusion_s = 0, gpu_hours = 0;
  bool reached_target = true;
};
// model_epochs one stage at a time (searches re-evaluate only the stages that changed): stage i's
// models appended to `out` after what the stages before it left there (`out` is cut back to them);
// `handed`: what the stage before handed on (MRMF: its progress), updated to what stage i hands on.
void stage_epochs(const PreparedPlan& p, size_t stage, std::optional<double> forced_switch_epochs, std::vector<ModelEpochs>& out,
                  double& handed);

// Time of a model that trains `epochs` (possibly fractional) epochs.
EpochCost model_time(const ModelCosts& c, double epochs);
Totals totals(const PreparedPlan& p, const std::vector<ModelEpochs>& epochs);
// What the plan costs before its first stage (staging), where add_stage starts adding stages.
Totals start_totals(const PreparedPlan& p);
// One stage's share of the totals, added to `t` (totals adds every stage's).
void add_stage(const PreparedStage& stage, const std::vector<ModelEpochs>& epochs, Totals& t);

// Full prediction with per-epoch breakdown.
Record simulate(const Plan& plan, const MachineProfile& machine);
Record simulate(const PreparedPlan& prepared, const MachineProfile& machine,
                std::optional<double> forced_switch_epochs = {});

}  // namespace mrplan
