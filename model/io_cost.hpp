#pragma once
// Tiered input pipeline: where a batch is read from, how long reading, decoding and the
// host-to-device copy take. What the prefetcher hides is decided by the simulator.
#include <string>

#include "model/machine_profile.hpp"
#include "model/plan.hpp"

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
  Staging staging = Staging::none;
  // the plan's codec (model/codec.hpp): read and staged bytes shrink by its ratio; a host decoder
  // replaces the raw preprocessing, a device decoder runs in the step and the encoded bytes cross
  const CodecRates* codec = nullptr;  // nullptr: raw or what the profile's host_decode measured
  DecoderPlace decoder = DecoderPlace::host;
};

// Tier a given epoch (0-based) reads from: host memory when staged there and a node's share fits
// its usable part; else the parallel file system first and afterwards the page cache when the share
// fits it (restricted shuffling keeps each node on its share, MRT III-D), else NVMe when staged and
// the share fits, else the file system again.
IoTierKind tier_for_epoch(const MachineProfile& m, const IoJob& job, int epoch);
// Where staging puts the data (host memory, or NVMe where the share does not fit memory); nullopt
// when the plan does not stage or the node's share fits neither.
std::optional<IoTierKind> staged_tier(const MachineProfile& m, const IoJob& job);

// The staging phase before the first epoch: every node copies its share of the dataset from the
// parallel file system (the lesser of its link and its share of the aggregate); 0 when nothing is staged.
double staging_s(const MachineProfile& m, const IoJob& job);

struct IoIteration {
  double read_s = 0;    // one rank's batch from the tier (ranks on a node share its bandwidth)
  double decode_s = 0;  // host preprocessing of one rank's batch
  double h2d_s = 0;     // copy to the GPU
  double device_s = 0;  // decoding on the GPU, in the step
};

// The plan's codec's rates from the profile; nullptr for raw. InputError naming the profile key
// where the profile lacks what the plan needs (fit them with `calibrate io --codec`).
const CodecRates* codec_rates(const MachineProfile& m, Codec codec, DecoderPlace decoder);

IoIteration io_per_iteration(const MachineProfile& m, const IoJob& job, IoTierKind tier);

}  // namespace mrplan
