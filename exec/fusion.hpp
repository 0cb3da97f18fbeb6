#pragma once
// MRMF's fusion in LibTorch: the fused model takes the bottom layer group's parameters and buffers
// from the bottom parent and the top group's from the top parent, by name, with the split of
// model/fusion (the one the simulator costs). exec-internal: includes torch.
#include <cstdint>
#include <optional>
#include <string>

#include "exec/communicator.hpp"
#include "exec/spec_network.hpp"

namespace mrplan {

enum class FusionParent { bottom, top };

// Which parent a parameter or buffer of the fused model comes from.
FusionParent parent_of(const SpecNetImpl& fused, const std::string& name, size_t last_bottom);

// Both parents in this process: copies each tensor from its parent into `fused`. A tensor whose
// shape differs is an error naming it.
void fuse_local(SpecNetImpl& fused, SpecNetImpl& bottom, SpecNetImpl& top, size_t last_bottom);

// Each rank holds one parent at most (`mine`, `mine_is`: the model its group trained, when it is
// one of the two): every tensor travels from the first rank of its parent's group (`bottom_root`,
// `top_root`) to every rank of `world`, so every rank ends with the same fused model.
void fuse_across_ranks(SpecNetImpl& fused, SpecNetImpl& mine, std::optional<FusionParent> mine_is, int bottom_root, int top_root,
                       size_t last_bottom, Communicator& world);

// FNV-1a over every parameter's and buffer's bytes, in the module's order (on the host).
uint64_t module_digest(torch::nn::Module& module);
// Throws, alike on every rank of `world`, where `module` differs between them (`what` names it):
// a fused model each rank goes on from must be one model, whatever carried it (NCCL, MPI, host copies).
void check_same_on_every_rank(torch::nn::Module& module, Communicator& world, const std::string& what);

}  // namespace mrplan
