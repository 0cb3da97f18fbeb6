#include "model/nccl_allreduce.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mrplan {

namespace {

// NCCL 2.8 src/graph/tuning.cc, in microseconds: [algorithm tree, ring][protocol LL, LL128, Simple]
constexpr double kBaseUs[2][3] = {{4.4, 4.4, 0.0}, {3.6, 10.0, 8.4}};
constexpr double kNvlinkHopUs[2][3] = {{0.52, 1.2, 28.0}, {0.47, 1.9, 3.4}};
constexpr double kNetHopUs[2][3] = {{5.0, 8.5, 50.0}, {2.7, 4.0, 9.6}};
// trees fall short of their model for medium sizes: NCCL's correction of a tree's bandwidth per
// protocol, for messages of 64 B x 2^k, k = 0..21 (larger: none)
constexpr double kTreeCorrection[3][22] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .5, .6, .6, .7, .7, .8, .9, .9, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9}};

int log2_floor(double x) { return x < 1 ? 0 : static_cast<int>(std::floor(std::log2(x))); }

// algorithm bandwidth (bytes/s) of one algorithm and protocol before the size correction
double algo_bandwidth(NcclAlgo a, NcclProtocol p, int ranks, int nodes, double bus) {
  const double ppn = static_cast<double>(ranks) / nodes;
  if (a == NcclAlgo::ring) {
    if (p == NcclProtocol::ll) bus /= 4;  // LL: half of each 8-byte line is its flag, and NCCL halves it again
    if (p == NcclProtocol::ll128) bus *= ppn < 2 ? 0.7 : 0.92;
    return bus * ranks / (2.0 * (ranks - 1));  // bus to algorithm bandwidth: 2(p-1) steps of n/p
  }
  bus *= 0.9;
  if (p == NcclProtocol::ll) bus /= 3.8;
  if (p == NcclProtocol::ll128) bus *= nodes == 1 ? 7.0 / 9.0 : 0.915;
  return bus * 0.5;  // each byte goes up and down the tree
}

double latency_s(NcclAlgo a, NcclProtocol p, int ranks, int nodes, double bytes) {
  const int ai = a == NcclAlgo::tree ? 0 : 1, pi = static_cast<int>(p);
  double intra = kNvlinkHopUs[ai][pi];
  const double inter = kNetHopUs[ai][pi];
  if (nodes > 1 && p == NcclProtocol::ll) intra *= 1.8;
  double us = kBaseUs[ai][pi];
  if (a == NcclAlgo::ring) {
    const int steps = 2 * (ranks - 1), inter_steps = 2 * (nodes - 1);
    us += (steps - inter_steps) * intra + inter_steps * (nodes > 1 ? inter : intra);
    // a large ring allreduce across nodes pays its pipeline's fill ("plateau effect of ring")
    if (p == NcclProtocol::simple && nodes > 1 && bytes >= ranks / 16.0 * 65536) us *= 1.9;
  } else {
    us += 2 * ((ranks / nodes - 1) * intra + log2_floor(nodes) * inter);
  }
  return us * 1e-6;
}

}  // namespace

NcclTime nccl_allreduce(double bytes, int ranks, int nodes, double intra_Bps, double inter_Bps) {
  if (ranks <= 1 || bytes <= 0) return {};
  nodes = std::clamp(nodes, 1, ranks);
  const double bus = nodes == 1 ? intra_Bps : inter_Bps;
  const int size_class = log2_floor(bytes / 64);
  NcclTime best{std::numeric_limits<double>::infinity()};
  for (NcclAlgo a : {NcclAlgo::tree, NcclAlgo::ring})
    for (NcclProtocol p : {NcclProtocol::ll, NcclProtocol::ll128, NcclProtocol::simple}) {
      double bw = algo_bandwidth(a, p, ranks, nodes, bus);
      if (a == NcclAlgo::tree && size_class < 22) bw *= kTreeCorrection[static_cast<int>(p)][size_class];
      const double t = latency_s(a, p, ranks, nodes, bytes) + bytes / bw;
      if (t < best.seconds) best = {t, a, p};
    }
  return best;
}

}  // namespace mrplan
