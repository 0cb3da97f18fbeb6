#include "model/io_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "model/errors.hpp"

namespace mrplan {

namespace {

double node_share_bytes(const IoJob& job) { return job.dataset_bytes / std::max(1, job.nodes); }

// An asynchronous copy is read at its tool's pace where the workload's own staging measured it;
// else the first epoch reads as a loader would (the file system's rate, no fixed part).
bool at_staging_pace(const MachineProfile& m, const IoJob& job) {
  return job.staging_async && std::find(m.io.staging_workloads.begin(), m.io.staging_workloads.end(), job.workload) != m.io.staging_workloads.end();
}

// a node gets the lesser of its link and its share of what all nodes reading at once share
double node_Bps(const StorageTier& t, const IoJob& job) {
  const int sharing = std::max({1, job.nodes, job.filesystem_nodes});
  return t.aggregate_bandwidth_Bps > 0 ? std::min(t.per_node_bandwidth_Bps, t.aggregate_bandwidth_Bps / sharing) : t.per_node_bandwidth_Bps;
}

// The tiers staging to `s` may use, the plan's first, then farther ones.
std::span<const TierKind> staging_chain(Staging s) {
  using enum TierKind;
  static constexpr TierKind from_device[] = {device_memory, host_memory, nvme};
  switch (s) {
    case Staging::none: return {};
    case Staging::nvme: return std::span(from_device).subspan(2);
    case Staging::host_memory: return std::span(from_device).subspan(1);
    case Staging::device_memory:
    case Staging::nearest: return from_device;
  }
  return {};
}

}  // namespace

StorageTier tier_of(const MachineProfile& m, const IoJob& job, TierKind kind) {
  switch (kind) {
    case TierKind::pfs: return at_staging_pace(m, job) ? staging_source(m) : m.io.pfs;
    case TierKind::nvme: return m.io.nvme;
    case TierKind::host_memory: return m.io.host_memory;
    case TierKind::device_memory: {
      const int r = std::max(1, job.ranks_on_node);
      return {r * m.compute.mem_bandwidth_Bps * m.compute.mem_efficiency, 0, r * std::max(0.0, job.device_room_bytes), 0};
    }
  }
  return {};
}

bool share_fits(const MachineProfile& m, const IoJob& job, TierKind kind) {
  if (kind == TierKind::pfs) return true;
  if (kind == TierKind::device_memory && !(job.codec && job.decoder == DecoderPlace::device)) return false;
  const auto t = tier_of(m, job, kind);
  return t.per_node_bandwidth_Bps > 0 && node_share_bytes(job) <= t.capacity_per_node_bytes;
}

Placement place_dataset(const MachineProfile& m, const IoJob& job) {
  Placement p;
  for (auto t : staging_chain(job.staging))
    if (share_fits(m, job, t)) {
      p.staged = t;
      break;
    }
  p.first_epoch = p.later_epochs = p.staged.value_or(TierKind::pfs);
  if (p.later_epochs < TierKind::host_memory && share_fits(m, job, TierKind::host_memory)) p.later_epochs = TierKind::host_memory;
  p.async = job.staging_async && p.staged;
  if (p.async) p.first_epoch = TierKind::pfs;
  return p;
}

std::string placement_text(const Placement& p) {
  auto label = [](TierKind t) { return t == TierKind::host_memory ? "host" : t == TierKind::device_memory ? "device" : tier_name(t); };
  std::string out = p.async ? "async " : p.staged ? "staged " : "";
  out += label(p.first_epoch);
  if (p.later_epochs != p.first_epoch) out += std::string(">") + label(p.later_epochs);
  return out;
}

StorageTier staging_source(const MachineProfile& m) {
  // the file system, not the node's memory or NVMe, is what staging waits for, through the staging
  // tool's own rate where the runs measured it
  StorageTier from = m.io.pfs;
  if (m.io.staging_node_Bps > 0) from.per_node_bandwidth_Bps = m.io.staging_node_Bps;
  return from;
}

double staging_s(const MachineProfile& m, const IoJob& job, const Placement& where) {
  if (!where.staged || where.async) return 0;
  return m.io.staging_fixed_s + job.staging_oversampling * node_share_bytes(job) / node_Bps(staging_source(m), job);
}

double staging_start_s(const MachineProfile& m, const IoJob& job, const Placement& where) {
  return where.async && at_staging_pace(m, job) ? m.io.staging_fixed_s : 0.0;
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

IoIteration io_per_iteration(const MachineProfile& m, const IoJob& job, TierKind tier) {
  IoIteration it;
  const double raw_batch_bytes = job.sample_bytes * job.local_batch;
  const double batch_bytes = raw_batch_bytes / (job.codec ? job.codec->ratio : 1.0);  // as stored and read
  const int r = std::max(1, job.ranks_on_node);
  const auto t = tier_of(m, job, tier);
  // ranks on a node share its bandwidth; a file's open latency is shared by its samples
  it.read_s = t.per_file_latency_s * job.local_batch / std::max(1.0, job.samples_per_file) + batch_bytes / (node_Bps(t, job) / r);
  const double link_Bps = m.io.host_to_device_Bps * m.io.host_to_device_efficiency;
  if (job.codec && job.decoder == DecoderPlace::device) {  // preprocessing fused into the device decoder
    it.device_s = raw_batch_bytes / job.codec->device_decode_Bps;
    it.h2d_s = tier == TierKind::device_memory ? 0.0 : batch_bytes / link_Bps;
  } else {
    it.decode_s = raw_batch_bytes / (job.codec ? job.codec->host_decode_Bps : m.io.host_decode_Bps);
    it.h2d_s = job.device_bytes * job.local_batch * (job.codec ? job.codec->output_bytes_per_value / 4.0 : 1.0) / link_Bps;
  }
  return it;
}

}  // namespace mrplan
