#include <gtest/gtest.h>

#include "exec/precise_batch_norm.hpp"
#include "exec/spec_network.hpp"
#include "model/builtin_workloads.hpp"

using namespace mrplan;
namespace nn = torch::nn;

TEST(PreciseBatchNorm, StatisticsAreTheEqualWeightAverageOfTheBatchesSeenAndNothingElseChanges) {
  torch::manual_seed(3);
  auto net = std::make_shared<nn::Module>();
  auto bn = net->register_module("bn", nn::BatchNorm1d(3));
  auto drop = net->register_module("drop", nn::Dropout(0.9));
  auto forward = [&](const torch::Tensor& x) { return drop->forward(bn->forward(x)); };
  net->train();
  for (int i = 0; i < 5; ++i) forward(torch::randn({4, 3}) * 5 + 7);  // stale statistics to forget
  const auto weight = bn->weight.clone();
  std::vector<torch::Tensor> batches;
  for (int i = 0; i < 3; ++i) batches.push_back(torch::randn({4, 3}) * (i + 1) + i);
  {
    BatchNormRecompute recompute(*net);
    EXPECT_EQ(recompute.layers(), 1);
    EXPECT_TRUE(bn->is_training());
    EXPECT_FALSE(drop->is_training());  // dropout off: no random numbers drawn
    for (const auto& x : batches) {
      const auto y = forward(x);
      EXPECT_FALSE(y.requires_grad());
      // batch statistics, no dropout: (x - mean) / sqrt(biased var + eps) at the initial affine (1, 0)
      const auto want = (x - x.mean(0)) / torch::sqrt(x.var(0, /*unbiased=*/false) + 1e-5);
      EXPECT_TRUE(torch::allclose(y, want, 1e-4, 1e-5));
    }
  }
  // Cumulative averages (momentum none): the mean of the batch means and of the unbiased variances
  torch::Tensor mean = torch::zeros({3}), var = torch::zeros({3});
  for (const auto& x : batches) mean += x.mean(0) / 3, var += x.var(0, /*unbiased=*/true) / 3;
  EXPECT_TRUE(torch::allclose(bn->running_mean, mean, 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(bn->running_var, var, 1e-5, 1e-6));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 3);
  ASSERT_TRUE(bn->options.momentum().has_value());
  EXPECT_DOUBLE_EQ(*bn->options.momentum(), 0.1);
  EXPECT_FALSE(net->is_training());
  EXPECT_FALSE(bn->is_training());
  EXPECT_TRUE(torch::equal(bn->weight, weight));
  EXPECT_TRUE(torch::GradMode::is_enabled());
}

TEST(PreciseBatchNorm, FindsEveryBatchNormLayerOfTheNetworks) {
  for (const auto& [name, options] : std::vector<std::pair<std::string, WorkloadOptions>>{
           {"cosmoflow-mrt", {.size = 32, .width = 0.25}}, {"deepcam", {.size = 128, .width = 0.125}}, {"neuron-inverter", {}}}) {
    const auto spec = builtin_workload(name, options);
    SpecNet net(spec, coarsened_spatial(spec, 1));
    int want = 0;
    for (const auto& l : net->table().layers) want += l.kind == OpKind::batch_norm;
    EXPECT_GT(want, 0) << name;
    BatchNormRecompute recompute(*net);
    EXPECT_EQ(recompute.layers(), want) << name;
  }
}
