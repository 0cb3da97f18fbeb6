#pragma once
// A run's checkpoints, in checkpoints/ of its output folder, each a generation folder published
// whole (exec/checkpoint_generations), the last `keep` of each kept:
//   run/gen-N/               state.json (the stage the run is in, the record of the stages before
//                            it) and handoff.pt (what the last finished stage handed on), world rank 0
//   stage{K}/model{J}/gen-N/ model J of stage K while it trains: module, optimizer, RNG, progress and
//                            each other rank's buffers (batch-norm statistics are per rank), written
//                            by the root of that model's group of ranks
// exec-internal: includes torch.
#include <torch/torch.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "exec/checkpoint_generations.hpp"
#include "exec/communicator.hpp"
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

// What a run's checkpoints are checked against when it resumes.
struct CheckpointIdentity {
  std::string plan_hash;
  int ranks = 1;
  int keep = 2;                   // generations kept per folder
  std::string resumed_plan_hash;  // a resume with --force: the plan the checkpoints were written for
};

struct LoadedRun {
  RunState state;
  CheckpointFacts facts;
  std::string handoff_bytes;  // empty before the first stage finished
  std::filesystem::path dir;  // the generation it came from
};

class Checkpointer {
 public:
  // `report`: this rank prints each damaged generation it skips (one rank per run).
  Checkpointer(std::filesystem::path dir, CheckpointIdentity id, bool report);
  const std::filesystem::path& dir() const { return dir_; }

  // World rank 0: the run's state and, after a stage, what it handed on, as one generation.
  void save_run(const RunState& state, torch::nn::Module* handed) const;
  // nullopt: no checkpoint here; throws when all are damaged. Removes what writers killed mid-publish left.
  std::optional<LoadedRun> load_run() const;

  // Every rank of the model's group calls it (their buffers go to the group's root, which writes).
  void save_model(size_t stage, size_t model, torch::nn::Module& module, torch::optim::Optimizer& opt,
                  const ModelProgress& progress, Communicator& group) const;
  bool has_model(size_t stage, size_t model) const;
  // Restores module (with this group rank's buffers), optimizer, the CPU generator and the progress,
  // from the newest sound generation written for this run's plan (or the resumed one's).
  void load_model(size_t stage, size_t model, torch::nn::Module& module, torch::optim::Optimizer& opt,
                  ModelProgress& progress, int group_rank) const;

  // The newest published generation of the run, for messages ("none yet" before the first).
  std::string last_good() const;

 private:
  std::filesystem::path model_unit(size_t stage, size_t model) const;
  Generation sound_or_throw(const std::filesystem::path& unit, const std::vector<std::string>& plan_hashes) const;
  std::filesystem::path dir_;
  CheckpointIdentity id_;
  bool report_;
};

std::string module_to_bytes(torch::nn::Module& module);
// `what` names the bytes' origin in errors.
void module_from_bytes(torch::nn::Module& module, const std::string& bytes, const std::string& what);
// The plan's identity in checkpoints: CRC-32 of its YAML, hex.
std::string plan_hash(const std::string& plan_yaml);

}  // namespace mrplan
