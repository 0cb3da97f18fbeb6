#include "exec/fused_adam.hpp"

#include <torch/version.h>

#include "model/errors.hpp"

#if TORCH_VERSION_MAJOR < 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 1)
#error "captured steps need LibTorch 2.1 or later (ATen's _fused_adam_ with a tensor learning rate)"
#endif

namespace mrplan {

FusedAdam::FusedAdam(std::vector<torch::Tensor> params, double learning_rate, double beta1, double beta2, double eps)
    : params_(std::move(params)), beta1_(beta1), beta2_(beta2), eps_(eps) {
  if (params_.empty()) fail_input("", "optimizer", "fused Adam needs at least one parameter tensor");
  const auto on = torch::TensorOptions().dtype(torch::kFloat32).device(params_.front().device());
  if (!on.device().is_cuda()) fail_input("", "--device", "fused Adam (a captured step) runs on a GPU only");
  for (const auto& p : params_) {
    exp_avg_.push_back(torch::zeros_like(p));
    exp_avg_sq_.push_back(torch::zeros_like(p));
    steps_.push_back(torch::zeros({}, on));  // float, as the fused kernel reads its counts
  }
  lr_ = torch::empty({}, on);
  set_learning_rate(learning_rate);
}

void FusedAdam::zero_grad() {
  for (auto& p : params_) p.mutable_grad() = torch::Tensor();
}

void FusedAdam::set_learning_rate(double learning_rate) { lr_.fill_(learning_rate); }

void FusedAdam::step() {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads;
  grads.reserve(params_.size());
  for (const auto& p : params_) {
    if (!p.grad().defined()) fail_input("", "optimizer", "fused Adam: a parameter has no gradient (every parameter must train)");
    grads.push_back(p.grad());
  }
  // the kernel reads the counts after this increment, as torch.optim's fused path does first
  at::_foreach_add_(steps_, 1);
  at::_fused_adam_(params_, grads, exp_avg_, exp_avg_sq_, /*max_exp_avg_sqs=*/{}, steps_, lr_, beta1_, beta2_, /*weight_decay=*/0.0,
                   eps_, /*amsgrad=*/false, /*maximize=*/false);
}

}  // namespace mrplan
