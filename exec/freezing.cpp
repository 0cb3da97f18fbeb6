#include "exec/freezing.hpp"

#include "model/fusion.hpp"

namespace mrplan {

std::vector<torch::Tensor> bottom_parameters(SpecNetImpl& net, size_t last_op) {
  std::vector<torch::Tensor> out;
  for (const auto& p : net.named_parameters())
    if (in_bottom_group(net.op_index_of(p.key()), last_op)) out.push_back(p.value());
  return out;
}

void set_trainable(std::vector<torch::Tensor>& params, bool trainable) {
  for (auto& p : params) p.set_requires_grad(trainable);
}

std::vector<torch::Tensor> trainable_parameters(SpecNetImpl& net) {
  std::vector<torch::Tensor> out;
  for (const auto& p : net.parameters())
    if (p.requires_grad()) out.push_back(p);
  return out;
}

}  // namespace mrplan
