#pragma once
// The optimizer's default space and the built-in plans it starts from (sim/optimize searches it).
#include <string>
#include <vector>

#include "model/machine_profile.hpp"
#include "sim/optimize.hpp"

namespace mrplan {

// The built-in plans of an application (cosmoflow, deepcam, neuron-inverter) on `machine`, one per
// method asked (none: every method it has); mrmf brings one and two fusion stages (APP-mrmf,
// APP-mrmf2) where the application has them. A method that starts from a pretrained model (transfer
// learning) comes only with `pretrained`, the model.pt its plans then start from.
std::vector<Plan> builtin_templates(const std::string& app, const std::string& machine, std::vector<Method> methods,
                                    const std::string& pretrained = "");

// The default space around `templates`: one node to 4096 GPUs in doubling node counts, every local
// batch 1..64, switch points (stage lengths) 1..200 epochs, and each template's own switch rule.
SearchSpace default_space(std::vector<Plan> templates, const MachineProfile& machine);
// GPU counts from `from` doubling up to `to`.
std::vector<int> doubling_values(int from, int to);

}  // namespace mrplan
