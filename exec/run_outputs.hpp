#pragma once
// What a run leaves behind when it ends: its totals, the log's run_stop, the final model and the
// Record (rank 0 writes them), and the summary it prints. Torch-free: the model comes as bytes.
#include <filesystem>
#include <string>

#include "exec/mllog.hpp"
#include "model/plan.hpp"
#include "model/record.hpp"

namespace mrplan {

// The run's totals: it reached the target when its last stage did (`killed`: --stop-after ended it).
void add_totals(const Plan& plan, Record& r, bool killed);

// What the run did, once (rank 0), after its per-epoch lines.
void print_summary(const Record& r);

// Rank 0 at the end: the log's run_stop, the one time to target, the final model (`final_model`:
// nullptr for a run stopped as if killed), the Record.
void write_run_outputs(const std::filesystem::path& out, MlLog& log, Record& r, const std::string* final_model);

// A finished run resumed: what a kill after its last checkpoint kept it from writing (the log's
// run_stop, the final model, the record) is written now, and a final model or record damaged since
// (a flipped byte, a truncated file) is written again from the last checkpoint.
void finish_outputs(const std::filesystem::path& out, Record& r, const std::string& final_model_bytes);

// A run that fails still ends its log (MLPerf HPC rules: run_stop, aborted), once, by whichever rank
// reports the error: the log is rank 0's, closed by then.
void end_log_aborted(const std::filesystem::path& mllog);

}  // namespace mrplan
