#pragma once
// What a run logs before its first epoch, as the MLPerf HPC logging rules ask (MLCommons logging,
// compliance_checker/hpc_3.0.0: common.yaml, closed_common.yaml): submission keys, cache_clear,
// init_start/init_stop, the run's size, seed, dataset and optimizer, then run_start.
#include <cstdint>
#include <string>
#include <vector>

#include "exec/mllog.hpp"
#include "model/plan.hpp"

namespace mrplan {

struct RunFacts {
  int ranks = 1, nodes = 1;
  int accelerators_per_node = 0;  // GPUs each node trains on; 0 on CPUs
  uint64_t seed = 1;
  std::string platform;  // host and device, as submission_platform
  std::vector<std::string> hosts;  // one per node, in rank order of the nodes' first ranks
};

// MLPerf HPC's benchmark name for a workload (cosmoflow-mrt and cosmoflow-mlperf are CosmoFlow),
// else the workload's own name.
std::string mlperf_benchmark(const std::string& workload);

void log_run_header(MlLog& log, const Plan& plan, const std::string& workload, const RunFacts& facts);

}  // namespace mrplan
