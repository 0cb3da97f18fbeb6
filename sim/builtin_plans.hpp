#pragma once
// Plans of the papers' experiments, named APP@MACHINE (e.g. cosmoflow-mrt@summit): data/plans/APP.yaml,
// built into the binary and read by the reader a user's plan file goes through.
#include <string>
#include <vector>

#include "model/plan.hpp"

namespace mrplan {

std::vector<std::string> builtin_plan_names();  // APP part: cosmoflow-mrt, cosmoflow-baseline, ...
bool is_builtin_plan(const std::string& name);  // APP@MACHINE with a known APP
// The plan on MACHINE; `gpus` 0 = its file's GPU count (the paper's smallest), else moved there by
// the plan's scaling.
Plan builtin_plan(const std::string& name, int gpus = 0);

}  // namespace mrplan
