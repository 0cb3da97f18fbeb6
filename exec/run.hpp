#pragma once
// `mrplan run`: train a plan for real and write its Measurement. No torch in this header.
#include <optional>
#include <string>
#include <vector>

#include "exec/device_kind.hpp"
#include "model/plan.hpp"
#include "model/record.hpp"

namespace mrplan {

// What carries gradients and parameters between the ranks of a model on GPUs: NCCL (automatic),
// or MPI over host copies, so that several ranks can share one GPU, which NCCL refuses.
enum class TensorComm { automatic, nccl, mpi };

struct RunOptions {
  std::string out_dir;      // record.json, mllog.txt, checkpoints/
  std::string data_dir;     // overrides the plan's data.dir
  std::string stage_to;     // node-local folder: each node's share of the data is copied there first
  int ranks_per_node = 0;   // with stage_to: consecutive ranks per node; 0: by host name
  std::string resume_dir;   // continue the run whose checkpoints are here
  bool overwrite = false;   // replace a run already in out_dir (refused otherwise)
  std::vector<std::string> force;  // plan fields a resume may find changed ("stages[1].learning_rate")
  int keep_checkpoints = 2;        // generations kept per checkpoint folder
  double watchdog_s = 300;         // no progress on a rank for this long (at least) ends the job
  int threads = 0;          // intra-op threads per rank; 0: cores / ranks
  DeviceKind device = DeviceKind::automatic;
  TensorComm comm = TensorComm::automatic;
  uint64_t seed = 1;
  bool quiet = false;
  bool deterministic = false;  // GPU kernels with deterministic algorithms only (a CPU run always is)
  int stop_after_epochs = 0;  // testing aid: stop (as if killed) after this many epochs in total
  std::string version;        // the program's, for the Record's provenance
  std::string profile_file;   // a profile of this machine: the header prints the plan's predicted time on it
  struct Prediction {
    double time_s = 0;
    bool reaches_target = false;
  };
  std::optional<Prediction> predicted;  // the plan on profile_file (the command line simulates it)
};

// Runs every stage of the plan on the ranks mpirun started. Rank 0 writes the outputs.
Record run_plan(const Plan& plan, const RunOptions& options);

}  // namespace mrplan
