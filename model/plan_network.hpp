#pragma once
// A plan's network and each model's layer table at its resolution and batch, checked: what the
// simulator costs and the trainer builds, from the plan alone.
#include <cstddef>

#include "model/layer_table.hpp"
#include "model/network_spec.hpp"
#include "model/plan.hpp"

namespace mrplan {

// The plan's network: a built-in name or a workload YAML file.
NetworkSpec plan_network(const Plan& plan);
bool workload_is_file(const Plan& plan);
// Layer table of one model run (resolution, local batch, coarse output upsample when needed).
LayerTable model_run_table(const Plan& plan, const NetworkSpec& spec, const ModelRun& run);

// MRMF: the index of stage i's fusion point in the op list, checked (it exists; the bottom model's
// layers up to it have the fused model's parameters), as the simulator costs it and the trainer fuses.
size_t checked_fusion_split(const Plan& plan, const NetworkSpec& spec, size_t stage);

// Transfer learning: the index of the last op a pretrained model of stage i freezes, checked (the
// op exists and is not the last: something trains).
size_t checked_freeze_through(const Plan& plan, const NetworkSpec& spec, size_t stage);

}  // namespace mrplan
