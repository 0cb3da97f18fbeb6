#pragma once
// `calibrate allreduce`'s measurement: allreduce over message sizes doubling from min to max bytes,
// warm-up then repeats, as nccl-tests times it. Torch-free.
#include <functional>
#include <vector>

#include "exec/communicator.hpp"

namespace mrplan {

struct AllreduceBenchOptions {
  double min_bytes = 4;
  double max_bytes = 256.0 * (1 << 20);
  int warmup = 2;
  int repeats = 10;
  double max_seconds_per_size = 5;  // fewer repeats for the largest sizes on slow links
};

struct AllreduceBenchRow {
  double bytes = 0;
  int repeats = 0;
  double time_s = 0;     // median over repeats of the mean over ranks
  double algbw_Bps = 0;  // bytes / time
  double busbw_Bps = 0;  // algbw * 2(p-1)/p (nccl-tests PERFORMANCE.md)
};

// Collective: every rank calls it. Buffers live where `comm` wants them (host for MPI, the current
// CUDA device for NCCL); `host` (MPI) agrees the timings. `progress(done, total)` runs on every rank.
std::vector<AllreduceBenchRow> run_allreduce_bench(Communicator& comm, Communicator& host, const AllreduceBenchOptions& options,
                                                   const std::function<void(int, int)>& progress = {});

}  // namespace mrplan
