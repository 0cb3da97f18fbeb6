#include "model/storage_tier.hpp"

namespace mrplan {

const char* tier_name(TierKind t) {
  switch (t) {
    case TierKind::pfs: return "pfs";
    case TierKind::nvme: return "nvme";
    case TierKind::host_memory: return "host_memory";
    case TierKind::device_memory: return "device_memory";
  }
  return "?";
}

std::optional<TierKind> tier_from_name(const std::string& name) {
  for (auto t : {TierKind::pfs, TierKind::nvme, TierKind::host_memory, TierKind::device_memory})
    if (name == tier_name(t)) return t;
  return std::nullopt;
}

}  // namespace mrplan
