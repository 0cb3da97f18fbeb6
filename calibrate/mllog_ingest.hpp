#pragma once
// `mrplan ingest-mllog`: MLPerf HPC result logs (rounds v1.0-v3.0, any submitter) and mrplan's own
// logs as measured Records, so published runs can calibrate (`calibrate records`) and validate.
#include <optional>
#include <string>

#include "model/plan.hpp"
#include "model/record.hpp"

namespace mrplan {

struct MllogOptions {
  std::string machine;      // the plan_spec's machine (built-in name or profile YAML); empty: the log's platform
  std::optional<int> gpus;  // for a log that gives neither number_of_nodes x accelerators_per_node nor number_of_ranks,
                            // or one instance of a weak-scaling run whose log gives the whole system's
  std::optional<Precision> precision;  // for a log without precision_mode (what the submitter's code is known to run)
  std::optional<CommFramework> framework;  // the gradient allreduce's library, which no log says (MXNet and TensorFlow submissions run Horovod)
  std::string software;  // the ML framework, which no log says (its system description's: software_name)
};

// Keeps the benchmark (as mrplan's workload), global and local batch, nodes and accelerators per
// node, train/eval samples, precision and optimizer, per-epoch times with the evaluation pass
// apart, staging, and the accuracy metric in its direction; writes the plan_spec validate
// re-predicts where mrplan has the benchmark's workload. Keys it does not interpret land in
// Record.log_keys. Contradictions (two runs, run_stop before run_start, negative counts) are
// refused naming the file and line.
Record record_from_mllog(const std::string& text, const std::string& file, const MllogOptions& options = {});
Record load_mllog_file(const std::string& path, const MllogOptions& options = {});

}  // namespace mrplan
