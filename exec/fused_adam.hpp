#pragma once
// Adam (Kingma & Ba 2015) as one multi-tensor kernel (ATen's _fused_adam_, what
// torch.optim.Adam(fused=True) runs), its step counts and learning rate in device tensors: the
// step can be captured in a CUDA graph and replayed, the bias corrections following the device's
// counts, and it launches a few kernels where LibTorch's Adam launches ~10 per parameter tensor
// (the optimizer phase the H200's full-size steps showed launch-bound, docs/execution.md).
// CUDA tensors and LibTorch 2.x only (exec/captured_step). exec-internal: includes torch.
#include <torch/torch.h>

#include <vector>

namespace mrplan {

class FusedAdam {
 public:
  FusedAdam(std::vector<torch::Tensor> params, double learning_rate, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8);
  // Every gradient dropped (to none, as LibTorch 2.x's zero_grad): backward allocates them anew,
  // inside a graph's pool when captured.
  void zero_grad();
  void step();
  // The rate the next steps read from the device: outside a captured step, so that a replayed
  // graph follows a schedule.
  void set_learning_rate(double learning_rate);

 private:
  std::vector<torch::Tensor> params_, exp_avg_, exp_avg_sq_, steps_;
  torch::Tensor lr_;
  double beta1_, beta2_, eps_;
};

}  // namespace mrplan
