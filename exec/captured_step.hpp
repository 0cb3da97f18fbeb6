#pragma once
// A whole training step (forward, loss, backward, optimizer) captured as one CUDA graph after
// eager warm-up steps, then replayed: one launch a step instead of one per kernel, for the steps
// whose GPU work is shorter than their launches (PyTorch's CUDA semantics notes, "whole-network
// capture"). Each batch is copied into static input buffers; the graph keeps its own memory pool.
// The step's optimizer must keep its state on the device (exec/fused_adam). A CUDA LibTorch 2.x
// build only (exec/CMakeLists.txt). exec-internal: includes torch.
#include <torch/torch.h>

#include <functional>
#include <memory>

namespace mrplan {

// Whether this build has them (a CUDA LibTorch 2.1+): `run --capture` refuses at its start otherwise.
bool captured_steps_compiled();

// One step on batch (x, y) that returns its loss; run eagerly for the warm-ups, then captured.
using StepFunction = std::function<torch::Tensor(const torch::Tensor& x, const torch::Tensor& y)>;

// The training step a capture records: the gradients dropped (backward then allocates them inside
// the graph's pool), `loss_of(x, y)`, backward, the optimizer's step; the loss detached.
inline StepFunction training_step(StepFunction loss_of, torch::optim::Optimizer& opt) {
  return [loss_of = std::move(loss_of), &opt](const torch::Tensor& x, const torch::Tensor& y) {
    opt.zero_grad();
    auto loss = loss_of(x, y);
    loss.backward();
    opt.step();
    return loss.detach();
  };
}

class CapturedStep {
 public:
  // `warmups` eager steps on (x, y) on a side stream, as capture needs, so that the allocator's,
  // cuBLAS's and cuDNN's first-use work stays out of the graph; they train the model. Then one
  // step is captured (it does not run).
  CapturedStep(StepFunction step, const torch::Tensor& x, const torch::Tensor& y, int warmups);
  ~CapturedStep();
  CapturedStep(const CapturedStep&) = delete;
  CapturedStep& operator=(const CapturedStep&) = delete;
  // Copies the batch into the static inputs and replays the step; its loss, on the device.
  torch::Tensor run(const torch::Tensor& x, const torch::Tensor& y);

 private:
  struct Graph;
  std::unique_ptr<Graph> graph_;
  torch::Tensor x_, y_, loss_;
};

}  // namespace mrplan
