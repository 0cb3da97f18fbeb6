#pragma once
// Plans of the MRT paper's experiments, named APP@MACHINE (e.g. cosmoflow-mrt@summit).
#include <string>
#include <vector>

#include "model/plan.hpp"

namespace mrplan {

std::vector<std::string> builtin_plan_names();  // APP part: cosmoflow-mrt, cosmoflow-baseline, ...
bool is_builtin_plan(const std::string& name);  // APP@MACHINE with a known APP
// `gpus` 0 = the paper's smallest GPU count for that application.
Plan builtin_plan(const std::string& name, int gpus = 0);

// The MRT paper's hyper-parameters (MRT IV-B, IV-C).
struct PaperSetup {
  std::string workload;
  int64_t train_samples;
  int dense_global_batch_at_min_gpus;  // global batch at the smallest GPU count
  bool keep_global_batch;              // CosmoFlow keeps 256; DeepCAM keeps local batches (2 dense, 8 coarse)
  int dense_local_batch, coarse_local_batch;
  int min_gpus;
};
PaperSetup paper_setup(const std::string& app);  // "cosmoflow" or "deepcam"

}  // namespace mrplan
