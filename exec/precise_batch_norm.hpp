#pragma once
// Batch-norm statistics recomputed before a validation pass ("PreciseBN", Wu & Johnson 2021,
// Rethinking "Batch" in BatchNorm, Sec. 3): the running averages a training step leaves behind
// weigh the last ~10 batches (momentum 0.1), so with small local batches the validation metric
// jumps from epoch to epoch with them rather than with the weights.
// exec-internal header: includes torch.
#include <torch/torch.h>

#include <vector>

namespace mrplan {

// While alive: every batch-norm layer of `model` starts its statistics afresh and averages all
// batches it sees equally (momentum none), in training mode; everything else (dropout) is in eval
// mode, and autograd is off, so the forward passes change nothing but those statistics and draw
// no random numbers. On destruction each layer gets its momentum back and the model is in eval mode.
class BatchNormRecompute {
 public:
  explicit BatchNormRecompute(torch::nn::Module& model);
  ~BatchNormRecompute();
  BatchNormRecompute(const BatchNormRecompute&) = delete;
  BatchNormRecompute& operator=(const BatchNormRecompute&) = delete;

  int layers() const { return static_cast<int>(momenta_.size()); }

 private:
  torch::nn::Module& model_;
  torch::NoGradGuard no_grad_;
  std::vector<std::pair<torch::nn::BatchNormOptions*, c10::optional<double>>> momenta_;
};

}  // namespace mrplan
