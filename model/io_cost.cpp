#include "model/io_cost.hpp"

#include <algorithm>

namespace mrplan {

const char* to_string(IoTierKind t) {
  switch (t) {
    case IoTierKind::pfs: return "pfs";
    case IoTierKind::nvme: return "nvme";
    case IoTierKind::host_cache: return "host_cache";
  }
  return "?";
}

IoTierKind tier_for_epoch(const MachineProfile& m, const IoJob& job, int epoch) {
  const double node_share = job.dataset_bytes / std::max(1, job.nodes);
  if (epoch > 0 && node_share <= m.host_memory_bytes * m.io.page_cache_fraction) return IoTierKind::host_cache;
  if (job.staged_to_nvme && node_share <= m.io.nvme_capacity_bytes) return IoTierKind::nvme;
  return IoTierKind::pfs;
}

IoIteration io_per_iteration(const MachineProfile& m, const IoJob& job, IoTierKind tier) {
  IoIteration it;
  const double batch_bytes = job.sample_bytes * job.local_batch;
  const int r = std::max(1, job.ranks_on_node);
  switch (tier) {
    case IoTierKind::pfs: {
      // a node gets the lesser of its link and its share of the file system's aggregate
      const double node_bw = std::min(m.io.pfs.per_node_bandwidth_Bps, m.io.pfs.aggregate_bandwidth_Bps / std::max(1, job.nodes));
      it.read_s = m.io.pfs.per_file_latency_s * job.local_batch / std::max(1.0, job.samples_per_file) + batch_bytes / (node_bw / r);
      break;
    }
    case IoTierKind::nvme:
      it.read_s = batch_bytes / (m.io.nvme_bandwidth_Bps / r);
      break;
    case IoTierKind::host_cache:
      it.read_s = batch_bytes / (m.io.host_memcpy_Bps / r);
      break;
  }
  it.decode_s = batch_bytes / m.io.host_decode_Bps;
  it.h2d_s = job.device_bytes * job.local_batch / (m.io.host_to_device_Bps * m.io.host_to_device_efficiency);
  return it;
}

}  // namespace mrplan
