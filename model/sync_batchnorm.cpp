#include "model/sync_batchnorm.hpp"

#include <algorithm>

#include "model/allreduce_cost.hpp"

namespace mrplan {

double sync_batchnorm_iter_s(const LayerTable& table, int group, int gpus_per_node, const MachineProfile& m) {
  if (group <= 1) return 0.0;
  CommParams inline_comm = m.comm;
  inline_comm.call_overhead_s = m.comm.sync_batchnorm_call_s;
  double total_s = 0;
  for (const auto& l : table.layers) {
    if (l.kind != OpKind::batch_norm || l.out_shape.empty()) continue;
    const double stats_bytes = 2.0 * static_cast<double>(l.out_shape[0]) * 4.0;  // fp32 sums per channel
    const double collective_s = best_allreduce(stats_bytes, group, gpus_per_node, inline_comm).seconds;
    total_s += 2.0 * (collective_s + 2.0 * m.compute.kernel_overhead_s);  // forward and backward
  }
  return total_s;
}

int batchnorm_pool_asked(const Plan& plan, const ModelRun& run) {
  const int for_samples = plan.batchnorm_samples > 0 ? (plan.batchnorm_samples + run.local_batch - 1) / std::max(run.local_batch, 1) : 1;
  return std::max(plan.batchnorm_group, for_samples);
}

int batchnorm_pool_ranks(const Plan& plan, const ModelRun& run) { return std::min(batchnorm_pool_asked(plan, run), run.gpus); }

}  // namespace mrplan
