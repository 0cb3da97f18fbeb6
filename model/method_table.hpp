#pragma once
// A method is one row of one table (in the spirit of nccl-tests' one testColl per collective): what
// the simulator, the search, the readers and the command line ask of a method. What the plan's
// structure says (a fusion stage, a hand-off by transfer) is read from the plan, not the name.
#include <string>
#include <vector>

#include "model/plan.hpp"
#include "model/record.hpp"

namespace mrplan {

struct MethodRow {
  Method method;
  const char* name;     // as plans and records spell it
  const char* display;  // as reports print it
  const char* article;  // "a" or "an", before its name
  // built-in plans of an application: APP + suffix (cosmoflow-mrmf, cosmoflow-mrmf2)
  std::vector<std::string> plan_suffixes;
  bool every_app_has_one;  // an application without this built-in plan is an error
  bool single_stage;       // one stage of one model (what MLPerf's reference trains)
  bool has_switch;         // a switch point (a coarse stage's or a fusion stage's length) to search
  bool splits_gpus;        // its fusion stages split the GPUs between two models: an axis
  bool pretrained;         // starts from a model trained on related data: searched only when one is given
  Method compared_against; // the baseline a report sets it beside
};

const std::vector<MethodRow>& method_table();
const MethodRow& method_row(Method m);
// "baseline, mrt, mrmf or transfer": for messages that list what a key accepts.
std::string method_names();

// How a Record's method is recognised from its stages: concurrent models in a stage (a fusion),
// more than one stage (a transfer), or one stage.
Method method_of_shape(bool concurrent_models, size_t stages);

// ---- the plan's structure
// A stage that fuses its two models (MRMF) is in the plan.
bool has_fusion_stage(const Plan& plan);
// Stage i hands its model on whole to a model of stage i + 1 (MRT's transfer; not a fusion).
bool hands_on_by_transfer(const Plan& plan, size_t i);
// Model j of stage i starts from what stage i - 1 handed on by transfer (MRT's dense model).
bool starts_from_transfer(const Plan& plan, size_t i, size_t j);
// A model of the plan starts from a pretrained model (transfer learning).
bool starts_pretrained(const Plan& plan);
// Sets the checkpoint (a run's model.pt) every pretrained model of `plan` starts from.
void start_from(Plan& plan, const std::string& checkpoint);
// The plan a method is compared against: its last stage alone, from scratch to the target.
Plan baseline_of(const Plan& plan);

}  // namespace mrplan
