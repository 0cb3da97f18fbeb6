#include "exec/data_layout.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include "exec/hdf5_file.hpp"
#include "model/errors.hpp"

namespace mrplan {

const char* to_string(CoarsenOp op) { return op == CoarsenOp::sum ? "sum" : "mean"; }

CoarsenOp coarsen_op_from_name(const std::string& name, const std::string& where) {
  if (name == "sum") return CoarsenOp::sum;
  if (name == "mean") return CoarsenOp::mean;
  fail_input(where, "--op", fmt::format("expected mean or sum, got '{}'", name));
}

namespace {

// A workload of each layout; every cosmoflow-* reads CosmoFlow's.
constexpr std::array<const char*, 3> kLayoutWorkloads{"cosmoflow-mrt", "deepcam", "neuron-inverter"};

}  // namespace

DataLayout layout_for(const std::string& workload) {
  if (workload.starts_with("cosmoflow"))
    return {.data = "3Dmap", .labels = "unitPar", .spatial_axes = 3, .normalise = Normalise::log1p, .coarsen = CoarsenOp::sum};
  if (workload == "neuron-inverter") return {.data = "train_frames", .labels = "train_unitStar_par", .spatial_axes = 1};
  if (workload == "deepcam")  // labels: 0 background, 1 tropical cyclone, 2 atmospheric river
    return {.data = "climate/data",
            .labels = "climate/labels_0",
            .spatial_axes = 2,
            .per_sample_files = true,
            .normalise = Normalise::min_max,
            .task = Task::segmentation,
            .classes = 3};
  fail_input("", "workload",
             fmt::format("the execution backend has no data layout for '{}' yet (supported: {}; cosmoflow-mlperf reads cosmoflow-mrt's)",
                         workload, fmt::join(kLayoutWorkloads, ", ")));
}

void require_layout(const std::string& file, const std::string& workload, const std::string& what) {
  const auto layout = layout_for(workload);
  const H5File h5(file, H5File::Mode::read);
  if (h5.has(layout.data)) return;
  for (const char* other : kLayoutWorkloads)
    if (h5.has(layout_for(other).data))
      fail_input(file, layout.data, fmt::format("not found: the file holds {} samples ({}), not {}'s: pass {} {}", other,
                                                layout_for(other).data, workload, what, other));
  fail_input(file, layout.data, fmt::format("not found: the file is no {} dataset (it holds: {})", workload, fmt::join(h5.datasets(), ", ")));
}

std::string workload_of_file(const std::string& file) {
  const H5File h5(file, H5File::Mode::read);
  for (const char* w : kLayoutWorkloads)
    if (h5.has(layout_for(w).data)) return w;
  fail_input(file, "", fmt::format("holds no dataset of a layout mrplan reads ({}; it holds: {})", fmt::join(kLayoutWorkloads, ", "),
                                   fmt::join(h5.datasets(), ", ")));
}

std::vector<std::string> list_h5_files(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) fail_input(dir, "", "data folder not found (create it with `mrplan datagen`)");
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && (e.path().extension() == ".h5" || e.path().extension() == ".hdf5") &&
        e.path().filename() != kStatsFile)
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) fail_input(dir, "", "no .h5 files in the data folder");
  return files;
}

void check_codec_fits(Codec codec, const DataLayout& layout, const std::string& workload, const std::string& where) {
  if (codec == Codec::diff && layout.normalise != Normalise::min_max)
    fail_input(where, "", fmt::format("the diff codec is DeepCAM's (its decode emits min-max normalised FP16); {} data takes lut, "
                                      "deflate or raw",
                                      workload));
}

}  // namespace mrplan
