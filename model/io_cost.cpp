#include "model/io_cost.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "model/errors.hpp"

namespace mrplan {

const char* to_string(IoTierKind t) {
  switch (t) {
    case IoTierKind::pfs: return "pfs";
    case IoTierKind::nvme: return "nvme";
    case IoTierKind::host_cache: return "host_cache";
  }
  return "?";
}

namespace {

double node_share_bytes(const IoJob& job) { return job.dataset_bytes / std::max(1, job.nodes); }

double node_pfs_Bps(const MachineProfile& m, const IoJob& job) {
  return std::min(m.io.pfs.per_node_bandwidth_Bps, m.io.pfs.aggregate_bandwidth_Bps / std::max(1, job.nodes));
}

}  // namespace

std::optional<IoTierKind> staged_tier(const MachineProfile& m, const IoJob& job) {
  const double share = node_share_bytes(job);
  if (job.staging == Staging::none) return std::nullopt;
  if (job.staging == Staging::host_memory && share <= m.host_memory_bytes * m.io.page_cache_fraction) return IoTierKind::host_cache;
  // a share too large for memory goes to node-local NVMe where the node has room
  if (share <= m.io.nvme_capacity_bytes && m.io.nvme_bandwidth_Bps > 0) return IoTierKind::nvme;
  return std::nullopt;
}

IoTierKind tier_for_epoch(const MachineProfile& m, const IoJob& job, int epoch) {
  const auto staged = staged_tier(m, job);
  if (staged == IoTierKind::host_cache) return *staged;
  if (epoch > 0 && node_share_bytes(job) <= m.host_memory_bytes * m.io.page_cache_fraction) return IoTierKind::host_cache;
  return staged.value_or(IoTierKind::pfs);
}

double staging_s(const MachineProfile& m, const IoJob& job) {
  const auto staged = staged_tier(m, job);
  if (!staged) return 0;
  // the file system, not the node's memory or NVMe, is what staging waits for
  return node_share_bytes(job) / node_pfs_Bps(m, job);
}

const CodecRates* codec_rates(const MachineProfile& m, Codec codec, DecoderPlace decoder) {
  if (codec == Codec::raw) return nullptr;
  const std::string key = fmt::format("io.codecs.{}", codec_name(codec));
  const auto it = m.io.codecs.find(codec_name(codec));
  if (it == m.io.codecs.end())
    fail_input(m.name, key, fmt::format("the profile has no rates for codec '{}': run `mrplan calibrate io --codec {}` on a machine like it, "
                                        "or give its ratio and decode rate", codec_name(codec), codec_name(codec)));
  const bool host = decoder == DecoderPlace::host;
  if (codec != Codec::deflate && !((host ? it->second.host_decode_Bps : it->second.device_decode_Bps) > 0))
    fail_input(m.name, key + (host ? ".host_decode_GBps" : ".device_decode_GBps"),
               fmt::format("unknown: the plan decodes '{}' on the {}", codec_name(codec), decoder_place_name(decoder)));
  if (codec == Codec::deflate && !(it->second.host_decode_Bps > 0))
    fail_input(m.name, key + ".host_decode_GBps", "unknown: HDF5 inflates deflate on the host");
  return &it->second;
}

IoIteration io_per_iteration(const MachineProfile& m, const IoJob& job, IoTierKind tier) {
  IoIteration it;
  const double raw_batch_bytes = job.sample_bytes * job.local_batch;
  const double batch_bytes = raw_batch_bytes / (job.codec ? job.codec->ratio : 1.0);  // as stored and read
  const int r = std::max(1, job.ranks_on_node);
  switch (tier) {
    case IoTierKind::pfs: {
      // a node gets the lesser of its link and its share of the file system's aggregate
      const double node_bw = node_pfs_Bps(m, job);
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
  const double link_Bps = m.io.host_to_device_Bps * m.io.host_to_device_efficiency;
  if (job.codec && job.decoder == DecoderPlace::device) {  // preprocessing fused into the device decoder
    it.device_s = raw_batch_bytes / job.codec->device_decode_Bps;
    it.h2d_s = batch_bytes / link_Bps;
  } else {
    it.decode_s = raw_batch_bytes / (job.codec ? job.codec->host_decode_Bps : m.io.host_decode_Bps);
    it.h2d_s = job.device_bytes * job.local_batch * (job.codec ? job.codec->output_bytes_per_value / 4.0 : 1.0) / link_Bps;
  }
  return it;
}

}  // namespace mrplan
