#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "calibrate/calibrated_builtins.hpp"
#include "cli/optimize_args.hpp"
#include "cli/sweep_plot.hpp"
#include "model/compute_cost.hpp"
#include "model/learning_curve.hpp"
#include "model/method_table.hpp"
#include "model/plan_network.hpp"
#include "model/plan_scaling.hpp"
#include "model/plan_yaml.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/optimize.hpp"
#include "sim/search_space.hpp"
#include "sim/simulate.hpp"
#include "sim/sweep.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

SearchSpace small_space() {
  SearchSpace s;
  s.templates = {builtin_plan("cosmoflow-baseline@summit"), builtin_plan("cosmoflow-mrt@summit"), builtin_plan("cosmoflow-mrmf@summit")};
  s.gpus = {3, 4, 6, 12, 48, 1536};  // Summit has 6 GPUs a node: 4 cannot be placed, 3 is half a node
  s.local_batches = {1, 4, 16, 64};
  s.switch_epochs = {5, 12, 30};
  return s;
}

// Every candidate of the space, predicted one by one from its plan.
struct Brute {
  Candidate c;
  double time_s, gpu_hours;
  bool ok;  // fits memory, batches within the dataset, reaches the target
};
std::vector<Brute> brute_force(const SearchSpace& s, const MachineProfile& m) {
  std::vector<Brute> out;
  for (uint32_t t = 0; t < s.templates.size(); ++t) {
    const auto& tmpl = s.templates[t];
    const bool mrmf = tmpl.method == Method::mrmf;
    std::vector<std::optional<double>> pts{std::nullopt};
    if (tmpl.method != Method::baseline)
      for (double e : s.switch_epochs) pts.push_back(e);
    for (int g : s.gpus) {
      if (g % m.gpus_per_node != 0 && (m.whole_nodes || m.gpus_per_node % g != 0)) continue;
      for (int b0 : s.local_batches)
        for (int b1 : s.local_batches) {
          if (tmpl.method == Method::baseline && b1 != s.local_batches[0]) continue;
          for (const auto& pt : pts) {
            Candidate c;
            c.template_index = t, c.gpus = g, c.switch_epoch = pt;
            for (size_t i = 0; i < tmpl.stages.size(); ++i) c.local_batch[i] = (mrmf ? i + 1 == tmpl.stages.size() : i == 1) ? b1 : b0;
            const Plan p = plan_of(s, c);
            bool too_big = false;
            for (const auto& st : p.stages)
              for (const auto& mr : st.models) too_big = too_big || mr.gpus * mr.local_batch > p.train_samples;
            if (too_big) continue;
            const Record r = simulate(p, m);
            bool ok = r.totals.reached_target;
            for (const auto& st : r.stages)
              for (const auto& mr : st.models) ok = ok && mr.memory_fits && mr.gpus * mr.local_batch <= p.train_samples;
            out.push_back({c, r.totals.time_to_target_s, r.totals.gpu_hours, ok});
          }
        }
    }
  }
  return out;
}

}  // namespace

TEST(Optimize, EqualsBruteForceOverTheSameSpace) {
  const auto& m = calibrated_builtin_profile("summit");
  const auto s = small_space();
  const auto brute = brute_force(s, m);
  const auto r = search_plans(s, m, {}, Objective::time, 5);
  const Brute* best = nullptr;
  size_t ok = 0;
  for (const auto& b : brute)
    if (b.ok) {
      ++ok;
      if (!best || b.time_s < best->time_s) best = &b;
    }
  ASSERT_TRUE(best);
  ASSERT_FALSE(r.best.empty());
  EXPECT_NEAR(r.best[0].time_s, best->time_s, 1e-9 * best->time_s);
  EXPECT_EQ(r.best[0].gpus, best->c.gpus);
  EXPECT_EQ(r.best[0].template_index, best->c.template_index);
  EXPECT_EQ(r.counts.evaluated - r.counts.not_reached, ok);
  // the ranking is sorted and every kept candidate's own plan predicts its numbers
  for (size_t i = 1; i < r.best.size(); ++i) EXPECT_LE(r.best[i - 1].time_s, r.best[i].time_s);
  for (const auto& c : r.best) EXPECT_NEAR(simulate(plan_of(s, c), m).totals.time_to_target_s, c.time_s, 1e-9 * c.time_s);
}

TEST(Optimize, ConstraintsExcludeExactlyTheViolators) {
  const auto& m = calibrated_builtin_profile("summit");
  const auto s = small_space();
  const auto brute = brute_force(s, m);
  const auto free = search_plans(s, m, {}, Objective::gpu_hours, 1);
  ASSERT_FALSE(free.best.empty());
  Constraints limits;
  limits.deadline_s = free.best[0].time_s * 0.6;  // the cheapest plan is too slow now
  limits.budget_gpu_hours = free.best[0].gpu_hours * 3;
  const auto r = search_plans(s, m, limits, Objective::gpu_hours, 1000);
  size_t breaking = 0;
  std::set<std::tuple<uint32_t, int, int, int>> meeting;  // configurations with a point that meets the limits
  for (const auto& b : brute) {
    if (!b.ok) continue;
    const bool meets = b.time_s <= *limits.deadline_s && b.gpu_hours <= *limits.budget_gpu_hours;
    if (meets) meeting.insert({b.c.template_index, b.c.gpus, b.c.local_batch[0], b.c.local_batch[1]});
    else ++breaking;
  }
  EXPECT_EQ(r.best.size(), meeting.size());
  EXPECT_EQ(r.counts.violating, breaking);
  for (const auto& c : r.best) {
    EXPECT_LE(c.time_s, *limits.deadline_s);
    EXPECT_LE(c.gpu_hours, *limits.budget_gpu_hours);
  }
  ASSERT_TRUE(r.nearest.has_value());
  EXPECT_GT(std::max(r.nearest->time_s / *limits.deadline_s, r.nearest->gpu_hours / *limits.budget_gpu_hours), 1.0);
}

TEST(Optimize, PartitionedSearchEqualsOneSearch) {
  const auto& m = calibrated_builtin_profile("summit");
  const auto s = small_space();
  Constraints limits;
  limits.budget_gpu_hours = 1e9;
  const auto whole = search_plans(s, m, limits, Objective::time, 7);
  std::vector<SearchResult> parts;
  for (int i = 0; i < 3; ++i) parts.push_back(search_plans(s, m, limits, Objective::time, 7, {i, 3}, 2));
  std::swap(parts[0], parts[2]);  // the order parts arrive in does not matter
  const auto merged = merge_results(parts, limits, Objective::time, 7);
  ASSERT_EQ(merged.best.size(), whole.best.size());
  for (size_t i = 0; i < whole.best.size(); ++i) EXPECT_EQ(merged.best[i].order, whole.best[i].order);
  ASSERT_EQ(merged.front.size(), whole.front.size());
  for (size_t i = 0; i < whole.front.size(); ++i) EXPECT_EQ(merged.front[i].order, whole.front[i].order);
  EXPECT_EQ(merged.counts.evaluated, whole.counts.evaluated);
  EXPECT_EQ(merged.counts.no_memory, whole.counts.no_memory);
}

TEST(Optimize, FrontIsNotDominated) {
  const auto& m = calibrated_builtin_profile("summit");
  const auto r = search_plans(small_space(), m, {}, Objective::time, 3);
  ASSERT_GT(r.front.size(), 1u);
  for (size_t i = 1; i < r.front.size(); ++i) {
    if (r.front[i].template_index != r.front[i - 1].template_index) {
      EXPECT_GT(r.front[i].template_index, r.front[i - 1].template_index);
      continue;
    }
    EXPECT_GT(r.front[i].time_s, r.front[i - 1].time_s);
    EXPECT_LT(r.front[i].gpu_hours, r.front[i - 1].gpu_hours);
  }
}

TEST(Optimize, BestPlanRoundTripsThroughYaml) {
  const auto& m = calibrated_builtin_profile("summit");
  const auto s = small_space();
  const auto r = search_plans(s, m, {}, Objective::gpu_hours, 3);
  for (const auto& c : r.best) {
    const Plan again = plan_from_yaml_text(plan_to_yaml(plan_of(s, c)), "best.yaml");
    const auto t = simulate(again, m).totals;
    EXPECT_NEAR(t.time_to_target_s, c.time_s, 1e-6 * c.time_s);
    EXPECT_NEAR(t.gpu_hours, c.gpu_hours, 1e-6 * c.gpu_hours);
  }
}

TEST(Optimize, GlobalBatchLimitLeavesOutExactlyTheLargerBatches) {
  const auto& m = calibrated_builtin_profile("summit");
  auto s = small_space();
  const auto free = search_plans(s, m, {}, Objective::time, 1000);
  s.max_global_batch = 256;
  const auto r = search_plans(s, m, {}, Objective::time, 1000);
  EXPECT_GT(r.counts.beyond_batch, 0u);
  EXPECT_EQ(r.counts.evaluated + r.counts.beyond_batch + r.counts.no_memory + r.counts.too_few_samples,
            free.counts.evaluated + free.counts.no_memory + free.counts.too_few_samples);
  for (const auto& c : r.best) {
    const Plan p = plan_of(s, c);
    for (const auto& st : p.stages)
      for (const auto& mr : st.models) EXPECT_LE(mr.gpus * mr.local_batch, 256);
  }
}

TEST(Optimize, RefusesAnEmptySpace) {
  auto s = small_space();
  s.local_batches.clear();
  EXPECT_NE(error_of([&] { search_plans(s, calibrated_builtin_profile("summit"), {}, Objective::time, 1); }).find("--local-batch"),
            std::string::npos);
}

TEST(OptimizeArgs, DurationsInTheUnitsPeopleWriteThem) {
  EXPECT_EQ(parse_duration_s("2h", "--deadline"), 7200);
  EXPECT_EQ(parse_duration_s("2hours", "--deadline"), 7200);
  EXPECT_EQ(parse_duration_s("2 hours", "--deadline"), 7200);
  EXPECT_EQ(parse_duration_s("1h30m", "--deadline"), 5400);
  EXPECT_EQ(parse_duration_s("45min", "--deadline"), 2700);
  EXPECT_EQ(parse_duration_s("3600", "--deadline"), 3600);
  EXPECT_EQ(parse_duration_s("90s", "--deadline"), 90);
  for (const char* bad : {"", "h", "2 fortnights", "-1h", "0h", "2hx"})
    EXPECT_EQ(error_of([&] { parse_duration_s(bad, "--deadline"); }),
              fmt::format("command line: --deadline: '{}': expected a positive duration (e.g. 2h, 90m, 1h30m, 3600s, 2hours)", bad))
        << bad;
}

TEST(OptimizeArgs, AMisspeltApplicationIsTheArgumentsErrorNotAMethods) {
  EXPECT_EQ(error_of([] { builtin_templates("cosmoflw", "summit", {}); }),
            "command line: APP@MACHINE: 'cosmoflw' is no application with built-in plans (known: cosmoflow, deepcam, neuron-inverter)");
}

// ---- transfer learning, the fourth method (issue 41): one row of the method table, a plan key, a
// convergence parameter; the simulator, the search and the readers ask the structure.

namespace {

std::string transfer_yaml(const std::string& method, const std::string& pretrained, int resolution = 1) {
  return fmt::format(R"(name: t
workload: cosmoflow-mrt
machine: summit
method: {}
dataset: {{train_samples: 8192, validation_samples: 1024}}
target: {{metric: val_mse, value: 0.0025}}
stages:
  - {{name: dense, resolution: {}, gpus: 32, local_batch: 8, {}stop: {{target: true, max_epochs: 300}}}}
)",
                     method, resolution, pretrained.empty() ? "" : "pretrained: " + pretrained + ", ");
}

}  // namespace

TEST(TransferLearning, APlanStartsFromAPretrainedModelAndRoundTrips) {
  const Plan p = plan_from_yaml_text(transfer_yaml("transfer", "{checkpoint: last/model.pt, freeze_through: relu3, freeze_epochs: 2}"), "t.yaml");
  ASSERT_TRUE(p.stages[0].models[0].pretrained);
  EXPECT_EQ(p.stages[0].models[0].pretrained->checkpoint, "last/model.pt");
  const Plan back = plan_from_yaml_text(plan_to_yaml(p), "back.yaml");
  EXPECT_EQ(back.method, Method::transfer);
  EXPECT_EQ(back.stages[0].models[0].pretrained->freeze_through, "relu3");
  EXPECT_EQ(back.stages[0].models[0].pretrained->freeze_epochs, 2);
  EXPECT_EQ(plan_to_yaml(back), plan_to_yaml(p));
  // its baseline starts from scratch
  EXPECT_FALSE(baseline_of(p).stages[0].models[0].pretrained);
}

TEST(TransferLearning, RefusalsNameTheKeyAndWhatWasExpected) {
  auto refused = [](const std::string& yaml) { return error_of([&] { plan_from_yaml_text(yaml, "t.yaml"); }); };
  EXPECT_NE(refused(transfer_yaml("baseline", "{checkpoint: m.pt}")).find("t.yaml: stages[0].pretrained: starting from a pretrained model is transfer learning: method: transfer"),
            std::string::npos);
  EXPECT_NE(refused(transfer_yaml("transfer", "")).find("t.yaml: stages[0].pretrained: a transfer plan starts from a pretrained model"),
            std::string::npos);
  EXPECT_NE(refused(transfer_yaml("transfer", "{freeze_epochs: 2}")).find("freeze_epochs without freeze_through"), std::string::npos);
  EXPECT_NE(refused(transfer_yaml("transfer", "{freeze_through: conv2}")).find("freeze_through: conv2 without freeze_epochs"), std::string::npos);
  EXPECT_NE(refused(transfer_yaml("transfer", "{}", 2)).find("fine-tunes at the original resolution"), std::string::npos);
  EXPECT_NE(refused(transfer_yaml("fine-tune", "{}")).find("expected baseline, mrt, mrmf or transfer"), std::string::npos);
  // an op the network does not have is refused before anything is predicted, with the ops it has
  const Plan bad = plan_from_yaml_text(transfer_yaml("transfer", "{freeze_through: conv9, freeze_epochs: 1}"), "t.yaml");
  const auto e = error_of([&] { simulate(bad, calibrated_builtin_profile("summit")); });
  EXPECT_NE(e.find("stages[0].pretrained.freeze_through: 'conv9' is no op of workload 'cosmoflow-mrt' (its ops: input_bn, conv1"), std::string::npos) << e;
}

// The fine-tuning needs the baseline's epochs less the head start: ceil(max(1, e0 (1 - k)) x the
// batch's scale); unmeasured, k is MRT's transfer efficiency and the prediction says it is a prior.
TEST(TransferLearning, PredictedEpochsAreTheBaselinesLessTheHeadStart) {
  MachineProfile m = calibrated_builtin_profile("summit");
  const Plan p = builtin_plan("cosmoflow-transfer@summit");
  auto& cv = m.convergence.at("cosmoflow-mrt");
  const double e0 = *crossing_epoch(cv.dense_metric, p.target_value) * epoch_scale_for_batch(cv, p.stages[0].global_batch());
  const auto prior = simulate(p, m);
  EXPECT_DOUBLE_EQ(prior.stages[0].single().epochs, std::ceil(std::max(1.0, e0 * (1 - cv.transfer_efficiency)) - 1e-9));
  EXPECT_TRUE(std::any_of(prior.warnings.begin(), prior.warnings.end(), [](const std::string& w) {
    return w.find("head start on cosmoflow-mrt is a prior, MRT's transfer efficiency") != std::string::npos;
  }));
  for (double k : {0.0, 0.5, 0.99}) {
    cv.pretrained_progress = k;
    const auto r = simulate(p, m);
    EXPECT_DOUBLE_EQ(r.stages[0].single().epochs, std::ceil(std::max(1.0, e0 * (1 - k)) - 1e-9)) << k;
    EXPECT_TRUE(r.totals.reached_target);
    EXPECT_TRUE(std::none_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) { return w.find("is a prior") != std::string::npos; }));
  }
  cv.pretrained_progress = 0;  // no head start: the baseline's epochs
  EXPECT_DOUBLE_EQ(simulate(p, m).totals.epochs, simulate(builtin_plan("cosmoflow-baseline@summit"), m).totals.epochs);
}

TEST(TransferLearning, TheSearchHoldsItOnlyWithAPretrainedModel) {
  auto methods = [](const std::vector<Plan>& ts) {
    std::set<Method> out;
    for (const auto& t : ts) out.insert(t.method);
    return out;
  };
  EXPECT_EQ(methods(builtin_templates("cosmoflow", "summit", {})).count(Method::transfer), 0u);
  const auto with = builtin_templates("cosmoflow", "summit", {}, "last/model.pt");
  ASSERT_EQ(methods(with).count(Method::transfer), 1u);
  for (const auto& t : with) {
    if (t.method != Method::transfer) continue;
    EXPECT_EQ(t.stages[0].models[0].pretrained->checkpoint, "last/model.pt");
  }
  EXPECT_NE(error_of([] { builtin_templates("cosmoflow", "summit", {Method::transfer}); }).find("give --pretrained MODEL.pt"), std::string::npos);
  EXPECT_NE(error_of([] { search_templates("cosmoflow@summit", {}, "/nonexistent/model.pt"); }).find("--pretrained: /nonexistent/model.pt: no such file"),
            std::string::npos);
  // neuron-inverter has no transfer plan: searched without one, not refused
  EXPECT_EQ(methods(builtin_templates("neuron-inverter", "summit", {}, "last/model.pt")).count(Method::transfer), 0u);
}

// Frozen epochs cost less: the frozen layers' backward is not run (model/compute_cost's per-layer
// times), so each of the first F epochs is shorter by iterations x their backward time.
TEST(TransferLearning, FrozenEpochsSkipTheFrozenLayersBackward) {
  const auto& m = calibrated_builtin_profile("summit");
  Plan thawed = plan_from_yaml_text(transfer_yaml("transfer", "{}"), "t.yaml");
  thawed.stages[0].models[0].gpus = 1;
  Plan frozen = thawed;
  frozen.stages[0].models[0].pretrained = Pretrained{"", "relu3", 3};
  const auto pf = prepare(frozen, m);
  const auto& c = pf.stages[0].models[0];
  const auto table = model_run_table(frozen, pf.spec, frozen.stages[0].models[0]);
  const auto times = whole_step_layer_times(table, m.compute, false, 1.0);
  double bottom_bwd_s = 0;
  for (size_t i = 0; i < times.size() && i <= 11; ++i) bottom_bwd_s += times[i].bwd_s;  // input_bn .. relu3
  EXPECT_EQ(table.layers[11].name, "relu3");
  EXPECT_NEAR(c.frozen_saved_compute_iter_s, bottom_bwd_s, 1e-12 * bottom_bwd_s);
  EXPECT_EQ(c.frozen_epochs, 3);
  const auto a = simulate(thawed, m), b = simulate(frozen, m);
  EXPECT_EQ(a.totals.epochs, b.totals.epochs);
  EXPECT_NEAR(a.totals.time_to_target_s - b.totals.time_to_target_s, 3 * c.iterations_per_epoch * bottom_bwd_s, 1e-9 * a.totals.time_to_target_s);
  // the per-epoch records say the same: the first three epochs are the shorter ones
  const auto& ea = a.stages[0].single().per_epoch;
  const auto& eb = b.stages[0].single().per_epoch;
  EXPECT_NEAR(ea[2].compute_s - eb[2].compute_s, c.iterations_per_epoch * bottom_bwd_s, 1e-9);
  EXPECT_NEAR(ea[3].compute_s, eb[3].compute_s, 1e-12);
}

// A sweep sets a transfer plan beside its baseline at each GPU count (no switch points to sweep).
TEST(TransferLearning, ASweepSetsItBesideItsBaseline) {
  const auto& m = calibrated_builtin_profile("summit");
  SweepSpec spec;
  spec.gpus = {16, 32};
  const auto pts = run_sweep(builtin_plan("cosmoflow-transfer@summit"), m, spec, 1);
  ASSERT_EQ(pts.size(), 4u);
  for (size_t i = 0; i < pts.size(); i += 2) {
    EXPECT_EQ(sweep_label(pts[i]), "baseline");
    EXPECT_EQ(sweep_label(pts[i + 1]), "transfer-rule");
    EXPECT_EQ(pts[i].gpus, pts[i + 1].gpus);
    EXPECT_LT(pts[i + 1].time_to_target_s, pts[i].time_to_target_s);  // the head start saves epochs
    EXPECT_DOUBLE_EQ(pts[i].time_to_target_s, simulate(plan_at_gpus(builtin_plan("cosmoflow-baseline@summit"), pts[i].gpus), m).totals.time_to_target_s);
  }
  // the plot names the method by its row (it named every method that is not MRMF "MRT"), and with
  // no switch to move, sets its time to target against the GPUs beside the baseline's
  const auto plot = sweep_plot_script(pts, "transfer", "transfer.png");
  EXPECT_NE(plot.find("title 'transfer learning'"), std::string::npos);
  EXPECT_EQ(plot.find("MRT"), std::string::npos);
  EXPECT_EQ(plot.find("switch"), std::string::npos);
}
