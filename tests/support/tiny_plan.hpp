#pragma once
// A plan for the tiny CosmoFlow network the exec tests train (16^3 voxels, a quarter of the
// filters), with the stages given as YAML list lines.
#include <fmt/format.h>

#include <string>

namespace mrplan::testing {

struct TinyPlan {
  std::string name = "tiny", method = "mrt", machine = "summit";
  int train_samples = 32, validation_samples = 16;
};

inline std::string tiny_plan_yaml(const TinyPlan& t, const std::string& stages) {
  return fmt::format(R"(name: {}
workload: cosmoflow-mrt
workload_options: {{size: 16, width: 0.25}}
machine: {}
method: {}
dataset: {{train_samples: {}, validation_samples: {}}}
target: {{metric: val_mse, value: 0.0001}}
stages:
{})",
                     t.name, t.machine, t.method, t.train_samples, t.validation_samples, stages);
}

}  // namespace mrplan::testing
