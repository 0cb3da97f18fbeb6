#pragma once
// `calibrate compute`'s measurements: the device's achievable peak (largest matmul) and memory
// bandwidth (largest copy), and every op of a workload timed alone at several resolutions and
// batch sizes. Torch-free header.
#include <functional>
#include <string>
#include <vector>

#include "exec/device_kind.hpp"
#include "model/builtin_workloads.hpp"
#include "model/microbench_samples.hpp"

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
  int repeats = 9;  // rounds: each times every configuration once, and the medians are over rounds
  // ...and more rounds until this long has passed: a VM's speed wanders over minutes, so a
  // calibration spread over several of them sees its typical speed rather than one spell's
  double min_seconds = 0;
  DeviceKind device = DeviceKind::cpu;
  Optimizer optimizer = Optimizer::adam;  // its step is timed per resolution
};

struct ComputeTimings {
  std::vector<OpTimingSample> ops;
  std::vector<WholeStepTiming> whole_steps;  // one per (resolution, batch), as the trainer runs them
  std::vector<double> round_s;  // each round's wall time: the same work every round, so their spread is the machine's drift
};

struct DevicePeaks {
  double matmul_flops_per_s = 0;  // best of a few square fp32 matmuls
  double copy_Bps = 0;            // bytes read + written per second by a large copy
  std::string matmul_shape, copy_shape;
};

DevicePeaks measure_device_peaks(const ComputeBenchOptions& options);

// The matmul half of the peaks alone (best of `repeats` after a warm-up), on the current intra-op
// threads: a run takes it at its start so that `validate` can tell the machine's drift since
// calibration from the model's error. `gpu` < 0: the CPU.
double best_matmul_flops_per_s(int gpu, int repeats);

// `progress(done, total)` after each configuration of each round; with `min_seconds`, `total` is
// re-estimated from the rounds so far.
ComputeTimings time_workload_ops(const ComputeBenchOptions& options,
                                              const std::function<void(int, int)>& progress = {});

// `calibrate sharing`, collective: for each configuration (workload, resolution, batch) a whole
// step on rank 0 alone while the other ranks sleep, then on every rank at once with gradients
// averaged over `comm` as the trainer averages them; each round does this for every configuration
// in turn, `repeats` rounds and more until `min_seconds` have passed. A step's compute leaves out
// the wait for the last allreduce, as the trainer's timers do. `host` (MPI) agrees the timings.
std::vector<NodeSharingTiming> time_node_sharing(const ComputeBenchOptions& options, Communicator& comm, Communicator& host,
                                                 const std::function<void(int, int)>& progress = {});

}  // namespace mrplan
