#pragma once
// Where each workload's samples and labels live in its HDF5 files (the real datasets' layouts),
// how the references preprocess them, and what the labels mean.
#include <cstdint>
#include <string>
#include <vector>

#include "model/codec.hpp"

namespace mrplan {

enum class Normalise { none, log1p, min_max };
enum class Task { regression, segmentation };
// How `coarsen` makes a coarse voxel of a block: CosmoFlow's particle counts add up (MRT paper
// III-A); fields and time series average.
enum class CoarsenOp { mean, sum };
const char* to_string(CoarsenOp op);
CoarsenOp coarsen_op_from_name(const std::string& name, const std::string& where);

struct DataLayout {
  std::string data;      // dataset with the samples, channel-last
  std::string labels;    // dataset with the labels
  int spatial_axes = 3;  // spatial axes of a sample; channels follow them
  bool per_sample_files = false;  // DeepCAM: one sample per file, no sample axis
  Normalise normalise = Normalise::none;
  Task task = Task::regression;
  int classes = 0;  // segmentation: labels are integers in [0, classes)
  CoarsenOp coarsen = CoarsenOp::mean;
};

// Refuses `codec` for a layout its decode does not fit: `diff` decodes to min-max normalised FP16
// (DeepCAM's pipeline, preprocessing paper §IV); CosmoFlow's counts through it train to a NaN loss.
void check_codec_fits(Codec codec, const DataLayout& layout, const std::string& workload, const std::string& where);

// CosmoFlow as the MRT authors' code reads it: 3Dmap (n, S, S, S, 4) and unitPar (n, 4), log1p.
// Neuron Inverter: train_frames (n, T, 4) and train_unitStar_par (n, 15); the files also hold
// val_ and test_ splits, which the backend does not read (validation ids follow the training ids).
// DeepCAM: climate/data (H, W, 16) and climate/labels_0 (H, W) in one file per sample, min-max
// normalised with the folder's stats.h5 (climate/minval, climate/maxval per channel).
DataLayout layout_for(const std::string& workload);

// Checks that `file` holds `workload`'s samples (`what`: the option naming the workload, for the
// message); InputError naming the file, what it holds and, where it holds another workload's
// samples, the workload to name instead.
void require_layout(const std::string& file, const std::string& workload, const std::string& what);
// The workload whose samples `file` holds (the first layout whose data dataset it has); an
// InputError naming what the file holds where it is none of them.
std::string workload_of_file(const std::string& file);

// The dataset's sample files in name order (stats.h5 is not one); InputError if there are none.
std::vector<std::string> list_h5_files(const std::string& dir);

// The per-channel statistics file the DeepCAM reference reads.
inline constexpr const char* kStatsFile = "stats.h5";
inline constexpr const char* kStatsMin = "climate/minval";
inline constexpr const char* kStatsMax = "climate/maxval";

}  // namespace mrplan
