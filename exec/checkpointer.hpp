#pragma once
// A run's checkpoints, in checkpoints/ of its output folder:
//   state.json        the stage the run is in and the record of the stages before it (world rank 0)
//   model.pt          what the last finished stage handed on (MRT: the coarse model; MRMF: the
//                     fused one); after the last stage, the final model
//   stage{K}/model{J}/  model J of stage K while it trains: module, optimizer, RNG and progress,
//                     written by the root of that model's group of ranks
// Every file is written under a temporary name and renamed. exec-internal: includes torch.
#include <torch/torch.h>

#include <filesystem>
#include <optional>
#include <vector>

#include "model/record.hpp"

namespace mrplan {

// Where one model's training stands in its stage; what its checkpoint holds besides module,
// optimizer and RNG.
struct ModelProgress {
  int epoch = 0;                      // epochs completed in this stage
  int total_epochs = 0;               // across the run, on this model's ranks
  std::vector<double> losses;         // mean training loss per epoch
  std::vector<double> window_losses;  // per window of iterations, where the switch rule watches those
  ModelRecord record;
};

struct RunState {
  size_t stage = 0;  // the first stage not finished (== stages.size() when the run is done)
  Record record;     // the stages before it
};

class Checkpointer {
 public:
  explicit Checkpointer(std::filesystem::path dir) : dir_(std::move(dir)) {}
  const std::filesystem::path& dir() const { return dir_; }

  void save_run(const RunState& state) const;
  std::optional<RunState> load_run() const;  // nullopt: no checkpoint here
  void save_handoff(torch::nn::Module& module) const;
  void load_handoff(torch::nn::Module& module) const;

  void save_model(size_t stage, size_t model, torch::nn::Module& module, torch::optim::Optimizer& opt,
                  const ModelProgress& progress) const;
  bool has_model(size_t stage, size_t model) const;
  // Restores module, optimizer, the CPU generator's state and the progress.
  void load_model(size_t stage, size_t model, torch::nn::Module& module, torch::optim::Optimizer& opt, ModelProgress& progress) const;

 private:
  std::filesystem::path model_dir(size_t stage, size_t model) const;
  std::filesystem::path dir_;
};

}  // namespace mrplan
