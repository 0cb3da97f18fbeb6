#include "exec/compute_microbench.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <utility>

#include "model/builtin_workloads.hpp"

using namespace mrplan;

// Round-robin timing still hands back one median per op and one whole step per configuration, in
// the order of the configurations, and reports progress once per configuration and round.
TEST(ComputeMicrobench, RoundsGiveOneTimingPerOpAndConfiguration) {
  ComputeBenchOptions o;
  o.workloads = {parse_workload_variant("cosmoflow-mrt:16:0.25")};
  o.resolutions = {1, 2};
  o.batches = {2, 4};
  o.repeats = 3;
  std::vector<std::pair<int, int>> calls;
  const auto t = time_workload_ops(o, [&](int done, int total) { calls.emplace_back(done, total); });

  ASSERT_EQ(calls.size(), 3u * 4u);
  EXPECT_EQ(t.round_s.size(), 2u);  // the first round carries the warm-ups
  for (size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i], std::make_pair(static_cast<int>(i) + 1, 12));

  const auto spec = builtin_workload("cosmoflow-mrt", o.workloads[0].options);
  const std::vector<std::string> contexts{"cosmoflow-mrt 16x16x16 batch 2", "cosmoflow-mrt 16x16x16 batch 4",
                                          "cosmoflow-mrt 8x8x8 batch 2", "cosmoflow-mrt 8x8x8 batch 4"};
  ASSERT_EQ(t.whole_steps.size(), contexts.size());
  for (size_t i = 0; i < contexts.size(); ++i) {
    EXPECT_EQ(t.whole_steps[i].context, contexts[i]);
    EXPECT_GT(t.whole_steps[i].seconds, 0);
    EXPECT_GT(t.whole_steps[i].forward_s, 0);
    EXPECT_GT(t.whole_steps[i].backward_s, 0);
    EXPECT_GT(t.whole_steps[i].optimizer_s, 0);
  }
  // every op of every configuration once, in the layer table's order, at the configuration's batch
  ASSERT_EQ(t.ops.size(), 4 * spec.ops.size());
  for (size_t c = 0; c < contexts.size(); ++c)
    for (size_t i = 0; i < spec.ops.size(); ++i) {
      const auto& s = t.ops[c * spec.ops.size() + i];
      EXPECT_EQ(s.context, contexts[c]);
      EXPECT_EQ(s.layer.name, spec.ops[i].name);
      EXPECT_GE(s.fwd_s, 0);
      EXPECT_GE(s.bwd_s, 0);
    }
  // parameters per resolution
  EXPECT_GT(t.whole_steps[2].params, 0);
  EXPECT_GT(t.whole_steps[0].params, t.whole_steps[2].params);  // the coarse model's first dense layer takes fewer inputs
  EXPECT_EQ(t.whole_steps[0].params, t.whole_steps[1].params);
  EXPECT_EQ(t.whole_steps[0].param_tensors, t.whole_steps[2].param_tensors);
}

// --min-seconds keeps adding rounds until that long has passed; progress's total follows the
// rounds as they are added, and every round after the first reports its wall time.
TEST(ComputeMicrobench, MinSecondsAddsRoundsUntilTheTimeHasPassed) {
  ComputeBenchOptions o;
  o.workloads = {parse_workload_variant("cosmoflow-mrt:16:0.25")};
  o.resolutions = {2};
  o.batches = {2};
  o.repeats = 2;
  o.min_seconds = 0.5;
  std::vector<std::pair<int, int>> calls;
  const auto start = std::chrono::steady_clock::now();
  const auto t = time_workload_ops(o, [&](int done, int total) { calls.emplace_back(done, total); });
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  EXPECT_GE(took_s, o.min_seconds);
  // at least the repeats: more where they took less than min_seconds (a loaded machine under ASan
  // may take it in the repeats alone, so how many more is not asserted)
  const int rounds = static_cast<int>(t.round_s.size()) + 1;
  EXPECT_GE(rounds, o.repeats);
  ASSERT_EQ(calls.size(), static_cast<size_t>(rounds));  // one configuration
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].first, static_cast<int>(i) + 1);
    EXPECT_GE(calls[i].second, calls[i].first);
  }
  EXPECT_EQ(calls.back().second, rounds);
  for (double s : t.round_s) EXPECT_GT(s, 0);
  ASSERT_EQ(t.whole_steps.size(), 1u);  // still one median per configuration
}
