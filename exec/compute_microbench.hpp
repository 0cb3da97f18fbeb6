#pragma once
// `calibrate compute`'s measurements: the device's achievable peak (largest matmul) and memory
// bandwidth (largest copy), and every op of a workload timed alone at several resolutions and
// batch sizes. Torch-free header.
#include <functional>
#include <string>
#include <vector>

#include "calibrate/compute_fit.hpp"
#include "model/builtin_workloads.hpp"

namespace mrplan {

struct WorkloadVariant {
  std::string name = "cosmoflow-mrt";
  WorkloadOptions options;
};

// "name[:size[:width]]", e.g. cosmoflow-mrt:32:0.25 or neuron-inverter.
WorkloadVariant parse_workload_variant(const std::string& text);

struct ComputeBenchOptions {
  std::vector<WorkloadVariant> workloads{WorkloadVariant{}};  // timed together, fitted jointly
  std::vector<int> resolutions{1, 2};  // coarsening factors
  std::vector<int> batches{2, 4, 8};  // batch norm needs 2 values per channel
  int threads = 1;      // intra-op threads: as many as each rank of the runs to predict gets
  int repeats = 5;
  std::string device = "cpu";  // cpu | cuda
  std::string optimizer = "adam";  // adam | sgd: its step is timed per resolution
};

struct ComputeTimings {
  std::vector<OpTimingSample> ops;
  std::vector<OptimizerTiming> steps;
  std::vector<WholeStepTiming> whole_steps;  // one per (resolution, batch), as the trainer runs them
};

struct DevicePeaks {
  double matmul_flops_per_s = 0;  // best of a few square fp32 matmuls
  double copy_Bps = 0;            // bytes read + written per second by a large copy
  std::string matmul_shape, copy_shape;
};

DevicePeaks measure_device_peaks(const ComputeBenchOptions& options);

// `progress(done, total)` after each (resolution, batch) configuration.
ComputeTimings time_workload_ops(const ComputeBenchOptions& options,
                                              const std::function<void(int, int)>& progress = {});

}  // namespace mrplan
