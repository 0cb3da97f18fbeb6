// Builds against a LibTorch without CUDA 2.1+ (Debian's CPU one): captured steps and the fused
// Adam they need are refused where asked for (`run --capture` refuses first, exec/run_context).
#include "exec/captured_step.hpp"
#include "exec/fused_adam.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {
[[noreturn]] void not_built() {
  fail_input("", "--capture", "this mrplan-exec was built against a LibTorch without CUDA graphs: build against a CUDA LibTorch 2.1+");
}
}  // namespace

bool captured_steps_compiled() { return false; }

struct CapturedStep::Graph {};
CapturedStep::CapturedStep(StepFunction, const torch::Tensor&, const torch::Tensor&, int) { not_built(); }
CapturedStep::~CapturedStep() = default;
torch::Tensor CapturedStep::run(const torch::Tensor&, const torch::Tensor&) { not_built(); }

FusedAdam::FusedAdam(std::vector<torch::Tensor> params, double learning_rate)
    : torch::optim::Adam(std::move(params), torch::optim::AdamOptions(learning_rate)) {
  not_built();
}
torch::Tensor FusedAdam::step(LossClosure) { not_built(); }
void FusedAdam::save(torch::serialize::OutputArchive&) const { not_built(); }
void FusedAdam::load(torch::serialize::InputArchive&) { not_built(); }
void FusedAdam::copy_learning_rate_to_device() { not_built(); }

}  // namespace mrplan
