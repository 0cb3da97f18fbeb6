#pragma once
// The places a training set can sit on its way to the GPU (preprocessing paper, Fig. 1a): the
// parallel file system, node NVMe, host memory, device memory. A dataset is placed at the nearest
// tier its node's share fits (model/io_cost).
#include <optional>
#include <string>

namespace mrplan {

enum class TierKind { pfs, nvme, host_memory, device_memory };  // farthest from the GPU first
const char* tier_name(TierKind t);
std::optional<TierKind> tier_from_name(const std::string& name);

struct StorageTier {
  double per_node_bandwidth_Bps = 0;   // what one node reads at (0: the node has no such tier)
  double aggregate_bandwidth_Bps = 0;  // what all nodes share (0: node-local, no shared limit)
  double capacity_per_node_bytes = 0;  // room for a node's share of the dataset (the file system's: unbounded)
  double per_file_latency_s = 0;       // open + first byte, shared by a file's samples
};

}  // namespace mrplan
