#include "exec/lamb.hpp"

#include <torch/optim/serialize.h>

#include "model/errors.hpp"

namespace mrplan {

void LambOptions::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(beta1);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(beta2);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(eps);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(weight_decay);
}
void LambOptions::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, beta1);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, beta2);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, eps);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, weight_decay);
}
void LambParamState::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(step);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg_sq);
}
void LambParamState::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(int64_t, step);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, exp_avg);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, exp_avg_sq);
}

Lamb::Lamb(std::vector<torch::Tensor> params, LambOptions defaults)
    : Optimizer({torch::optim::OptimizerParamGroup(std::move(params))}, std::make_unique<LambOptions>(defaults)) {
  if (!(defaults.lr() >= 0)) fail_input("", "learning_rate", "LAMB needs a learning rate >= 0");
  if (!(defaults.beta1() >= 0 && defaults.beta1() < 1 && defaults.beta2() >= 0 && defaults.beta2() < 1))
    fail_input("", "optimizer", "LAMB betas must lie in [0, 1)");
  if (!(defaults.eps() >= 0 && defaults.weight_decay() >= 0)) fail_input("", "optimizer", "LAMB eps and weight decay must be >= 0");
}

torch::Tensor Lamb::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure) {
    torch::AutoGradMode enable(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const LambOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const auto& g = p.grad();
      const auto key = c10::guts::to_string(p.unsafeGetTensorImpl());
      auto it = state_.find(key);
      if (it == state_.end()) {
        auto s = std::make_unique<LambParamState>();
        s->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        s->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        it = state_.emplace(key, std::move(s)).first;
      }
      auto& s = static_cast<LambParamState&>(*it->second);
      s.step(s.step() + 1);
      // m, v as in Adam, bias-corrected (Algorithm 2, lines 6-8)
      s.exp_avg().mul_(o.beta1()).add_(g, 1 - o.beta1());
      s.exp_avg_sq().mul_(o.beta2()).addcmul_(g, g, 1 - o.beta2());
      const double c1 = 1 - std::pow(o.beta1(), static_cast<double>(s.step()));
      const double c2 = 1 - std::pow(o.beta2(), static_cast<double>(s.step()));
      auto update = (s.exp_avg() / c1) / ((s.exp_avg_sq() / c2).sqrt_().add_(o.eps()));
      if (o.weight_decay() > 0) update.add_(p, o.weight_decay());
      // trust ratio ||w|| / ||r||, 1 where either norm is zero (line 9)
      const auto w_norm = p.norm(), u_norm = update.norm();
      const auto trust = torch::where(w_norm.gt(0).logical_and(u_norm.gt(0)), w_norm / u_norm, torch::ones_like(w_norm));
      p.sub_(update * trust * o.lr());
    }
  }
  return loss;
}

void Lamb::save(torch::serialize::OutputArchive& archive) const {
  torch::optim::serialize<LambParamState, LambOptions>(archive, *this);
}
void Lamb::load(torch::serialize::InputArchive& archive) {
  torch::optim::serialize<LambParamState, LambOptions>(archive, *this);
}

}  // namespace mrplan
