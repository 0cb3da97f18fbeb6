#pragma once
// Tiered input pipeline: where a batch is read from, how long reading, decoding and the
// host-to-device copy take. What the prefetcher hides is decided by the simulator.
#include <string>

#include "model/machine_profile.hpp"

namespace mrplan {

enum class IoTierKind { pfs, nvme, host_cache };
const char* to_string(IoTierKind t);

struct IoJob {
  double sample_bytes = 0;     // on disk, per sample
  double device_bytes = 0;     // after decoding, per sample, as copied to the GPU
  int local_batch = 1;
  int ranks_on_node = 1;
  int nodes = 1;
  double dataset_bytes = 0;    // the whole training set on disk
  double samples_per_file = 1; // a file's open latency is shared by its samples
  bool staged_to_nvme = false;
};

// Tier a given epoch (0-based) reads from: the parallel file system first; afterwards the page
// cache when a node's share of the dataset fits in the usable host memory (restricted shuffling
// keeps each node on its share, MRT III-D), else NVMe when staged, else the file system again.
IoTierKind tier_for_epoch(const MachineProfile& m, const IoJob& job, int epoch);

struct IoIteration {
  double read_s = 0;    // one rank's batch from the tier (ranks on a node share its bandwidth)
  double decode_s = 0;  // host preprocessing of one rank's batch
  double h2d_s = 0;     // copy to the GPU
};

IoIteration io_per_iteration(const MachineProfile& m, const IoJob& job, IoTierKind tier);

}  // namespace mrplan
