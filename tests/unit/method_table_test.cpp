// One row per method (model/method_table, issue 41): the rows the search and readers ask, and the
// structure queries the simulator uses in place of a method's name.
#include <gtest/gtest.h>

#include <set>

#include "model/method_table.hpp"
#include "model/plan_yaml.hpp"
#include "sim/builtin_plans.hpp"

using namespace mrplan;

TEST(MethodTable, EveryMethodHasOneRowNamedAsPlansSpellIt) {
  std::set<std::string> names;
  for (const auto& r : method_table()) {
    EXPECT_EQ(&method_row(r.method), &r);
    EXPECT_EQ(std::string(r.name), to_string(r.method));
    EXPECT_EQ(method_from_string(r.name), r.method);
    EXPECT_FALSE(r.plan_suffixes.empty());
    names.insert(r.name);
  }
  EXPECT_EQ(names.size(), method_table().size());
}

TEST(MethodTable, ARecordsMethodIsRecognisedFromItsShape) {
  EXPECT_EQ(method_of_shape(false, 1), method_from_string("baseline"));
  EXPECT_EQ(method_of_shape(false, 2), method_from_string("mrt"));
  EXPECT_EQ(method_of_shape(true, 3), method_from_string("mrmf"));
}

TEST(MethodTable, TheStructureSaysWhoHandsOnByTransferAndWhoFuses) {
  const Plan mrt = builtin_plan("cosmoflow-mrt@summit"), mrmf = builtin_plan("cosmoflow-mrmf@summit"),
             base = builtin_plan("cosmoflow-baseline@summit");
  EXPECT_TRUE(hands_on_by_transfer(mrt, 0));
  EXPECT_FALSE(hands_on_by_transfer(mrt, 1));
  EXPECT_TRUE(starts_from_transfer(mrt, 1, 0));
  EXPECT_FALSE(starts_from_transfer(mrt, 0, 0));
  EXPECT_FALSE(has_fusion_stage(mrt));
  EXPECT_TRUE(has_fusion_stage(mrmf));
  EXPECT_FALSE(hands_on_by_transfer(mrmf, 0));  // a fusion, not a transfer
  EXPECT_FALSE(starts_from_transfer(mrmf, mrmf.stages.size() - 1, 0));
  EXPECT_FALSE(hands_on_by_transfer(base, 0));
}

TEST(MethodTable, TheBaselineIsTheLastStageAloneFromScratchToTheTarget) {
  const Plan mrt = builtin_plan("cosmoflow-mrt@summit");
  const Plan b = baseline_of(mrt);
  EXPECT_EQ(b.method, method_row(mrt.method).compared_against);
  ASSERT_EQ(b.stages.size(), 1u);
  EXPECT_EQ(b.stages[0].models[0].resolution, mrt.stages.back().models[0].resolution);
  EXPECT_FALSE(b.stages[0].models[0].from_previous);
  EXPECT_EQ(b.stages[0].models[0].stop.kind, StopRule::Kind::target);
  EXPECT_EQ(b.stages[0].gpus(), mrt.stages.back().gpus());
}
