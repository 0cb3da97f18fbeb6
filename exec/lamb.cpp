#include "exec/lamb.hpp"

#include <torch/optim/serialize.h>

#include <sstream>
#include <string>
#include <type_traits>

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

namespace {
// LibTorch keys optimizer state by the parameter's TensorImpl: its address as a string up to 1.13,
// the pointer itself in 2.x
template <class Key>
Key state_key(const torch::Tensor& p) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream os;
    os << p.unsafeGetTensorImpl();
    return os.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}
}  // namespace

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
    // the whole group at once (foreach kernels): on a GPU, per-parameter ops were one launch-bound
    // kernel each, and the optimizer took 60% of a DeepCAM step
    std::vector<torch::Tensor> ps, gs, ms, vs;
    std::vector<c10::Scalar> c1s, c2s;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const auto key = state_key<std::remove_cvref_t<decltype(state_)>::key_type>(p);
      auto it = state_.find(key);
      if (it == state_.end()) {
        auto s = std::make_unique<LambParamState>();
        s->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        s->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        it = state_.emplace(key, std::move(s)).first;
      }
      auto& s = static_cast<LambParamState&>(*it->second);
      s.step(s.step() + 1);
      ps.push_back(p), gs.push_back(p.grad()), ms.push_back(s.exp_avg()), vs.push_back(s.exp_avg_sq());
      c1s.emplace_back(1 - std::pow(o.beta1(), static_cast<double>(s.step())));
      c2s.emplace_back(1 - std::pow(o.beta2(), static_cast<double>(s.step())));
    }
    if (ps.empty()) continue;
    // m, v as in Adam, bias-corrected (Algorithm 2, lines 6-8)
    at::_foreach_mul_(ms, o.beta1());
    at::_foreach_add_(ms, gs, 1 - o.beta1());
    at::_foreach_mul_(vs, o.beta2());
    at::_foreach_addcmul_(vs, gs, gs, 1 - o.beta2());
    auto update = at::_foreach_div(ms, c1s);
    auto denom = at::_foreach_div(vs, c2s);
    at::_foreach_sqrt_(denom);
    at::_foreach_add_(denom, o.eps());
    at::_foreach_div_(update, denom);
    if (o.weight_decay() > 0) at::_foreach_add_(update, ps, o.weight_decay());
    // trust ratio ||w|| / ||r||, 1 where either norm is zero (line 9), read once for the group
    const auto w_norm = torch::stack(at::_foreach_norm(ps)), u_norm = torch::stack(at::_foreach_norm(update));
    const auto trust = torch::where(w_norm.gt(0).logical_and(u_norm.gt(0)), w_norm / u_norm, torch::ones_like(w_norm))
                           .to(torch::kCPU, torch::kDouble);
    const auto* t = trust.data_ptr<double>();
    std::vector<c10::Scalar> step_scale;
    for (size_t i = 0; i < ps.size(); ++i) step_scale.emplace_back(-o.lr() * t[i]);
    at::_foreach_mul_(update, step_scale);
    at::_foreach_add_(ps, update);
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
