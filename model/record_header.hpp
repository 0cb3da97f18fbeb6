#pragma once
// What a Record is of, made from its plan alike for a prediction (sim/simulate) and a measurement
// (exec/trainer): the Record before its stages, and a model's before its epochs.
#include <string>

#include "model/plan.hpp"
#include "model/record.hpp"

namespace mrplan {

// `workload`: the plan's network's name (a workload file's own, not its path).
Record record_header(const Plan& plan, const std::string& workload, Source source, const std::string& machine);
ModelRecord model_record_header(const ModelRun& run, const std::string& workload);

}  // namespace mrplan
