#pragma once
// What every part of a run shares: the plan, the ranks, the device, the network, the data folder,
// the objective and the outputs. exec-internal: includes torch.
#include <torch/torch.h>

#include <filesystem>
#include <optional>
#include <string>

#include "exec/communicator.hpp"
#include "exec/data_layout.hpp"
#include "exec/loader.hpp"
#include "exec/mllog.hpp"
#include "exec/node_share.hpp"
#include "exec/objective.hpp"
#include "exec/run.hpp"
#include "exec/run_eta.hpp"
#include "exec/spec_network.hpp"
#include "exec/watchdog.hpp"
#include "model/network_spec.hpp"

namespace mrplan {

class DeviceDecoder;

struct RunContext {
  const Plan& plan;
  const RunOptions& options;
  Communicator& world;  // every rank, host memory: scalars, records, and the fusion's broadcasts
  torch::Device device;
  NetworkSpec spec;
  DataLayout layout;
  std::string data_dir;
  std::filesystem::path out, checkpoints;
  MlLog& log;
  std::optional<TrainingObjective> objective;  // the masks are the same at every resolution: weighed once
  int rank = 0, ranks = 1;
  Watchdog* watchdog = nullptr;  // told of every step; ends a job that stalls
  EpochWork epoch_work;          // what the epoch lines' ETA prices the remaining epochs by
  std::shared_ptr<DeviceDecoder> decoder = nullptr;  // the plan's device decoder, where the run has a GPU
  std::optional<NodeShare> share;  // run --stage-to: each node reads its own staged share
};

// A batch on the run's device: decoded there by `ctx.decoder` where the prefetcher left it encoded
// (the encoded bytes cross the link), else copied (blocking: BatchPool's batches are reused).
void batch_to_device(const RunContext& ctx, const SampleStore& store, Batch& b);

// The plan's data folder, or --data; relative paths from the plan file's folder.
std::string resolve_data_dir(const Plan& plan, const RunOptions& options);
// A pretrained model's file as the data folder is found: as given, or beside the plan file.
std::string resolve_pretrained(const Plan& plan, const Pretrained& p);
// One GPU per rank (the node-local rank picks it) when asked for or, on auto, when there is one;
// ranks share a node's GPUs round robin only with --comm mpi. Collective where several ranks run on GPUs.
torch::Device pick_device(DeviceKind want, TensorComm tensor_comm, Communicator& comm);
// `run --capture`: refused unless this build has captured steps, the run is on a GPU and the plan
// passes check_capture_plan (exec/captured_step).
void check_capture(const Plan& plan, const torch::Device& device);
// Every model trains on one rank (the allreduce would sit inside the graph), with Adam (its state
// on the device, exec/fused_adam) and all its layers training; an InputError naming the first that does not.
void check_capture_plan(const Plan& plan);
// The samples model `run` of stage `stage_name` trains on (dataset folder resF/), checked against
// the network's input at that resolution and the plan's sample counts.
SampleStore open_store(const RunContext& ctx, const ModelRun& run, const std::string& stage_name);
// The objective, weighed on the first store a run opens.
const TrainingObjective& objective_for(RunContext& ctx, const SampleStore& store);
// The network of `run`: its resolution's input, the coarse output upsample where the workload has one.
SpecNet build_network(const RunContext& ctx, int resolution);

}  // namespace mrplan
