#pragma once
// What a stage minimises and what its validation reports, by the layout's task: mean squared
// error for regression (CosmoFlow, Neuron Inverter); class-weighted pixel cross-entropy and mean
// intersection-over-union for segmentation (DeepCAM). exec-internal: includes torch.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "exec/data_layout.hpp"

namespace mrplan {

class SampleStore;

struct TrainingObjective {
  Task task = Task::regression;
  int classes = 0;
  torch::Tensor class_weights;  // segmentation: frequency^-1/8 per class, as the DeepCAM reference weights
};

// Segmentation weights come from the class frequencies of the first training samples' masks.
TrainingObjective make_objective(const DataLayout& layout, const SampleStore& store, int64_t train_samples);

// The metrics a task reports, the first being what the trainer prints; a plan's target.metric
// must be one of them (InputError naming the plan file otherwise).
std::vector<std::string> metric_names(Task task);
void check_target_metric(Task task, const std::string& metric, const std::string& plan_file);

torch::Tensor training_loss(const TrainingObjective& o, const torch::Tensor& output, const torch::Tensor& labels);
// The weighted cross entropy (mean over pixels, as torch's) from elementwise products and sums
// alone: training_loss uses it where deterministic kernels are asked for on a GPU, since CUDA's
// nll_loss2d adds its terms with atomics (PyTorch warns it has no deterministic implementation) and
// a DeepCAM run killed and resumed ended with other parameters than the uninterrupted one.
torch::Tensor cross_entropy_by_sums(const torch::Tensor& output, const torch::Tensor& labels, const torch::Tensor& class_weights);

// Validation is summed batch by batch (then over ranks) and only turned into metrics at the end,
// so IoU is the dataset's, not a mean of per-batch ratios.
size_t validation_sum_count(const TrainingObjective& o);
void add_validation_sums(const TrainingObjective& o, const torch::Tensor& output, const torch::Tensor& labels, double* sums);
double validation_metric(const TrainingObjective& o, const std::string& metric, const double* sums);

}  // namespace mrplan
