#include "model/sync_batchnorm.hpp"

#include "model/allreduce_cost.hpp"

namespace mrplan {

double sync_batchnorm_iter_s(const LayerTable& table, int group, int gpus_per_node, const MachineProfile& m) {
  if (group <= 1) return 0.0;
  CommParams inline_comm = m.comm;
  inline_comm.call_overhead_s = 0.0;
  double total_s = 0;
  for (const auto& l : table.layers) {
    if (l.kind != OpKind::batch_norm || l.out_shape.empty()) continue;
    const double stats_bytes = 2.0 * static_cast<double>(l.out_shape[0]) * 4.0;  // fp32 sums per channel
    const double collective_s = best_allreduce(stats_bytes, group, gpus_per_node, inline_comm).seconds;
    total_s += 2.0 * (collective_s + 2.0 * m.compute.kernel_overhead_s);  // forward and backward
  }
  return total_s;
}

}  // namespace mrplan
