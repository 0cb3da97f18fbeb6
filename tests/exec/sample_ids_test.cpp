// The node-bound sample rules (run --stage-to): a node's ranks read only its share, every sample of
// the plan is read by some node, and a node's share is what exec/node_share copies.
#include <gtest/gtest.h>

#include <set>

#include "exec/sample_ids.hpp"

namespace mrplan {
namespace {

TEST(SampleIds, NodeBoundShufflingKeepsEachNodesGroupsOnIt) {
  const int64_t n = 64;
  const int members = 4, batch = 4;
  const MemberNodes nodes{0, 0, 1, 1};  // groups 0,1 on node 0; 2,3 on node 1
  std::set<std::vector<int64_t>> orders;
  for (int epoch = 0; epoch < 8; ++epoch) {
    std::set<int64_t> seen;
    for (int i = 0; i < members; ++i) {
      const auto ids = restricted_shuffle(n, i, members, batch, 9, epoch, nodes);
      ASSERT_EQ(ids.size(), 16u);
      const int64_t g = ids.front() / 16;
      EXPECT_EQ(g / 2, nodes[i]) << "member " << i << " epoch " << epoch;  // its node's groups only
      for (const auto id : ids) {
        EXPECT_EQ(id / 16, g);
        EXPECT_TRUE(seen.insert(id).second);
      }
      if (i == 0) orders.insert(ids);
    }
    EXPECT_EQ(seen.size(), 64u);
  }
  EXPECT_GT(orders.size(), 1u);  // the groups still move between the node's members
  // one node holding every member: the same groups as a run with no nodes could draw
  EXPECT_EQ(restricted_shuffle(n, 2, members, batch, 9, 3, {0, 0, 0, 0}).size(), 16u);
}

TEST(SampleIds, ValidationAndRecomputeIdsPartitionOrStayInTheGroup) {
  std::set<int64_t> strided, blocks;
  for (int i = 0; i < 3; ++i) {
    for (const auto v : validation_ids(30, 10, i, 3, false)) EXPECT_TRUE(strided.insert(v).second);
    const auto b = validation_ids(30, 10, i, 3, true);
    for (size_t k = 1; k < b.size(); ++k) EXPECT_EQ(b[k], b[k - 1] + 1);  // contiguous
    for (const auto v : b) EXPECT_TRUE(blocks.insert(v).second);
  }
  EXPECT_EQ(strided, blocks);  // both cover 30..39 once
  EXPECT_EQ(*blocks.begin(), 30);
  EXPECT_EQ(*blocks.rbegin(), 39);
  EXPECT_EQ(validation_ids(30, 10, 0, 3, true), (std::vector<int64_t>{30, 31, 32, 33}));  // the first 10 % 3 blocks are one longer
  EXPECT_EQ(recompute_ids(32, 1, 2, 3, true), (std::vector<int64_t>{16, 17, 18}));  // member 1's own group
  EXPECT_EQ(recompute_ids(32, 1, 2, 3, false), (std::vector<int64_t>{1, 3, 5}));
}

Plan two_stage_plan() {
  Plan p;
  p.train_samples = 32, p.validation_samples = 16;
  Stage coarse, dense;
  ModelRun a, b, d;
  a.resolution = 4, a.gpus = 2, b.resolution = 2, b.gpus = 2;  // a fusion stage: one model per node
  d.resolution = 1, d.gpus = 4;
  coarse.models = {a, b}, dense.models = {d};
  p.stages = {coarse, dense};
  return p;
}

TEST(SampleIds, ANodesShareIsWhatItsRanksReadInEveryStage) {
  const Plan p = two_stage_plan();
  const std::vector<int> node_of_rank{0, 0, 1, 1};
  const auto zero = node_share_ids(p, node_of_rank, 0), one = node_share_ids(p, node_of_rank, 1);
  // the fusion stage: model a (res4) lives on node 0 alone, so node 0 holds all of res4; b is node 1's
  EXPECT_EQ(zero.at(4).size(), 48u);
  EXPECT_FALSE(zero.count(2));
  EXPECT_EQ(one.at(2).size(), 48u);
  EXPECT_FALSE(one.count(4));
  // the dense stage on all four ranks: each node its two groups of 8 and its validation blocks
  std::vector<int64_t> want;
  for (int64_t v = 0; v < 16; ++v) want.push_back(v);
  for (int64_t v = 32; v < 40; ++v) want.push_back(v);
  EXPECT_EQ(zero.at(1), want);
  std::set<int64_t> both(zero.at(1).begin(), zero.at(1).end());
  for (const auto v : one.at(1)) EXPECT_TRUE(both.insert(v).second);  // the shares do not overlap
  EXPECT_EQ(both.size(), 48u);                                         // and cover every sample
  // and every id a member of node 1 draws in any epoch is in node 1's share
  const MemberNodes nodes = member_nodes(p.stages[1], 0, node_of_rank);
  const std::set<int64_t> share(one.at(1).begin(), one.at(1).end());
  for (int epoch = 0; epoch < 5; ++epoch)
    for (int i = 2; i < 4; ++i) {
      for (const auto id : restricted_shuffle(32, i, 4, 2, 7, epoch, nodes)) EXPECT_TRUE(share.count(id)) << id;
      for (const auto id : validation_ids(32, 16, i, 4, true)) EXPECT_TRUE(share.count(id)) << id;
      for (const auto id : recompute_ids(32, i, 4, 4, true)) EXPECT_TRUE(share.count(id)) << id;
    }
}

TEST(SampleIds, RanksFallIntoTheirModelsInOrder) {
  const Plan p = two_stage_plan();
  EXPECT_EQ(model_of_rank(p.stages[0], 1), 0u);
  EXPECT_EQ(model_of_rank(p.stages[0], 2), 1u);
  EXPECT_EQ(first_rank_of(p.stages[0], 1), 2);
  EXPECT_EQ(member_nodes(p.stages[0], 1, {0, 0, 1, 1}), (MemberNodes{1, 1}));
}

}  // namespace
}  // namespace mrplan
