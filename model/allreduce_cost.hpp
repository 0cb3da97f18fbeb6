#pragma once
// Alpha-beta (Hockney) allreduce times, as NCCL would run them.
#include <string>

#include "model/machine_profile.hpp"

namespace mrplan {

enum class AllreduceAlgo { ring, tree, hierarchical };
const char* to_string(AllreduceAlgo a);

struct AllreduceTime {
  double seconds = 0;
  AllreduceAlgo algo = AllreduceAlgo::ring;
};

// Ring: reduce-scatter + allgather, 2(p-1) steps of n/p bytes (Thakur, Rabenseifner, Gropp 2005).
double ring_allreduce_s(double bytes, int p, const LinkLevel& link);
// Pipelined (double binary) tree: 2 log2(p) latency hops, each byte crosses the link twice.
double tree_allreduce_s(double bytes, int p, const LinkLevel& link);
// Intra-node reduce-scatter, inter-node ring allreduce of each GPU's shard (g rings share the
// node's NIC), intra-node allgather (Horovod/NCCL hierarchical allreduce).
double hierarchical_allreduce_s(double bytes, int nodes, int gpus_per_node, const LinkLevel& intra,
                                const LinkLevel& inter);

// The fastest of the three for this message and job size (an alpha_beta profile), or what NCCL's
// tuner picks (an nccl profile: model/nccl_allreduce), with the profile's fitted bandwidth
// efficiency and per-call overhead applied.
AllreduceTime best_allreduce(double bytes, int gpus, int gpus_per_node, const CommParams& comm);

// A broadcast of `bytes` from one GPU to `gpus` GPUs, the faster of a pipelined binomial tree
// (log2 p hops, each byte crossing the link once) and scatter + ring allgather (van de Geijn:
// 2 (p-1)/p of the bytes per link; Thakur, Rabenseifner, Gropp 2005), on the slowest level the job
// spans, with the profile's bandwidth efficiency and per-call overhead.
double broadcast_s(double bytes, int gpus, int gpus_per_node, const CommParams& comm);

// nccl-tests conventions: algbw = bytes / t; busbw = algbw * 2(p-1)/p for allreduce.
double allreduce_bus_bandwidth(double bytes, double seconds, int p);

}  // namespace mrplan
