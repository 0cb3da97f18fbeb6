#pragma once
// MRMF's fusion (MRMF Fig. 1-2): a network's ops split into a bottom layer group, from the input up
// to and including the split op, and a top group, the rest. The fused model has the top parent's
// architecture (its resolution sizes the fully connected layers), the bottom group's parameters
// from the bottom parent and the top group's from the top parent. One rule for the simulator (the
// bytes a fusion moves) and the LibTorch modules (which parameter comes from where).
#include <cstddef>
#include <string>

#include "model/layer_table.hpp"
#include "model/network_spec.hpp"

namespace mrplan {

// Index in spec.ops of the bottom group's last op: `split_after` where given, else the network's
// own (NetworkSpec::fusion_split_after). InputError naming `file` and `key` when there is none or
// the op does not exist.
size_t fusion_split(const NetworkSpec& spec, const std::string& split_after, const std::string& file, const std::string& key);

// Whether op `index` of the spec (or of a layer table resolved from it) belongs to the bottom group.
inline bool in_bottom_group(size_t index, size_t last_bottom) { return index <= last_bottom; }

// The bottom parent's bottom-group layers must have the parameters the fused model's have: an op
// whose parameter count depends on the resolution cannot come from the other resolution.
// InputError naming the op, both parents' resolutions and the key otherwise.
void check_fusible(const LayerTable& bottom_parent, int bottom_resolution, const LayerTable& fused, int fused_resolution,
                   size_t last_bottom, const std::string& file, const std::string& key);

// fp32 parameter bytes and parameter tensors of each group of the fused model (what a fusion
// broadcasts, tensor by tensor, from each group's owners).
struct FusionBytes {
  double bottom_bytes = 0, top_bytes = 0;
  int64_t bottom_tensors = 0, top_tensors = 0;
};
FusionBytes fusion_bytes(const LayerTable& fused, size_t last_bottom);

}  // namespace mrplan
