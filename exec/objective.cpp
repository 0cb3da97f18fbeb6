#include "exec/objective.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "exec/loader.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {
constexpr int64_t kWeightSamples = 32;   // masks read to estimate the class frequencies
constexpr double kWeightPower = -0.125;  // mlcommons/hpc deepcam train.py: weight = frequency^-0.125
}  // namespace

TrainingObjective make_objective(const DataLayout& layout, const SampleStore& store, int64_t train_samples) {
  TrainingObjective o;
  o.task = layout.task;
  o.classes = layout.classes;
  if (o.task != Task::segmentation) return o;
  std::vector<double> count(static_cast<size_t>(o.classes), 0.0);
  std::vector<float> y(static_cast<size_t>(store.label_size()));
  const int64_t n = std::min(kWeightSamples, train_samples);
  for (int64_t id = 0; id < n; ++id) {
    store.read_labels(id, y.data());
    for (float v : y) count[static_cast<size_t>(v)] += 1;
  }
  const double total = static_cast<double>(n * store.label_size());
  std::vector<float> w;
  for (double c : count) w.push_back(static_cast<float>(std::pow(std::max(c, 1.0) / total, kWeightPower)));
  o.class_weights = torch::tensor(w);
  return o;
}

std::vector<std::string> metric_names(Task task) {
  if (task == Task::segmentation) return {"val_iou", "val_loss"};
  return {"val_mse", "val_loss"};
}

void check_target_metric(Task task, const std::string& metric, const std::string& plan_file) {
  const auto names = metric_names(task);
  if (std::find(names.begin(), names.end(), metric) == names.end())
    fail_input(plan_file, "target.metric",
               fmt::format("the execution backend reports {} for this workload, not '{}'", fmt::join(names, " or "), metric));
}

torch::Tensor cross_entropy_by_sums(const torch::Tensor& output, const torch::Tensor& labels, const torch::Tensor& class_weights) {
  const int64_t classes = output.size(1);
  // one-hot over the class axis, moved beside the batch as the logits have it
  auto one_hot = torch::nn::functional::one_hot(labels.to(torch::kLong), classes).movedim(-1, 1).to(output.scalar_type());
  std::vector<int64_t> per_class(static_cast<size_t>(output.dim()), 1);
  per_class[1] = classes;
  const auto pixel_weight = (one_hot * class_weights.to(output.device(), output.scalar_type()).view(per_class)).sum(1);
  const auto picked = (torch::log_softmax(output, 1) * one_hot).sum(1);
  return -(pixel_weight * picked).sum() / pixel_weight.sum();
}

torch::Tensor training_loss(const TrainingObjective& o, const torch::Tensor& output, const torch::Tensor& labels) {
  if (o.task == Task::regression) return torch::mse_loss(output, labels);
  if (output.is_cuda() && at::globalContext().deterministicAlgorithms()) return cross_entropy_by_sums(output, labels, o.class_weights);
  namespace F = torch::nn::functional;
  return F::cross_entropy(output, labels.to(torch::kLong),
                          F::CrossEntropyFuncOptions().weight(o.class_weights.to(output.device())));
}

size_t validation_sum_count(const TrainingObjective& o) {
  // regression: squared error, samples; segmentation: loss x samples, samples, then per class
  // intersection and union pixel counts
  return o.task == Task::regression ? 2 : 2 + 2 * static_cast<size_t>(o.classes);
}

void add_validation_sums(const TrainingObjective& o, const torch::Tensor& output, const torch::Tensor& labels, double* sums) {
  const auto n = static_cast<double>(labels.size(0));
  if (o.task == Task::regression) {
    sums[0] += torch::mse_loss(output, labels, torch::Reduction::Sum).item<double>() / static_cast<double>(labels[0].numel());
    sums[1] += n;
    return;
  }
  const auto y = labels.to(torch::kLong);
  sums[0] += training_loss(o, output, labels).item<double>() * n;
  sums[1] += n;
  const auto pred = output.argmax(1);
  for (int c = 0; c < o.classes; ++c) {
    const auto p = pred.eq(c), t = y.eq(c);
    sums[2 + 2 * c] += p.logical_and(t).sum().item<double>();
    sums[3 + 2 * c] += p.logical_or(t).sum().item<double>();
  }
}

double validation_metric(const TrainingObjective& o, const std::string& metric, const double* sums) {
  if (metric == "val_loss" || (o.task == Task::regression && metric == "val_mse")) return sums[0] / std::max(1.0, sums[1]);
  if (o.task == Task::segmentation && metric == "val_iou") {  // mean over the classes present
    double iou = 0;
    int present = 0;
    for (int c = 0; c < o.classes; ++c)
      if (sums[3 + 2 * c] > 0) iou += sums[2 + 2 * c] / sums[3 + 2 * c], ++present;
    return present ? iou / present : 0.0;
  }
  fail_input("", "target.metric", fmt::format("'{}' is not a metric of this workload", metric));
}

}  // namespace mrplan
