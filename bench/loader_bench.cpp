// The loader alone on copies of one dataset (`mrplan encode`): samples/s through SampleStore and the
// prefetcher (decode and preprocessing included): a first epoch with the page cache dropped (the
// store opened anew) and a later one (files open, pages cached), and the bytes on disk; with
// --profile, beside what that profile's I/O model predicts for the same reads (model/io_cost: the
// file system tier cold, the page cache warm, one rank, batches of 8).
// Usage: mrplan_loader_bench WORKLOAD [--profile P] FOLDER... (each a dataset folder).
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <numeric>
#include <optional>
#include <vector>

#include "exec/loader.hpp"
#include "model/builtin_workloads.hpp"
#include "model/errors.hpp"
#include "model/io_cost.hpp"
#include "model/profile_yaml.hpp"

using namespace mrplan;
namespace fs = std::filesystem;

namespace {

constexpr int kBatch = 8;

void drop_page_cache(const std::vector<std::string>& files) {
  for (const auto& f : files) {
    const int fd = ::open(f.c_str(), O_RDONLY);
    if (fd < 0) continue;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

// One pass over every sample of `store` in batches of 8; samples per second.
double pass(const SampleStore& store) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int64_t> ids(static_cast<size_t>(store.size()));
  std::iota(ids.begin(), ids.end(), 0);
  Prefetcher p(store, ids, kBatch, 2, true);
  while (p.next()) {
  }
  return static_cast<double>(store.size()) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// What `m` predicts for one pass over `store`, cold and warm; nullopt where the profile has no rates
// for the folder's codec.
std::optional<std::pair<double, double>> predicted(const MachineProfile& m, const std::string& workload, const SampleStore& store,
                                                   size_t files) {
  IoJob job;
  const auto& shape = store.sample_shape();
  job.sample_bytes = static_cast<double>(builtin_workload(workload).sample_bytes_per_element) *
                     static_cast<double>(std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>()));
  job.device_bytes = job.sample_bytes;
  job.local_batch = kBatch;
  job.samples_per_file = static_cast<double>(store.size()) / static_cast<double>(files);
  try {
    job.codec = codec_rates(m, store.codec(), DecoderPlace::host);
  } catch (const InputError&) {
    return std::nullopt;
  }
  job.dataset_bytes = job.sample_bytes * static_cast<double>(store.size()) / (job.codec ? job.codec->ratio : 1.0);
  auto rate = [&](TierKind tier) {
    const auto it = io_per_iteration(m, job, tier);
    return kBatch / (it.read_s + it.decode_s);
  };
  return std::pair{rate(TierKind::pfs), rate(TierKind::host_memory)};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::optional<MachineProfile> profile;
  if (const auto at = std::find(args.begin(), args.end(), "--profile"); at != args.end() && at + 1 != args.end()) {
    profile = load_profile_file(*(at + 1));
    args.erase(at, at + 2);
  }
  if (args.size() < 2) {
    fmt::print(stderr, "usage: {} WORKLOAD [--profile P] FOLDER...\n", argv[0]);
    return 2;
  }
  const auto layout = layout_for(args[0]);
  fmt::print("{:<28} {:>8} {:>10} {:>14} {:>14}{}\n", "folder", "codec", "MB on disk", "cold samples/s", "warm samples/s",
             profile ? fmt::format(" {:>15} {:>15}", "predicted cold", "predicted warm") : "");
  for (size_t a = 1; a < args.size(); ++a) {
    const auto files = list_h5_files(args[a]);
    double bytes = 0;
    for (const auto& f : files) bytes += static_cast<double>(fs::file_size(f));
    // cold: a first epoch (the files opened, their pages dropped); warm: a later epoch, as the trainer
    // reads it (one store for the run, its files open, their pages cached)
    std::vector<double> cold, warm;
    const SampleStore kept(args[a], layout);
    pass(kept);
    for (int r = 0; r < 3; ++r) {
      drop_page_cache(files);
      const auto t0 = std::chrono::steady_clock::now();
      const SampleStore fresh(args[a], layout);
      const double opened_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      cold.push_back(1 / (1 / pass(fresh) + opened_s / static_cast<double>(fresh.size())));
      warm.push_back(pass(kept));
    }
    std::sort(cold.begin(), cold.end()), std::sort(warm.begin(), warm.end());
    std::string model;
    if (profile) {
      const auto p = predicted(*profile, args[0], kept, files.size());
      model = p ? fmt::format(" {:>15.0f} {:>15.0f}", p->first, p->second) : fmt::format(" {:>15} {:>15}", "no rates", "no rates");
    }
    fmt::print("{:<28} {:>8} {:>10.1f} {:>14.0f} {:>14.0f}{}\n", args[a], codec_name(kept.codec()), bytes / 1e6, cold[1],
               warm[1], model);
  }
}
