#include "exec/allreduce_microbench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "model/allreduce_cost.hpp"
#include "model/error_summary.hpp"
#include "model/errors.hpp"

namespace mrplan {

std::vector<AllreduceBenchRow> run_allreduce_bench(Communicator& comm, Communicator& host, const AllreduceBenchOptions& o,
                                                   const std::function<void(int, int)>& progress) {
  if (!(o.min_bytes >= 4) || o.max_bytes < o.min_bytes)
    fail_input("", "--min-bytes/--max-bytes", "sizes must satisfy 4 <= min <= max");
  if (o.repeats < 1 || o.warmup < 0) fail_input("", "--repeats", "at least one timed repeat");
  std::vector<double> sizes;
  for (double b = o.min_bytes; b <= o.max_bytes; b *= 2) sizes.push_back(std::floor(b / 4) * 4);
  const size_t max_count = static_cast<size_t>(sizes.back() / 4);
  std::shared_ptr<float> buf = comm.device_memory() ? cuda_buffer(max_count)
                                                    : std::shared_ptr<float>(new float[max_count](), std::default_delete<float[]>());
  std::vector<AllreduceBenchRow> rows;
  int done = 0;
  for (double bytes : sizes) {
    const size_t count = static_cast<size_t>(bytes / 4);
    std::vector<double> times;
    double spent = 0;
    for (int r = 0; r < o.warmup + o.repeats; ++r) {
      comm.barrier();
      const auto t0 = std::chrono::steady_clock::now();
      comm.allreduce_sum(buf.get(), count);
      double t[1] = {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
      host.allreduce_sum(t, 1);  // mean over ranks
      t[0] /= comm.size();
      if (r >= o.warmup) times.push_back(t[0]);
      spent += t[0];
      // every rank sees the same mean, so every rank stops at the same repeat
      if (r >= o.warmup && spent > o.max_seconds_per_size) break;
    }
    AllreduceBenchRow row;
    row.bytes = bytes;
    row.repeats = static_cast<int>(times.size());
    row.time_s = median(times);
    row.algbw_Bps = bytes / row.time_s;
    row.busbw_Bps = allreduce_bus_bandwidth(bytes, row.time_s, comm.size());
    rows.push_back(row);
    if (progress) progress(++done, static_cast<int>(sizes.size()));
  }
  return rows;
}

}  // namespace mrplan
