#include <gtest/gtest.h>

#include <cmath>

#include "model/allreduce_cost.hpp"
#include "model/builtin_profiles.hpp"
#include "model/builtin_workloads.hpp"
#include "model/compute_cost.hpp"
#include "model/io_cost.hpp"
#include "model/memory_fit.hpp"
#include "model/nccl_allreduce.hpp"
#include "model/sync_batchnorm.hpp"

using namespace mrplan;

TEST(Allreduce, RingMatchesClosedForm) {
  const LinkLevel link{2e-6, 10e9};
  const double n = 100e6;
  const int p = 8;
  // 2(p-1) alpha + 2(p-1)/p * n / B
  EXPECT_DOUBLE_EQ(ring_allreduce_s(n, p, link), 2.0 * 7 * 2e-6 + 2.0 * 7 / 8 * n / 10e9);
  EXPECT_DOUBLE_EQ(ring_allreduce_s(n, 1, link), 0.0);
}
TEST(Allreduce, TreeMatchesClosedForm) {
  const LinkLevel link{3e-6, 20e9};
  EXPECT_DOUBLE_EQ(tree_allreduce_s(1e6, 16, link), 2.0 * 4 * 3e-6 + 2.0 * 1e6 / 20e9);
}
TEST(Allreduce, BestIsNoSlowerThanAnyAlgorithm) {
  CommParams c;
  c.intra_node = {5e-6, 50e9};
  c.inter_node = {5e-6, 25e9};
  for (double n : {8.0, 4e3, 1e6, 25e6, 256e6}) {
    const auto b = best_allreduce(n, 48, 6, c);
    EXPECT_LE(b.seconds, ring_allreduce_s(n, 48, c.inter_node) + 1e-15);
    EXPECT_LE(b.seconds, hierarchical_allreduce_s(n, 8, 6, c.intra_node, c.inter_node) + 1e-15);
  }
  // small messages are latency bound: a log-depth algorithm wins
  EXPECT_NE(best_allreduce(8, 48, 6, c).algo, AllreduceAlgo::ring);
}
TEST(NcclAllreduce, ALargeMessageInANodeTakesTheSimpleRing) {
  // NCCL 2.8 tuning: base 8.4 us + 2(p-1) NVLink hops of 3.4 us; algorithm bandwidth bus * p / 2(p-1)
  const auto t = nccl_allreduce(1e9, 8, 1, 100e9, 0);
  EXPECT_EQ(t.algo, NcclAlgo::ring);
  EXPECT_EQ(t.protocol, NcclProtocol::simple);
  EXPECT_NEAR(t.seconds, (8.4 + 14 * 3.4) * 1e-6 + 1e9 * 14 / (8 * 100e9), 1e-12);
}
TEST(NcclAllreduce, ASmallMessageAtScaleTakesTheLowLatencyTree) {
  // 64 nodes of 8: base 4.4 us + 2 (7 NVLink hops x 0.52 x 1.8 + log2(64) network hops x 5.0);
  // bandwidth bus x 0.9 / 3.8 x 0.5, corrected x 0.9 for 1 kB (64 B x 2^4)
  const auto t = nccl_allreduce(1024, 512, 64, 100e9, 200e9);
  EXPECT_EQ(t.algo, NcclAlgo::tree);
  EXPECT_EQ(t.protocol, NcclProtocol::ll);
  EXPECT_NEAR(t.seconds, (4.4 + 2 * (7 * 0.52 * 1.8 + 6 * 5.0)) * 1e-6 + 1024 / (200e9 * 0.9 / 3.8 * 0.5 * 0.9), 1e-12);
}
TEST(NcclAllreduce, ARingsLatencyGrowsWithItsRanks) {
  // a bucket of 25 MB on nodes of 8: NCCL's ring, whose 2(p-1) hops make it slower with every node
  double last = 0;
  for (int nodes : {2, 4, 8, 16}) {
    const auto t = nccl_allreduce(25e6, 8 * nodes, nodes, 25e9, 26e9);
    EXPECT_GT(t.seconds, last) << nodes;
    last = t.seconds;
  }
  CommParams c;
  c.collectives = Collectives::nccl;
  c.intra_node.bandwidth_Bps = 50e9, c.inter_node.bandwidth_Bps = 50e9, c.bandwidth_efficiency = 0.5, c.call_overhead_s = 1e-4;
  EXPECT_DOUBLE_EQ(best_allreduce(25e6, 64, 8, c).seconds, nccl_allreduce(25e6, 64, 8, 25e9, 25e9).seconds + 1e-4);
}
TEST(Allreduce, BusBandwidthFollowsNcclTests) {
  // busbw = algbw * 2(p-1)/p
  EXPECT_DOUBLE_EQ(allreduce_bus_bandwidth(1e9, 0.5, 4), 2e9 * 2 * 3 / 4);
}
TEST(SyncBatchNorm, TwoCollectivesAndFourKernelsPerLayerInClosedForm) {
  MachineProfile m;
  m.gpus_per_node = 4;
  m.comm.intra_node = {5e-6, 100e9};
  m.comm.inter_node = {8e-6, 25e9};
  m.comm.call_overhead_s = 2e-3;  // the gradient hook's: not paid by inline collectives
  m.compute.kernel_overhead_s = 4e-6;
  LayerTable t;
  Layer conv;
  conv.kind = OpKind::conv;
  conv.out_shape = {64, 32, 32};
  Layer bn = conv;
  bn.kind = OpKind::batch_norm;
  Layer bn2 = bn;
  bn2.out_shape = {256, 8, 8};
  t.layers = {conv, bn, bn2};
  EXPECT_EQ(sync_batchnorm_iter_s(t, 1, 4, m), 0.0);
  // two ranks in a node: a ring of 2 steps of alpha and half the 2C fp32 sums twice (p = 2), per
  // direction, plus two kernels per direction
  auto layer_s = [&](double c) { return 2.0 * (2 * 5e-6 + 8.0 * c / 100e9 + 2 * 4e-6); };
  EXPECT_NEAR(sync_batchnorm_iter_s(t, 2, 4, m), layer_s(64) + layer_s(256), 1e-12);
  // a group across nodes pays the slower level
  EXPECT_GT(sync_batchnorm_iter_s(t, 8, 4, m), sync_batchnorm_iter_s(t, 4, 4, m));
}

TEST(Roofline, NeverFasterThanPeakOrBandwidth) {
  const auto m = builtin_hardware_profile("summit");
  for (const auto& name : builtin_workload_names()) {
    const auto spec = builtin_workload(name);
    for (int factor : {1, 2}) {
      const auto t = resolve(spec, coarsened_spatial(spec, factor), 4);
      const auto times = layer_times(t, m.compute, false);
      for (size_t i = 0; i < t.layers.size(); ++i) {
        const auto& l = t.layers[i];
        if (l.kind == OpKind::flatten) continue;
        EXPECT_GE(times[i].fwd_s, l.fwd_flops / m.compute.peak_fp32_flops) << name << " " << l.name;
        EXPECT_GE(times[i].fwd_s, (l.bytes_read + l.bytes_written) / m.compute.mem_bandwidth_Bps) << l.name;
        EXPECT_GE(times[i].bwd_s, l.bwd_flops / m.compute.peak_fp32_flops) << l.name;
      }
    }
  }
}
TEST(Roofline, SmallWorkIsLessEfficient) {
  ComputeParams c;
  c.efficiency = {{"conv3d", 0.6}};
  c.half_work_flops = 1e9;
  const double p32 = c.peak_fp32_flops;
  EXPECT_NEAR(math_efficiency(c, "conv3d", 1e9, p32), 0.3, 1e-12);  // half of peak at w = w_half
  EXPECT_LT(math_efficiency(c, "conv3d", 1e7, p32), math_efficiency(c, "conv3d", 1e11, p32));
  // a family with no fitted value takes the mean of the known ones
  EXPECT_NEAR(math_efficiency(c, "linear", 1e9, p32), 0.3, 1e-12);
}
TEST(Roofline, FasterUnitsSaturateAfterTheSameTime) {
  ComputeParams c;
  c.efficiency = {{"conv2d", 0.6}};
  c.half_work_flops = 1e9;
  c.peak_fp32_flops = 10e12;
  c.peak_fp16_flops = 80e12;
  // on units 8x faster, half of peak takes 8x the work: the same 100 us at each peak
  EXPECT_NEAR(math_efficiency(c, "conv2d", 8e9, c.peak_fp16_flops), 0.3, 1e-12);
  EXPECT_NEAR(math_efficiency(c, "conv2d", 1e9, c.peak_fp16_flops), 0.6 / 9, 1e-12);
}
TEST(Roofline, MovedToAnotherGpuAKernelTakesTheSameShareOfPeak) {
  ComputeParams c;
  c.efficiency = {{"conv2d", 0.6}};
  c.half_work_flops = 1e9;
  c.half_work_flops_by_family = {{"linear", 2e9}};
  ComputeParams moved = c;
  move_to_peaks(moved, 2.5 * c.peak_fp32_flops, 3 * c.peak_fp16_flops);
  EXPECT_DOUBLE_EQ(moved.peak_fp32_flops, 2.5 * c.peak_fp32_flops);
  EXPECT_DOUBLE_EQ(moved.peak_fp16_flops, 3 * c.peak_fp16_flops);
  EXPECT_DOUBLE_EQ(moved.half_work_flops, 2.5e9);
  EXPECT_DOUBLE_EQ(moved.half_work_flops_by_family.at("linear"), 5e9);
  // a kernel of 1 GFLOP on the old GPU and 2.5 GFLOP on the new one: the same efficiency
  EXPECT_NEAR(math_efficiency(moved, "conv2d", 2.5e9, moved.peak_fp32_flops), math_efficiency(c, "conv2d", 1e9, c.peak_fp32_flops), 1e-12);
}
TEST(Memory, ClosedFormForAdam) {
  const auto spec = builtin_workload("neuron-inverter");
  const auto t = resolve(spec, spec.input_spatial, 16);
  const auto m = estimate_memory(t, Optimizer::adam, false, 16e9);
  const double p = static_cast<double>(t.total_params());
  EXPECT_DOUBLE_EQ(m.weights_bytes + m.gradients_bytes + m.optimizer_bytes, p * (4 + 4 + 8));
  EXPECT_DOUBLE_EQ(m.activations_bytes, t.activation_bytes());
  EXPECT_TRUE(m.fits);
  EXPECT_FALSE(estimate_memory(t, Optimizer::adam, false, 1e6).fits);
}
TEST(Io, CacheAfterFirstEpochWhenShareFits) {
  auto m = builtin_hardware_profile("summit");
  IoJob job;
  job.sample_bytes = 16e6;
  job.local_batch = 8;
  job.ranks_on_node = 6;
  job.nodes = 6;
  job.dataset_bytes = 8192 * 16e6;  // 131 GB over 6 nodes fits in 512 GB x 0.5
  EXPECT_EQ(place_dataset(m, job).first_epoch, TierKind::pfs);
  EXPECT_EQ(place_dataset(m, job).later_epochs, TierKind::host_memory);
  job.nodes = 1;
  job.dataset_bytes = 1e12;
  EXPECT_EQ(place_dataset(m, job).later_epochs, TierKind::pfs);
  // PFS read: latency per file + bytes over the node's share of bandwidth
  const auto it = io_per_iteration(m, job, TierKind::pfs);
  EXPECT_NEAR(it.read_s, 8 * m.io.pfs.per_file_latency_s + 8 * 16e6 / (25e9 / 6), 1e-12);
}
