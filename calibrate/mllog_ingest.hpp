#pragma once
// `mrplan ingest-mllog`: MLPerf HPC result logs (":::MLLOG {json}" lines) as measured Records, so
// published runs of your own system can calibrate or validate the models.
#include <string>

#include "model/record.hpp"

namespace mrplan {

// Reads run_start/run_stop, epoch_start/epoch_stop (metadata.epoch_num), eval_* per epoch,
// global_batch_size, number_of_nodes, accelerators_per_node; other keys are ignored. A log with
// no run_start, or a malformed :::MLLOG line, is refused naming the file and line.
Record record_from_mllog(const std::string& text, const std::string& file);
Record load_mllog_file(const std::string& path);

}  // namespace mrplan
