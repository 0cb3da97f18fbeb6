// Run under mpirun: the gradient allreduce of cosmoflow-mrt as GradSync issues it (25 MB buckets,
// reverse layer order) against one MPI_Allreduce of the same bytes; bus bandwidth as nccl-tests
// defines it (busbw = algbw * 2(p-1)/p, algbw = bytes / time).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "exec/communicator.hpp"
#include "model/allreduce_cost.hpp"
#include "model/builtin_workloads.hpp"
#include "model/layer_table.hpp"

using namespace mrplan;

int main() {
  auto comm = make_mpi_communicator();
  const auto spec = builtin_workload("cosmoflow-mrt");
  const auto table = resolve(spec, spec.input_spatial, 1);
  // bucket sizes exactly as GradSync packs them: reverse order, close a bucket at >= 25 MB
  std::vector<size_t> buckets;
  size_t cur = 0, total = 0;
  for (size_t i = table.layers.size(); i-- > 0;) {
    cur += static_cast<size_t>(table.layers[i].params);
    if (cur * 4.0 >= 25e6) buckets.push_back(cur), cur = 0;
  }
  if (cur) buckets.push_back(cur);
  for (auto b : buckets) total += b;
  std::vector<float> buf(total, 1.0f);
  auto time_it = [&](auto&& f) {
    std::vector<double> t;
    for (int r = 0; r < 12; ++r) {
      comm->barrier();
      const auto t0 = std::chrono::steady_clock::now();
      f();
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin() + 2, t.end());  // first two are warm-up
    return t[2 + (t.size() - 2) / 2];
  };
  const double single = time_it([&] { comm->allreduce_sum(buf.data(), buf.size()); });
  const double bucketed = time_it([&] {
    size_t off = 0;
    for (auto b : buckets) comm->allreduce_sum(buf.data() + off, b), off += b;
  });
  const double bytes = total * 4.0;
  const int p = comm->size();
  if (comm->rank() == 0) {
    fmt::print("allreduce of cosmoflow-mrt gradients: {:.1f} MB, {} ranks, {} buckets\n", bytes / 1e6, p, buckets.size());
    fmt::print("  single MPI_Allreduce : {:8.2f} ms  algbw {:6.2f} GB/s  busbw {:6.2f} GB/s\n", single * 1e3, bytes / single / 1e9,
               allreduce_bus_bandwidth(bytes, single, p) / 1e9);
    fmt::print("  bucketed (GradSync)  : {:8.2f} ms  algbw {:6.2f} GB/s  busbw {:6.2f} GB/s\n", bucketed * 1e3,
               bytes / bucketed / 1e9, allreduce_bus_bandwidth(bytes, bucketed, p) / 1e9);
  }
}
