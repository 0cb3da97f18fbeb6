// Loss and metrics by task, and the LAMB optimizer, against hand-computed values.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <sstream>

#include "exec/lamb.hpp"
#include "exec/objective.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

TEST(TrainingObjective, MeanIouCountsIntersectionsAndUnionsOverTheWholeSet) {
  const TrainingObjective o{.task = Task::segmentation, .classes = 3, .class_weights = torch::ones({3})};
  // one 2x2 image: labels 0 1 / 2 2, predicted 0 1 / 1 2 (logits pick the class)
  auto logits = torch::zeros({1, 3, 2, 2});
  const int pred[4] = {0, 1, 1, 2};
  for (int p = 0; p < 4; ++p) logits[0][pred[p]][p / 2][p % 2] = 5.f;
  const auto labels = torch::tensor({0.f, 1.f, 2.f, 2.f}).view({1, 2, 2});
  std::vector<double> sums(validation_sum_count(o), 0.0);
  add_validation_sums(o, logits, labels, sums.data());
  // class 0: 1/1; class 1: 1/2; class 2: 1/2
  EXPECT_NEAR(validation_metric(o, "val_iou", sums.data()), (1.0 + 0.5 + 0.5) / 3, 1e-12);
  // a second batch where class 1 is absent from labels and predictions counts towards 0 and 2 only
  auto logits2 = torch::zeros({1, 3, 2, 2});
  logits2.select(1, 0).fill_(5.f);
  add_validation_sums(o, logits2, torch::zeros({1, 2, 2}), sums.data());
  EXPECT_NEAR(validation_metric(o, "val_iou", sums.data()), (5.0 / 5 + 1.0 / 2 + 1.0 / 2) / 3, 1e-12);
  // val_loss is the mean cross-entropy per sample
  const double ce1 = torch::nn::functional::cross_entropy(logits, labels.to(torch::kLong)).item<double>();
  const double ce2 = torch::nn::functional::cross_entropy(logits2, torch::zeros({1, 2, 2}, torch::kLong)).item<double>();
  EXPECT_NEAR(validation_metric(o, "val_loss", sums.data()), (ce1 + ce2) / 2, 1e-6);
}

TEST(TrainingObjective, RegressionReportsMseAndRefusesOtherMetrics) {
  const TrainingObjective o{};
  std::vector<double> sums(validation_sum_count(o), 0.0);
  add_validation_sums(o, torch::tensor({{1.f, 2.f}, {0.f, 0.f}}), torch::tensor({{0.f, 0.f}, {0.f, 1.f}}), sums.data());
  EXPECT_NEAR(validation_metric(o, "val_mse", sums.data()), (1.0 + 4.0 + 1.0) / 4, 1e-12);
  EXPECT_NE(error_of([&] { check_target_metric(o.task, "val_iou", "plan.yaml"); })
                .find("plan.yaml: target.metric: the execution backend reports val_mse or val_loss for this workload, not 'val_iou'"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { check_target_metric(Task::segmentation, "val_iou", "p"); }), "<no error>");
}

TEST(TrainingObjective, CrossEntropyBySumsIsTorchsWeightedCrossEntropyAndItsGradient) {
  // what a deterministic GPU run trains on instead of nll_loss2d: the same value and gradient
  torch::manual_seed(3);
  const auto logits = torch::randn({2, 3, 4, 5}, torch::requires_grad());
  const auto labels = torch::randint(0, 3, {2, 4, 5}).to(torch::kFloat);
  const auto weights = torch::tensor({0.5f, 2.0f, 1.25f});
  const auto ours = cross_entropy_by_sums(logits, labels, weights);
  const auto grad = torch::autograd::grad({ours}, {logits})[0];
  namespace F = torch::nn::functional;
  const auto theirs = F::cross_entropy(logits, labels.to(torch::kLong), F::CrossEntropyFuncOptions().weight(weights));
  const auto their_grad = torch::autograd::grad({theirs}, {logits})[0];
  EXPECT_NEAR(ours.item<double>(), theirs.item<double>(), 1e-6);
  EXPECT_TRUE(torch::allclose(grad, their_grad, 1e-5, 1e-7));
  // on the CPU, where kernels are deterministic anyway, training_loss keeps torch's
  const TrainingObjective o{.task = Task::segmentation, .classes = 3, .class_weights = weights};
  EXPECT_EQ(training_loss(o, logits, labels).item<float>(), theirs.item<float>());
}

TEST(Lamb, FirstStepFollowsTheTrustRatio) {
  // step 1: bias-corrected m/sqrt(v) = sign(g); r = sign(g) + wd w; w -= lr ||w||/||r|| r
  for (double wd : {0.0, 0.1}) {
    auto w = torch::tensor({3.0, 4.0}, torch::kDouble).requires_grad_();
    Lamb opt({w}, LambOptions(0.1).weight_decay(wd).eps(0));
    w.mutable_grad() = torch::tensor({1.0, -2.0}, torch::kDouble);
    opt.step();
    const double r0 = 1 + wd * 3, r1 = -1 + wd * 4, rn = std::hypot(r0, r1);
    EXPECT_NEAR(w[0].item<double>(), 3 - 0.1 * 5 / rn * r0, 1e-12);
    EXPECT_NEAR(w[1].item<double>(), 4 - 0.1 * 5 / rn * r1, 1e-12);
  }
  auto zero = torch::zeros({2}, torch::kDouble).requires_grad_();  // ||w|| = 0: trust ratio 1
  Lamb opt({zero}, LambOptions(0.5).weight_decay(0).eps(0));
  zero.mutable_grad() = torch::tensor({2.0, -3.0}, torch::kDouble);
  opt.step();
  EXPECT_NEAR(zero[0].item<double>(), -0.5, 1e-12);
  EXPECT_NEAR(zero[1].item<double>(), 0.5, 1e-12);
}

TEST(Lamb, StateRoundTripsThroughACheckpoint) {
  auto run = [](int steps, bool reload) {
    torch::manual_seed(3);
    auto w = torch::randn({4, 3}).requires_grad_();
    auto opt = std::make_unique<Lamb>(std::vector<torch::Tensor>{w}, LambOptions(0.01));
    for (int s = 0; s < steps; ++s) {
      if (reload && s == steps / 2) {  // save, rebuild, load: the moments and step count survive
        std::stringstream buf;
        torch::serialize::OutputArchive out;
        opt->save(out);
        out.save_to(buf);
        opt = std::make_unique<Lamb>(std::vector<torch::Tensor>{w}, LambOptions(0.01));
        torch::serialize::InputArchive in;
        in.load_from(buf);
        opt->load(in);
      }
      opt->zero_grad();
      (w * w * (s + 1)).sum().backward();
      opt->step();
    }
    return w.detach().clone();
  };
  EXPECT_TRUE(torch::equal(run(6, false), run(6, true)));
}
