#pragma once
// Adam (Kingma & Ba 2015) as one multi-tensor kernel (ATen's _fused_adam_, what
// torch.optim.Adam(fused=True) runs), its step counts and learning rate in device tensors: the
// step can be captured in a CUDA graph and replayed, the bias corrections following the device's
// counts, and it launches a few kernels where LibTorch's Adam launches ~10 per parameter tensor
// (the optimizer phase the H200's full-size steps showed launch-bound, docs/execution.md). Its
// state is LibTorch Adam's, so checkpoints read and write it alike. A CUDA LibTorch 2.1+ build
// only (elsewhere constructing one throws). exec-internal: includes torch.
#include <torch/torch.h>

#include <vector>

namespace mrplan {

class FusedAdam : public torch::optim::Adam {
 public:
  FusedAdam(std::vector<torch::Tensor> params, double learning_rate);
  torch::Tensor step(LossClosure closure = nullptr) override;
  // the host's step counts brought up to the device's first: replayed steps count only there
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
  // The group's learning rate into the device tensor the kernel reads: a captured step reads it
  // there, so the trainer copies it before each replay (an eager step copies it itself).
  void copy_learning_rate_to_device();

 private:
  void add_missing_state();
  std::vector<torch::Tensor> steps_;  // per parameter, float on the device, as the kernel reads them
  torch::Tensor lr_;
};

}  // namespace mrplan
