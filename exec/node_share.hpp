#pragma once
// MLPerf HPC's staging phase, done by the run itself (`run --stage-to DIR`): the first rank of each
// node copies into node-local storage only the sample files its node's ranks read (the node-bound
// rules of exec/sample_ids.hpp), so that each node holds 1/N of the data rather than all of it, and
// the copy is timed into the Record (staging_s) and the log (staging_start/stop) as MLPerf's are.
// Torch-free.
#include <string>
#include <vector>

#include "exec/communicator.hpp"
#include "exec/data_layout.hpp"
#include "exec/run.hpp"
#include "model/plan.hpp"

namespace mrplan {

struct NodeShare {
  std::vector<int> node_of_rank;  // every world rank's node, numbered by their first ranks
  int node = 0, nodes = 1;        // this rank's, and how many
  std::string copy_dir;           // this node's copy: res{K}/ folders as in the data folder
};

// Every world rank's host name (one gather; every rank must call it), and the distinct ones in
// the order of their first ranks: the job's nodes.
std::vector<std::string> rank_hosts(Communicator& world);
std::vector<std::string> node_names(const std::vector<std::string>& rank_hosts);

// Every world rank's node: `ranks_per_node` consecutive ranks per node where it is > 0 (the
// launcher's block placement), else by host name. Every rank must call it.
std::vector<int> nodes_of_ranks(Communicator& world, int ranks_per_node);

struct StagedCopy {
  int files = 0, kept = 0;  // copied, and already there whole (a resumed run stages again)
  double bytes = 0;         // the node's share, copied or kept
  double seconds = 0;
};
// Copies this node's share of every resolution folder the plan reads from `data_dir` into
// share.copy_dir (each file through a temporary, so that a killed copy leaves no partial file).
// InputError naming the folder where a file cannot be read or written (a full /dev/shm).
StagedCopy stage_share(const Plan& plan, const DataLayout& layout, const std::string& data_dir, const NodeShare& share);

class MlLog;
// The run's staging phase, on every rank: nodes_of_ranks, then each node's first rank copies its
// share while the others wait (every rank fails alike with the first error any node met); logged
// as staging_start/stop and kept as r.staging_s (the slowest node's copy; a resume keeps the first).
NodeShare stage_run_data(Communicator& world, const Plan& plan, const DataLayout& layout, const std::string& data_dir, const RunOptions& o,
                         MlLog& log, Record& r);

}  // namespace mrplan
