#include "model/record_header.hpp"

#include "model/plan_yaml.hpp"

namespace mrplan {

Record record_header(const Plan& plan, const std::string& workload, Source source, const std::string& machine) {
  Record r;
  r.source = source;
  r.plan = plan.name;
  r.workload = workload;
  r.machine = machine;
  r.method = plan.method;
  r.target_metric = plan.target_metric;
  r.target_value = plan.target_value;
  r.target_maximize = plan.maximize;
  r.plan_spec = plan_to_yaml(plan);
  return r;
}

ModelRecord model_record_header(const ModelRun& run, const std::string& workload) {
  ModelRecord m;
  m.name = run.name;
  m.workload = workload;
  m.resolution = run.resolution;
  m.gpus = run.gpus;
  m.local_batch = run.local_batch;
  m.recipe = run.recipe;
  return m;
}

}  // namespace mrplan
