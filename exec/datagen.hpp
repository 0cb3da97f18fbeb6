#pragma once
// `mrplan datagen` and `mrplan coarsen`: synthetic datasets in the real layouts, and 2^d block
// averaging (or summing) of every file. No torch here.
#include <cstdint>
#include <optional>
#include <string>

#include "exec/cosmo_fields.hpp"
#include "exec/data_layout.hpp"

namespace mrplan {

struct DatagenOptions {
  std::string workload = "cosmoflow-mrt";
  std::string out_dir;
  int64_t samples = 1024;
  // dense extent: 0 = 32 for CosmoFlow (S^3 voxels), 1600 time bins for Neuron Inverter, 96 rows
  // for DeepCAM (96 x 144 pixels; the real data is 768 x 1152)
  int size = 0;
  uint64_t seed = 1;
  int samples_per_file = 128;  // DeepCAM files hold one sample each, as the real dataset's do
  // CosmoFlow's binning (exec/cosmo_fields.hpp); default: real at the real samples' 128^3 and up,
  // mini below
  std::optional<CosmoCounts> counts;
  unsigned threads = 0;  // 0: all cores
  bool progress = true;
};
struct DatagenReport {
  std::string what;  // how the samples were drawn, where the workload has choices ("real counts")
  int files = 0;
  int64_t samples = 0;
  double bytes = 0;
  double seconds = 0;
};
DatagenReport generate_dataset(const DatagenOptions& options);

struct CoarsenOptions {
  std::string in_dir, out_dir;
  int factor = 2;
  std::optional<CoarsenOp> op;  // the layout's own unless given
  unsigned threads = 0;
  bool progress = true;
  std::string workload = "cosmoflow-mrt";  // picks the layout: which datasets, which axes are spatial
};
struct CoarsenReport {
  int files = 0;
  CoarsenOp op = CoarsenOp::mean;  // as applied
  double bytes_read = 0, bytes_written = 0, seconds = 0;
};
CoarsenReport coarsen_dataset(const CoarsenOptions& options);

}  // namespace mrplan
