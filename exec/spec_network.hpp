#pragma once
// A LibTorch module built from the same NetworkSpec the simulator resolves into a LayerTable:
// one op list, so the two cannot drift (tests/exec/spec_network_test.cpp holds them together).
// exec-internal header: includes torch.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "model/layer_table.hpp"
#include "model/network_spec.hpp"

namespace mrplan {

struct OpTiming {
  std::string op;
  double fwd_s = 0;
  double bwd_s = 0;  // input and weight gradients
};

class SpecNetImpl : public torch::nn::Module {
 public:
  // `spatial`: the input size this model trains at; `coarse_output_factor` > 1 appends the
  // coarse model's nearest-neighbour upsample (MRT III-B).
  SpecNetImpl(const NetworkSpec& spec, const std::vector<int64_t>& spatial, int64_t coarse_output_factor = 1);

  torch::Tensor forward(const torch::Tensor& x);
  // Output of every op, in spec order (for shape checks).
  std::vector<torch::Tensor> forward_all(const torch::Tensor& x);

  // Each op timed alone on its real input (median of `repeats`, after `warmups` untimed runs that
  // warm caches and allocators), for `calibrate compute`.
  std::vector<OpTiming> time_ops(const torch::Tensor& x, int repeats, int warmups = 1);

  const LayerTable& table() const { return table_; }  // resolved at batch 1
  // Torch's name for an op's submodule (torch forbids '.' in module names).
  static std::string module_name(const std::string& op_name);
  // Ops whose parameters MRT transfers coarse -> dense (Op::transfer).
  std::vector<std::string> transferable_parameter_names() const;
  // Index in the spec's op list of the op a parameter or buffer ("conv1.weight") belongs to.
  size_t op_index_of(const std::string& parameter_name) const;

 private:
  struct Node {
    Op op;
    std::vector<int> inputs;  // node indices; -1 = the network input
    torch::nn::AnyModule module;
    bool has_module = false;
  };
  torch::Tensor apply(Node& n, const std::vector<torch::Tensor>& inputs);
  static std::vector<torch::Tensor> inputs_of(const Node& n, const torch::Tensor& x, const std::vector<torch::Tensor>& out);
  LayerTable table_;
  std::vector<Node> nodes_;
};
TORCH_MODULE(SpecNet);

}  // namespace mrplan
