// One row per method (model/method_table, issue 41): the rows the search and readers ask, and the
// structure queries the simulator uses in place of a method's name.
#include <gtest/gtest.h>

#include <set>

#include "model/errors.hpp"
#include "model/method_table.hpp"
#include "model/optimizers.hpp"
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
  // transfer learning has the baseline's shape: its records say it by name (mrplan's log's mrplan_method)
  EXPECT_EQ(method_of_shape(false, 1), Method::baseline);
  EXPECT_EQ(method_names(), "baseline, mrt, mrmf or transfer");
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

// One optimizer table (model/optimizers): a plan, a log and the compute microbenchmark read the same
// names, and the state each keeps is said once.
TEST(OptimizerTable, NamesRoundTripAndAnUnknownOneIsRefusedWithTheNames) {
  for (const auto& r : optimizer_table()) EXPECT_EQ(optimizer_from_string(to_string(r.optimizer)), r.optimizer);
  EXPECT_EQ(optimizer_names(), "sgd, momentum, adam or lamb");
  try {
    parse_optimizer("rmsprop", "plan.yaml", "stages[0].optimizer");
    FAIL() << "rmsprop was accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("plan.yaml"), std::string::npos);
    EXPECT_NE(m.find("stages[0].optimizer"), std::string::npos);
    EXPECT_NE(m.find("sgd, momentum, adam or lamb"), std::string::npos);
  }
  Plan p = builtin_plan("cosmoflow-mrt@summit");
  p.stages[0].models[0].optimizer = Optimizer::momentum;
  EXPECT_EQ(plan_from_yaml_text(plan_to_yaml(p)).stages[0].models[0].optimizer, Optimizer::momentum);
}
