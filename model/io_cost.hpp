#pragma once
// Tiered input pipeline: where a dataset is placed, how long reading a batch, decoding it and the
// host-to-device copy take. What the prefetcher hides is decided by the simulator.
#include <optional>
#include <string>

#include "model/machine_profile.hpp"
#include "model/plan.hpp"

namespace mrplan {

struct IoJob {
  double sample_bytes = 0;     // on disk, per sample
  double device_bytes = 0;     // after decoding, per sample, as copied to the GPU
  int local_batch = 1;
  int ranks_on_node = 1;
  int nodes = 1;
  int filesystem_nodes = 0;    // the plan's: nodes sharing the file system's aggregate rate (0: `nodes`)
  double dataset_bytes = 0;    // the whole training set on disk
  double samples_per_file = 1; // a file's open latency is shared by its samples
  Staging staging = Staging::none;
  bool staging_async = false;  // the plan's: the first epoch reads what the staging tool copies, as it copies
  std::string workload;        // whose staging tool (io.staging_workloads)
  int staging_oversampling = 1;  // the plan's: shares a node's staging copies
  double device_room_bytes = 0;  // per GPU: its memory less what the model needs (model/memory_fit)
  // the plan's codec (model/codec.hpp): read and staged bytes shrink by its ratio; a host decoder
  // replaces the raw preprocessing, a device decoder runs in the step and the encoded bytes cross
  const CodecRates* codec = nullptr;  // nullptr: raw or what the profile's host_decode measured
  DecoderPlace decoder = DecoderPlace::host;
};

// A tier as this job sees it: the profile's, or for device memory the room the model leaves on the
// node's GPUs, read at their memory bandwidth.
StorageTier tier_of(const MachineProfile& m, const IoJob& job, TierKind kind);
// Whether a node's share of the dataset can sit in `kind`: it has bandwidth and room (the file
// system always); device memory also needs a device decoder (the GPU holds samples as stored).
bool share_fits(const MachineProfile& m, const IoJob& job, TierKind kind);

struct Placement {
  std::optional<TierKind> staged;     // where staging copies a node's share; nullopt: streamed
  TierKind first_epoch = TierKind::pfs;
  TierKind later_epochs = TierKind::pfs;  // the page cache serves them where a farther tier was read
  bool async = false;  // staged beside the first epoch: it reads the file system at the staging tool's pace
};
// Staged: the plan's tier, or the next farther one where the share does not fit (`nearest`: the
// nearest it fits); nothing fits: streamed. Staged asynchronously: the first epoch reads the file
// system, the later ones the staged tier. Streamed: the file system first, then host memory (the
// page cache) where the share fits (restricted shuffling keeps a node on its share, MRT III-D).
Placement place_dataset(const MachineProfile& m, const IoJob& job);
// "pfs>host": the first epoch's tier, then the later epochs' where they differ (pfs, nvme, host,
// device); "staged " before a staged one.
std::string placement_text(const Placement& p);

// The staging phase before the first epoch: every node copies its share of the dataset (times the
// plan's oversampling) from the parallel file system (the lesser of its link and its share of the
// aggregate); 0 when `where` stages nothing or stages beside the first epoch (whose reads then pay
// it: staging_source, staging_start_s).
double staging_s(const MachineProfile& m, const IoJob& job, const Placement& where);
// The file system as the staging tool reads it: at its own node rate where runs measured it.
StorageTier staging_source(const MachineProfile& m);
// What an asynchronous copy adds before the first epoch's first batch: the tool's fixed part, where
// the job's workload's staging fitted it (io.staging_workloads).
double staging_start_s(const MachineProfile& m, const IoJob& job, const Placement& where);

struct IoIteration {
  double read_s = 0;    // one rank's batch from the tier (ranks on a node share its bandwidth)
  double decode_s = 0;  // host preprocessing of one rank's batch
  double h2d_s = 0;     // copy to the GPU
  double device_s = 0;  // decoding on the GPU, in the step
};

// The plan's codec's rates from the profile; nullptr for raw. InputError naming the profile key
// where the profile lacks what the plan needs (fit them with `calibrate io --codec`).
const CodecRates* codec_rates(const MachineProfile& m, Codec codec, DecoderPlace decoder);

IoIteration io_per_iteration(const MachineProfile& m, const IoJob& job, TierKind tier);

}  // namespace mrplan
