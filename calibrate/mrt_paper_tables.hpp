#pragma once
// The published numbers of the MRT paper (Wang et al., Tables I-VIII), as data.
#include <string>
#include <vector>

namespace mrplan {

struct PaperValue {
  std::string table;     // "I" .. "VIII"
  std::string machine;   // summit | cori-gpu | all (epochs and iterations do not depend on it)
  int gpus = 0;
  std::string app;       // cosmoflow | deepcam
  std::string dataset;   // coarse | dense | mrt | mrt-coarse | mrt-dense
  std::string quantity;  // io_s comm_s compute_s epoch_s (per epoch), epochs, iterations, total_s
  double value = 0;
  // Calibration rows: CosmoFlow at 32 GPUs, DeepCAM at 64 GPUs (the smallest counts).
  bool used_for_calibration() const;
};

const std::vector<PaperValue>& mrt_paper_values();

}  // namespace mrplan
