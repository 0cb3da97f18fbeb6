#include "exec/captured_step.hpp"

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "model/errors.hpp"

namespace mrplan {

struct CapturedStep::Graph {
  at::cuda::CUDAGraph graph;
};

namespace {
// `to` waits for the work queued on `from` so far
void wait_for(const c10::cuda::CUDAStream& from, const c10::cuda::CUDAStream& to) {
  at::cuda::CUDAEvent done;
  done.record(from);
  done.block(to);
}
}  // namespace

CapturedStep::CapturedStep(StepFunction step, const torch::Tensor& x, const torch::Tensor& y, int warmups)
    : graph_(std::make_unique<Graph>()), x_(x.clone()), y_(y.clone()) {
  if (!x.is_cuda()) fail_input("", "--device", "a captured step runs on a GPU only");
  const c10::cuda::CUDAGuard on_device(x.device());
  const auto caller = c10::cuda::getCurrentCUDAStream();
  const auto side = c10::cuda::getStreamFromPool();
  wait_for(caller, side);
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    for (int w = 0; w < warmups; ++w) step(x_, y_);
  }
  wait_for(side, caller);
  torch::cuda::synchronize();
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    // thread-local: the loader's threads may pin host memory meanwhile, which a global capture refuses
    graph_->graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    loss_ = step(x_, y_);
    graph_->graph.capture_end();
  }
  torch::cuda::synchronize();
}

CapturedStep::~CapturedStep() = default;

bool captured_steps_compiled() { return true; }

torch::Tensor CapturedStep::run(const torch::Tensor& x, const torch::Tensor& y) {
  x_.copy_(x, /*non_blocking=*/true);
  y_.copy_(y, /*non_blocking=*/true);
  graph_->graph.replay();
  return loss_;
}

}  // namespace mrplan
