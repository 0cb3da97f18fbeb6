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
};

// CosmoFlow as the MRT authors' code reads it: 3Dmap (n, S, S, S, 4) and unitPar (n, 4).
DataLayout layout_for(const std::string& workload);

// The dataset's HDF5 files in name order; InputError if the folder has none.
std::vector<std::string> list_h5_files(const std::string& dir);

}  // namespace mrplan
