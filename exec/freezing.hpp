#pragma once
// Transfer learning's frozen bottom layers (DESIGN.md: fine-tune, "optionally freezing layer groups
// for a while"): while frozen, their parameters take no gradient, so that backward skips their
// weight gradients and the allreduce leaves them out. exec-internal: includes torch.
#include <torch/torch.h>

#include <vector>

#include "exec/spec_network.hpp"

namespace mrplan {

// The parameters of the ops up to and including op `last_op` of the spec (model/plan_network
// checked_freeze_through).
std::vector<torch::Tensor> bottom_parameters(SpecNetImpl& net, size_t last_op);
void set_trainable(std::vector<torch::Tensor>& params, bool trainable);
// The parameters that take a gradient now: what the gradient allreduce averages.
std::vector<torch::Tensor> trainable_parameters(SpecNetImpl& net);

}  // namespace mrplan
