#include "exec/fused_adam.hpp"

#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <torch/version.h>

#include "model/errors.hpp"

#if TORCH_VERSION_MAJOR < 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 1)
#error "captured steps need LibTorch 2.1 or later (ATen's _fused_adam_ with a tensor learning rate)"
#endif

namespace mrplan {

namespace {
bool capturing() { return c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None; }
}  // namespace

FusedAdam::FusedAdam(std::vector<torch::Tensor> params, double learning_rate)
    : torch::optim::Adam(std::move(params), torch::optim::AdamOptions(learning_rate)) {
  const auto& ps = param_groups().front().params();
  if (ps.empty()) fail_input("", "optimizer", "fused Adam needs at least one parameter tensor");
  if (!ps.front().is_cuda()) fail_input("", "--device", "fused Adam (a captured step) runs on a GPU only");
  lr_ = torch::empty({}, torch::TensorOptions().dtype(torch::kFloat32).device(ps.front().device()));
  copy_learning_rate_to_device();
}

void FusedAdam::copy_learning_rate_to_device() { lr_.fill_(param_groups().front().options().get_lr()); }

// LibTorch's Adam state for every parameter (zeros, count 0, as its own first step makes them),
// and the device counts from the host's
void FusedAdam::add_missing_state() {
  const auto& ps = param_groups().front().params();
  if (steps_.size() == ps.size()) return;
  steps_.clear();
  for (const auto& p : ps) {
    auto& slot = state_[p.unsafeGetTensorImpl()];
    if (!slot) {
      auto s = std::make_unique<torch::optim::AdamParamState>();
      s->step(0);
      s->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      s->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      slot = std::move(s);
    }
    const auto& s = static_cast<torch::optim::AdamParamState&>(*slot);
    steps_.push_back(torch::full({}, static_cast<double>(s.step()), lr_.options()));
  }
}

torch::Tensor FusedAdam::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure) {
    torch::AutoGradMode grad(true);
    loss = closure();
  }
  const bool captured = capturing();
  if (!captured) copy_learning_rate_to_device();
  add_missing_state();
  const auto& ps = param_groups().front().params();
  std::vector<torch::Tensor> params, grads, exp_avg, exp_avg_sq, steps;
  for (size_t i = 0; i < ps.size(); ++i) {
    if (!ps[i].grad().defined()) continue;  // frozen: neither moved nor counted, as LibTorch's Adam
    auto& s = static_cast<torch::optim::AdamParamState&>(*state_.at(ps[i].unsafeGetTensorImpl()));
    params.push_back(ps[i]), grads.push_back(ps[i].grad()), exp_avg.push_back(s.exp_avg()), exp_avg_sq.push_back(s.exp_avg_sq());
    steps.push_back(steps_[i]);
    if (!captured) s.step(s.step() + 1);  // a replay counts on the device only (save brings it back)
  }
  if (params.empty()) return loss;
  const auto& o = static_cast<const torch::optim::AdamOptions&>(param_groups().front().options());
  // the kernel reads the counts after this increment, as torch.optim's fused path does first
  at::_foreach_add_(steps, 1);
  at::_fused_adam_(params, grads, exp_avg, exp_avg_sq, /*max_exp_avg_sqs=*/{}, steps, lr_, std::get<0>(o.betas()), std::get<1>(o.betas()),
                   o.weight_decay(), o.eps(), /*amsgrad=*/false, /*maximize=*/false);
  return loss;
}

void FusedAdam::save(torch::serialize::OutputArchive& archive) const {
  const auto& ps = param_groups().front().params();
  for (size_t i = 0; i < ps.size() && i < steps_.size(); ++i)
    if (auto it = state_.find(ps[i].unsafeGetTensorImpl()); it != state_.end())
      static_cast<torch::optim::AdamParamState&>(*it->second).step(static_cast<int64_t>(steps_[i].item<float>()));
  torch::optim::Adam::save(archive);
}

void FusedAdam::load(torch::serialize::InputArchive& archive) {
  torch::optim::Adam::load(archive);
  steps_.clear();  // the next step takes the loaded counts
}

}  // namespace mrplan
