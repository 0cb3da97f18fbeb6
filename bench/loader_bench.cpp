// The loader alone on copies of one dataset (`mrplan encode`): samples/s through SampleStore and the
// prefetcher (decode and preprocessing included), with the page cache dropped and warm, and the
// bytes on disk. Usage: mrplan_loader_bench WORKLOAD FOLDER... (each a dataset folder).
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <numeric>
#include <vector>

#include "exec/loader.hpp"

using namespace mrplan;
namespace fs = std::filesystem;

namespace {

void drop_page_cache(const std::vector<std::string>& files) {
  for (const auto& f : files) {
    const int fd = ::open(f.c_str(), O_RDONLY);
    if (fd < 0) continue;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

// One pass over every sample in batches of 8; samples per second.
double pass(const std::string& dir, const DataLayout& layout) {
  const auto t0 = std::chrono::steady_clock::now();
  SampleStore store(dir, layout);
  std::vector<int64_t> ids(static_cast<size_t>(store.size()));
  std::iota(ids.begin(), ids.end(), 0);
  Prefetcher p(store, ids, 8, 2, true);
  while (p.next()) {
  }
  return static_cast<double>(store.size()) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: {} WORKLOAD FOLDER...\n", argv[0]);
    return 2;
  }
  const auto layout = layout_for(argv[1]);
  fmt::print("{:<28} {:>8} {:>10} {:>14} {:>14}\n", "folder", "codec", "MB on disk", "cold samples/s", "warm samples/s");
  for (int a = 2; a < argc; ++a) {
    const auto files = list_h5_files(argv[a]);
    double bytes = 0;
    for (const auto& f : files) bytes += static_cast<double>(fs::file_size(f));
    std::vector<double> cold, warm;
    for (int r = 0; r < 3; ++r) {
      drop_page_cache(files);
      cold.push_back(pass(argv[a], layout));
      warm.push_back(pass(argv[a], layout));
    }
    std::sort(cold.begin(), cold.end()), std::sort(warm.begin(), warm.end());
    fmt::print("{:<28} {:>8} {:>10.1f} {:>14.0f} {:>14.0f}\n", argv[a], codec_name(folder_codec(argv[a], layout)), bytes / 1e6, cold[1], warm[1]);
  }
}
