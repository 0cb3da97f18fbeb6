#pragma once
// One model's training in one stage, data parallel over its group of ranks: restricted shuffling,
// prefetching, bucketed gradient allreduce, validation, the stop rule (model/method_rules), timed
// per iteration into the model's record and checkpointed. exec-internal: includes torch.
#include <torch/torch.h>

#include <memory>

#include "exec/checkpointer.hpp"
#include "exec/communicator.hpp"
#include "exec/run_context.hpp"
#include "exec/spec_network.hpp"

namespace mrplan {

struct ModelJob {
  size_t stage = 0, model = 0;  // indices into the plan
  Communicator& group;          // the model's ranks, host memory: scalars
  Communicator& tensors;        // the model's ranks: gradients and parameters (NCCL on GPUs)
  MlLog& log;                   // open on the group's first rank only
};

// `fused`: Adam as one kernel with its state on the device, which a captured step needs (exec/fused_adam).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(Optimizer optimizer, std::vector<torch::Tensor> params, double learning_rate,
                                                        bool fused = false);

// A fresh record for model `job.model` of its stage, as it starts.
ModelRecord start_model_record(const RunContext& ctx, const ModelJob& job, const SpecNetImpl& model, bool nccl);

enum class ModelEnd { stopped, killed };  // killed: --stop-after ended it, as if the job were killed
// Trains until the model's stop rule says so (or --stop-after), continuing from `progress`.
ModelEnd train_model(RunContext& ctx, const ModelJob& job, SpecNetImpl& model, torch::optim::Optimizer& opt,
                     ModelProgress& progress, const Checkpointer& checkpoints);

}  // namespace mrplan
