#include "exec/precise_batch_norm.hpp"

namespace mrplan {

namespace {

template <class Impl>
bool start_afresh(torch::nn::Module& m, std::vector<std::pair<torch::nn::BatchNormOptions*, c10::optional<double>>>& momenta) {
  auto* bn = dynamic_cast<Impl*>(&m);
  if (!bn) return false;
  momenta.push_back({&bn->options, bn->options.momentum()});
  bn->reset_running_stats();
  bn->options.momentum() = c10::nullopt;  // a cumulative average: every batch counts the same
  bn->train(true);
  return true;
}

}  // namespace

BatchNormRecompute::BatchNormRecompute(torch::nn::Module& model) : model_(model) {
  model_.eval();
  for (const auto& m : model_.modules(/*include_self=*/true))
    start_afresh<torch::nn::BatchNorm1dImpl>(*m, momenta_) || start_afresh<torch::nn::BatchNorm2dImpl>(*m, momenta_) ||
        start_afresh<torch::nn::BatchNorm3dImpl>(*m, momenta_);
}

BatchNormRecompute::~BatchNormRecompute() {
  for (auto& [options, momentum] : momenta_) options->momentum() = momentum;
  model_.eval();
}

}  // namespace mrplan
