#pragma once
// The time a run has left, printed with each epoch. The plan's remaining epochs (fixed stops
// exactly; a rule, target or plateau stop at its max_epochs, which makes the estimate an upper
// bound), each priced at the running model's measured seconds per epoch, scaled by the training
// work of an epoch per rank of the stage it belongs to (FLOPs, model/layer_table).
#include <cstddef>
#include <string>
#include <vector>

#include "model/network_spec.hpp"
#include "model/plan.hpp"

namespace mrplan {

struct Eta {
  double seconds = 0;
  bool upper_bound = false;
};

// Training FLOPs of one epoch on one rank, per model of every stage ([stage][model]): made once per
// run, what time_left prices the epochs by.
using EpochWork = std::vector<std::vector<double>>;
EpochWork epoch_work(const Plan& plan, const NetworkSpec& spec);

// `epochs_done` epochs of model `model` of stage `stage` took `mean_epoch_s` each.
Eta time_left(const Plan& plan, const EpochWork& work, size_t stage, size_t model, double epochs_done, double mean_epoch_s);

// "ETA 42 s", "ETA 3.5 min", "ETA <= 2.1 h"
std::string eta_text(const Eta& eta);

}  // namespace mrplan
