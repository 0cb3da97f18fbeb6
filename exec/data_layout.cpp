#include "exec/data_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "model/errors.hpp"

namespace mrplan {

DataLayout layout_for(const std::string& workload) {
  if (workload.starts_with("cosmoflow")) return {"3Dmap", "unitPar", 3, true, true};
  if (workload == "neuron-inverter") return {"train_frames", "train_unitStar_par", 1, true, false};
  fail_input("", "workload",
             fmt::format("the execution backend has no data layout for '{}' yet (supported: cosmoflow-mrt, cosmoflow-mlperf, "
                         "neuron-inverter)",
                         workload));
}

std::vector<std::string> list_h5_files(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) fail_input(dir, "", "data folder not found (create it with `mrplan datagen`)");
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && (e.path().extension() == ".h5" || e.path().extension() == ".hdf5")) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) fail_input(dir, "", "no .h5 files in the data folder");
  return files;
}

}  // namespace mrplan
