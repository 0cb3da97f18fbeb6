#pragma once
// `calibrate compute`'s measurements: the device's achievable peak (largest matmul) and memory
// bandwidth (largest copy), and every op of a workload timed alone at several resolutions and
// batch sizes. Torch-free header.
#include <functional>
#include <string>
#include <vector>

#include "calibrate/compute_fit.hpp"
#include "calibrate/node_sharing_fit.hpp"
#include "model/builtin_workloads.hpp"

namespace mrplan {

class Communicator;

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

// `calibrate sharing`, collective: for each workload and resolution at the largest batch, a whole
// step on rank 0 alone while the other ranks sleep, then on every rank at once with gradients
// averaged over `comm` as the trainer averages them. A step's compute leaves out the wait for the
// last allreduce, as the trainer's timers do. `host` (MPI) agrees the timings.
std::vector<NodeSharingTiming> time_node_sharing(const ComputeBenchOptions& options, Communicator& comm, Communicator& host,
                                                 const std::function<void(int, int)>& progress = {});

}  // namespace mrplan
