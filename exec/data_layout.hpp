#pragma once
// Where each workload's samples and labels live in its HDF5 files (the real datasets' layouts).
#include <string>
#include <vector>

namespace mrplan {

struct DataLayout {
  std::string data;      // dataset with the samples, first axis = sample (batched layout)
  std::string labels;    // dataset with the labels, first axis = sample
  int spatial_axes = 3;  // spatial axes after the sample axis; channels follow them (channel-last)
  bool channels_last = true;
  bool log1p = false;    // preprocessing: log(1 + x), as the CosmoFlow references do to counts
};

// CosmoFlow as the MRT authors' code reads it: 3Dmap (n, S, S, S, 4) and unitPar (n, 4).
// Neuron Inverter: train_frames (n, T, 4) and train_unitStar_par (n, 15); the files also hold
// val_ and test_ splits, which the backend does not read (validation ids follow the training ids).
DataLayout layout_for(const std::string& workload);

// The dataset's HDF5 files in name order; InputError if the folder has none.
std::vector<std::string> list_h5_files(const std::string& dir);

}  // namespace mrplan
