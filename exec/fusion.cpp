#include "exec/fusion.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exec/fnv1a.hpp"
#include "model/errors.hpp"
#include "model/fusion.hpp"

namespace mrplan {

namespace {

// Every parameter and buffer by name, in the module's order (the same on every rank).
std::vector<std::pair<std::string, torch::Tensor>> tensors_of(torch::nn::Module& m) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (auto& p : m.named_parameters()) out.emplace_back(p.key(), p.value());
  for (auto& b : m.named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

torch::Tensor find_in(torch::nn::Module& m, const std::string& name) {
  // the dictionaries are named: find() points into them (ASan: a temporary's was read after it died)
  const auto params = m.named_parameters(), buffers = m.named_buffers();
  if (const auto* p = params.find(name)) return *p;
  if (const auto* b = buffers.find(name)) return *b;
  fail_input("", "fusion", fmt::format("parameter '{}' of the fused model has no counterpart in its parent", name));
}

void copy_checked(const torch::Tensor& src, torch::Tensor dst, const std::string& name, FusionParent from) {
  if (src.sizes() != dst.sizes())
    fail_input("", "fusion",
               fmt::format("parameter '{}' has shape {} in the {} model but {} in the fused model", name, fmt::join(src.sizes(), "x"),
                           from == FusionParent::bottom ? "bottom (lower-resolution)" : "top (higher-resolution)", fmt::join(dst.sizes(), "x")));
  dst.copy_(src);
}

}  // namespace

FusionParent parent_of(const SpecNetImpl& fused, const std::string& name, size_t last_bottom) {
  return in_bottom_group(fused.op_index_of(name), last_bottom) ? FusionParent::bottom : FusionParent::top;
}

void fuse_local(SpecNetImpl& fused, SpecNetImpl& bottom, SpecNetImpl& top, size_t last_bottom) {
  torch::NoGradGuard ng;
  for (auto& [name, t] : tensors_of(fused)) {
    const auto from = parent_of(fused, name, last_bottom);
    copy_checked(find_in(from == FusionParent::bottom ? bottom : top, name), t, name, from);
  }
}

void fuse_across_ranks(SpecNetImpl& fused, SpecNetImpl& mine, std::optional<FusionParent> mine_is, int bottom_root, int top_root,
                       size_t last_bottom, Communicator& world) {
  torch::NoGradGuard ng;
  for (auto& [name, t] : tensors_of(fused)) {
    const auto from = parent_of(fused, name, last_bottom);
    const int root = from == FusionParent::bottom ? bottom_root : top_root;
    if (world.rank() == root) {
      if (mine_is != from) throw std::logic_error("fusion: the root of a parent's group does not hold that parent");
      copy_checked(find_in(mine, name), t, name, from);
    }
    // over the host transport as floats, as broadcast_module sends BatchNorm's integer counters
    auto f = t.to(torch::kCPU, torch::kFloat32).contiguous();
    world.broadcast(f.data_ptr<float>(), static_cast<size_t>(f.numel()), root);
    if (world.rank() != root) t.copy_(f);
  }
}

uint64_t module_digest(torch::nn::Module& module) {
  Fnv1a hash;
  auto add = [&hash](const torch::Tensor& t) {
    const auto c = t.detach().to(torch::kCPU).contiguous();
    hash.add(c.data_ptr(), c.nbytes());
  };
  for (const auto& p : module.parameters()) add(p);
  for (const auto& b : module.buffers()) add(b);
  return hash.h;
}

void check_same_on_every_rank(torch::nn::Module& module, Communicator& world, const std::string& what) {
  if (world.size() == 1) return;
  const uint64_t mine = module_digest(module);
  std::vector<uint64_t> all(static_cast<size_t>(world.size()));
  world.allgather_bytes(&mine, sizeof mine, all.data());
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw std::runtime_error(fmt::format("{} differs between ranks 0 and {} (digests {:016x} and {:016x}): the ranks would go on "
                                           "training different models",
                                           what, r, all[0], all[r]));
}

}  // namespace mrplan
