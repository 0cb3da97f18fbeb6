#include "exec/run_context.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "exec/captured_step.hpp"
#include "exec/device_decoder.hpp"
#include "exec/spec_network.hpp"
#include "model/errors.hpp"
#include "model/layer_table.hpp"

namespace mrplan {

namespace fs = std::filesystem;

std::string resolve_data_dir(const Plan& plan, const RunOptions& o) {
  std::string d = !o.data_dir.empty() ? o.data_dir : plan.data_dir;
  if (d.empty()) fail_input(plan.source_file, "data.dir", "the plan names no data folder (add data: {dir: ...} or pass --data)");
  fs::path p(d);
  if (p.is_relative() && o.data_dir.empty() && !plan.source_file.empty() && !fs::exists(p))
    p = fs::path(plan.source_file).parent_path() / p;
  return p.string();
}

std::string resolve_pretrained(const Plan& plan, const Pretrained& pre) {
  fs::path p(pre.checkpoint);
  if (p.is_relative() && !plan.source_file.empty() && !fs::exists(p)) p = fs::path(plan.source_file).parent_path() / p;
  return p.string();
}

torch::Device pick_device(DeviceKind want, TensorComm tensor_comm, Communicator& comm) {
  const bool gpu = torch::cuda::is_available();
  if (want == DeviceKind::cuda && !gpu) fail_input("", "--device", "cuda was asked for but LibTorch sees no GPU (or is a CPU build)");
  if (want == DeviceKind::cpu || !gpu) {
    if (tensor_comm == TensorComm::nccl) fail_input("", "--comm", "nccl reduces GPU memory, and this run trains on the CPUs: use --comm mpi or auto");
    return torch::Device(torch::kCPU);
  }
  const int gpus = static_cast<int>(torch::cuda::device_count());
  if (comm.size() > 1 && tensor_comm != TensorComm::mpi) {
    if (!nccl_compiled())
      fail_input("", "--device", "several ranks on GPUs need NCCL, which this build lacks; use --comm mpi (through host memory), --device cpu, or rebuild with CUDA");
    // every rank learns the most ranks any node holds, so that all refuse alike rather than some
    // waiting in NCCL's set-up for ranks that gave up (NCCL 2.5+ refuses two ranks on one GPU)
    std::vector<int> local(static_cast<size_t>(comm.size()));
    const int mine = comm.local_rank();
    comm.allgather_bytes(&mine, sizeof mine, local.data());
    const int per_node = *std::max_element(local.begin(), local.end()) + 1;
    if (per_node > gpus)
      fail_input("", "--comm", fmt::format("{} ranks on a node share its {} GPU(s), and NCCL refuses two ranks on one GPU: start one rank per "
                                           "GPU, or pass --comm mpi (gradients through host memory)", per_node, gpus));
  }
  return torch::Device(torch::kCUDA, static_cast<torch::DeviceIndex>(comm.local_rank() % gpus));
}

void check_capture(const Plan& plan, const torch::Device& device) {
  if (!captured_steps_compiled())
    fail_input("", "--capture", "this mrplan-exec was built against a LibTorch without CUDA graphs: build against a CUDA LibTorch 2.1+");
  if (!device.is_cuda()) fail_input("", "--capture", "captured steps are CUDA graphs: run on a GPU (--device cuda)");
  check_capture_plan(plan);
}

void check_capture_plan(const Plan& plan) {
  for (const auto& st : plan.stages)
    for (const auto& m : st.models) {
      const std::string where = st.models.size() == 1 ? fmt::format("stage '{}'", st.name) : fmt::format("stage '{}' model '{}'", st.name, m.name);
      // one rank: the gradients' allreduce (NCCL or MPI) would sit inside the graph
      if (m.gpus > 1) fail_input(plan.source_file, "gpus", fmt::format("{} trains on {} GPUs: --capture needs one rank a model", where, m.gpus));
      if (m.optimizer != Optimizer::adam)
        fail_input(plan.source_file, "optimizer",
                   fmt::format("{} uses {}: --capture runs Adam only (its state on the device, exec/fused_adam)", where, to_string(m.optimizer)));
      if (m.pretrained && m.pretrained->freeze_epochs > 0)
        fail_input(plan.source_file, "pretrained.freeze_epochs", fmt::format("{} freezes layers: --capture needs every layer training", where));
    }
}

void batch_to_device(const RunContext& ctx, const SampleStore& store, Batch& b) {
  const bool cuda = ctx.device.is_cuda();
  if (!b.encoded.empty()) {
    std::vector<int64_t> shape{static_cast<int64_t>(b.encoded.size())};
    shape.insert(shape.end(), store.sample_shape().begin(), store.sample_shape().end());
    b.x = torch::empty(shape, torch::TensorOptions().device(ctx.device));
    float* x = b.x.data_ptr<float>();
    const int64_t per = b.x.numel() / shape[0];
    for (const auto& e : b.encoded) ctx.decoder->decode(e.bytes.data(), e.bytes.size(), e.shape, store.pipeline(e), x, e.where), x += per;
    b.encoded.clear();
  } else if (cuda) {
    b.x = b.x.to(ctx.device);
  }
  if (cuda) b.y = b.y.to(ctx.device);
}

SampleStore open_store(const RunContext& ctx, const ModelRun& run, const std::string& stage_name) {
  const auto& plan = ctx.plan;
  const std::string folder = fmt::format("res{}", run.resolution);
  SampleStore store((fs::path(ctx.data_dir) / folder).string(), ctx.layout, ctx.share ? (fs::path(ctx.share->copy_dir) / folder).string() : "");
  const auto spatial = coarsened_spatial(ctx.spec, run.resolution);
  std::vector<int64_t> want{ctx.spec.input_channels};
  want.insert(want.end(), spatial.begin(), spatial.end());
  if (store.sample_shape() != want)
    fail_input(ctx.data_dir, fmt::format("res{}", run.resolution),
               fmt::format("samples are {} but stage '{}' needs {}", fmt::join(store.sample_shape(), "x"), stage_name,
                           fmt::join(want, "x")));
  if (ctx.layout.task == Task::regression && store.label_shape() != std::vector<int64_t>{ctx.spec.label_elements})
    fail_input(ctx.data_dir, fmt::format("res{}/{}", run.resolution, ctx.layout.labels),
               fmt::format("labels are ({}) per sample but the network predicts {} values", fmt::join(store.label_shape(), ", "),
                           ctx.spec.label_elements));
  if (plan.train_samples + plan.validation_samples > store.size())
    fail_input(plan.source_file, "dataset",
               fmt::format("{} training + {} validation samples requested, {} holds {}", plan.train_samples,
                           plan.validation_samples, ctx.data_dir, store.size()));
  return store;
}

const TrainingObjective& objective_for(RunContext& ctx, const SampleStore& store) {
  if (!ctx.objective) {
    ctx.objective = make_objective(ctx.layout, store, ctx.plan.train_samples);
    if (ctx.objective->class_weights.defined()) ctx.objective->class_weights = ctx.objective->class_weights.to(ctx.device);
  }
  return *ctx.objective;
}

SpecNet build_network(const RunContext& ctx, int resolution) {
  SpecNet net(ctx.spec, coarsened_spatial(ctx.spec, resolution), ctx.spec.coarse_upsamples_output ? resolution : 1);
  net->to(ctx.device);
  return net;
}

}  // namespace mrplan
