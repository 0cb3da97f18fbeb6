#include "exec/run_log.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "model/mllog_keys.hpp"

namespace mrplan {

std::string mlperf_benchmark(const std::string& workload) {
  for (const char* b : {"cosmoflow", "deepcam", "oc20", "openfold"})
    if (workload.starts_with(b)) return b;
  return workload;
}

void log_run_header(MlLog& log, const Plan& plan, const std::string& workload, const RunFacts& f) {
  auto text = [](const std::string& s) { return nlohmann::json(s).dump(); };
  const auto& first = plan.stages.front().models.front();
  log.point("cache_clear", "true");
  log.event("init_start", "INTERVAL_START", "null");
  log.point("submission_benchmark", text(mlperf_benchmark(workload)));
  log.point("submission_org", text("mrplan"));
  // the open division: multi-resolution plans change the reference's training (MLPerf HPC rules)
  log.point("submission_division", text("open"));
  log.point("submission_status", text("research"));
  log.point("submission_platform", text(f.platform));
  log.point("number_of_nodes", std::to_string(f.nodes));
  log.point("accelerators_per_node", std::to_string(f.accelerators_per_node));
  log.point("number_of_ranks", std::to_string(f.ranks));
  log.point("seed", std::to_string(f.seed));
  log.point("global_batch_size", std::to_string(plan.stages.front().global_batch()));
  log.point("gradient_accumulation_frequency", "1");
  log.point("train_samples", std::to_string(plan.train_samples));
  log.point("eval_samples", std::to_string(plan.validation_samples));
  log.point("precision_mode", text(to_string(plan.precision)));
  log.point("opt_name", text(to_string(first.optimizer)));
  log.point("opt_base_learning_rate", fmt::format("{}", first.learning_rate));
  log.point(kMethodKey, text(to_string(plan.method)), fmt::format("{{\"stages\": {}}}", plan.stages.size()));
  log.event("init_stop", "INTERVAL_END", "null");
  log.event("run_start", "INTERVAL_START", "null");
}

}  // namespace mrplan
