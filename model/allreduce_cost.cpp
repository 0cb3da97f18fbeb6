#include "model/allreduce_cost.hpp"

#include <algorithm>
#include <cmath>

#include "model/nccl_allreduce.hpp"

namespace mrplan {

const char* to_string(AllreduceAlgo a) {
  switch (a) {
    case AllreduceAlgo::ring: return "ring";
    case AllreduceAlgo::tree: return "tree";
    case AllreduceAlgo::hierarchical: return "hierarchical";
  }
  return "?";
}

double ring_allreduce_s(double bytes, int p, const LinkLevel& link) {
  if (p <= 1) return 0;
  const double steps = 2.0 * (p - 1);
  return steps * link.alpha_s + steps / p * bytes / link.bandwidth_Bps;
}

double tree_allreduce_s(double bytes, int p, const LinkLevel& link) {
  if (p <= 1) return 0;
  return 2.0 * std::ceil(std::log2(static_cast<double>(p))) * link.alpha_s + 2.0 * bytes / link.bandwidth_Bps;
}

double hierarchical_allreduce_s(double bytes, int nodes, int gpus_per_node, const LinkLevel& intra,
                                const LinkLevel& inter) {
  const int g = std::max(1, gpus_per_node);
  // reduce-scatter and allgather inside the node: (g-1) steps of n/g each
  const double intra_s = g > 1 ? 2.0 * ((g - 1) * intra.alpha_s + (g - 1.0) / g * bytes / intra.bandwidth_Bps) : 0.0;
  LinkLevel shared = inter;
  shared.bandwidth_Bps = inter.bandwidth_Bps / g;  // g concurrent rings share one NIC
  return intra_s + ring_allreduce_s(bytes / g, nodes, shared);
}

AllreduceTime best_allreduce(double bytes, int gpus, int gpus_per_node, const CommParams& comm) {
  if (gpus <= 1 || bytes <= 0) return {0.0, AllreduceAlgo::ring};
  auto scaled = [&](LinkLevel l) {
    l.bandwidth_Bps *= comm.bandwidth_efficiency;
    return l;
  };
  const LinkLevel intra = scaled(comm.intra_node), inter = scaled(comm.inter_node);
  const int gpn = std::min(gpus, std::max(1, gpus_per_node));
  const int nodes = (gpus + gpn - 1) / gpn;
  AllreduceTime best;
  if (comm.collectives == Collectives::nccl) {
    const auto n = nccl_allreduce(bytes, gpus, nodes, intra.bandwidth_Bps, inter.bandwidth_Bps);
    best = {n.seconds, n.algo == NcclAlgo::tree ? AllreduceAlgo::tree : AllreduceAlgo::ring};
  } else if (nodes == 1) {
    const double r = ring_allreduce_s(bytes, gpus, intra), t = tree_allreduce_s(bytes, gpus, intra);
    best = r <= t ? AllreduceTime{r, AllreduceAlgo::ring} : AllreduceTime{t, AllreduceAlgo::tree};
  } else {
    // a flat ring or tree is limited by the node's NIC, shared by nothing else on one ring
    const double r = ring_allreduce_s(bytes, gpus, inter);
    const double t = tree_allreduce_s(bytes, nodes, inter) + 2.0 * std::ceil(std::log2(static_cast<double>(gpn))) * intra.alpha_s;
    const double h = hierarchical_allreduce_s(bytes, nodes, gpn, intra, inter);
    best = {r, AllreduceAlgo::ring};
    if (t < best.seconds) best = {t, AllreduceAlgo::tree};
    if (h < best.seconds) best = {h, AllreduceAlgo::hierarchical};
  }
  best.seconds += comm.call_overhead_s;
  return best;
}

double broadcast_s(double bytes, int gpus, int gpus_per_node, const CommParams& comm) {
  if (gpus <= 1 || bytes <= 0) return 0.0;
  LinkLevel link = gpus > std::max(1, gpus_per_node) ? comm.inter_node : comm.intra_node;
  link.bandwidth_Bps *= comm.bandwidth_efficiency;
  const double p = gpus, hops = std::ceil(std::log2(p));
  const double tree = hops * link.alpha_s + bytes / link.bandwidth_Bps;
  const double scatter_allgather = (hops + p - 1) * link.alpha_s + 2.0 * (p - 1) / p * bytes / link.bandwidth_Bps;
  return std::min(tree, scatter_allgather) + comm.call_overhead_s;
}

double allreduce_bus_bandwidth(double bytes, double seconds, int p) {
  if (seconds <= 0 || p <= 1) return 0;
  return bytes / seconds * 2.0 * (p - 1) / p;
}

}  // namespace mrplan
