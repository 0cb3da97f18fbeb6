#pragma once
// Test data on disk: a scratch folder per test process (emptied when made), and a dataset at two
// resolutions, res1 as generated and res2 coarsened by 2, laid out as the trainer reads them.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "exec/datagen.hpp"

namespace mrplan::testing {

inline std::filesystem::path scratch_dir(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() / ("mrplan_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

// res1 and res2 of the workload, coarsened with its layout's own operation (sums for counts).
inline void make_two_resolutions(const std::filesystem::path& dir, DatagenOptions data) {
  data.out_dir = (dir / "res1").string();
  data.progress = false;
  generate_dataset(data);
  CoarsenOptions c;
  c.in_dir = data.out_dir, c.out_dir = (dir / "res2").string(), c.factor = 2, c.threads = 1;
  c.progress = false, c.workload = data.workload;
  coarsen_dataset(c);
}

}  // namespace mrplan::testing
