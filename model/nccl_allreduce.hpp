#pragma once
// The time NCCL's own tuner expects for an allreduce, for the algorithm (ring, tree) and protocol
// (LL, LL128, Simple) it would pick: its latency per hop and bandwidth per algorithm and protocol
// (NVIDIA NCCL 2.8, src/graph/tuning.cc: ncclTopoTuneModel, ncclTopoGetAlgoTime).
namespace mrplan {

enum class NcclAlgo { tree, ring };
enum class NcclProtocol { ll, ll128, simple };

struct NcclTime {
  double seconds = 0;
  NcclAlgo algo = NcclAlgo::ring;
  NcclProtocol protocol = NcclProtocol::simple;
};

// `ranks` GPUs on `nodes` nodes; bus bandwidths of a ring inside a node (intra_Bps, NVLink) and
// across nodes (inter_Bps, the node's NICs), as achieved.
NcclTime nccl_allreduce(double bytes, int ranks, int nodes, double intra_Bps, double inter_Bps);

}  // namespace mrplan
