// MRMF in the model and the simulator: the plan form, the fusion split, the fusion benefit and the
// concurrent stage's time, in closed form.
#include <gtest/gtest.h>

#include <cmath>

#include "calibrate/mrmf_paper.hpp"
#include "calibrate/calibrated_builtins.hpp"
#include "model/allreduce_cost.hpp"
#include "model/builtin_workloads.hpp"
#include "model/fusion.hpp"
#include "model/learning_curve.hpp"
#include "model/method_rules.hpp"
#include "model/plan_yaml.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/simulate.hpp"
#include "sim/sweep.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

const char* kMrmf = R"(name: fuse
workload: neuron-inverter
workload_options: {size: 1600, width: 0.25}
machine: perlmutter
method: mrmf
dataset: {train_samples: 65536}
target: {metric: val_mse, value: 0.03}
stages:
  - name: fusion1
    gpus: 8
    models:
      - {name: low, resolution: 2, gpus: 4, local_batch: 64, stop: {epochs: 3}}
      - {name: high, resolution: 1, gpus: 4, local_batch: 32, optimizer: sgd, stop: {iterations: 100}, init: scratch}
    handoff: {fuse: {bottom_from: low, top_from: high}}
  - {name: finetune, resolution: 1, gpus: 8, local_batch: 32, stop: {epochs: 2}}
)";

std::string with(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST(MrmfPlan, TwoModelsPerStageRoundTrip) {
  const Plan a = plan_from_yaml_text(kMrmf, "fuse.yaml");
  ASSERT_EQ(a.stages.size(), 2u);
  const auto& s = a.stages[0];
  ASSERT_EQ(s.models.size(), 2u);
  EXPECT_EQ(s.gpus(), 8);
  EXPECT_EQ(s.global_batch(), 4 * 64 + 4 * 32);
  EXPECT_EQ(s.handoff.kind, Handoff::Kind::fuse);
  EXPECT_EQ(s.models[1].optimizer, Optimizer::sgd);
  EXPECT_FALSE(s.models[1].from_previous);
  EXPECT_EQ(s.models[1].stop.kind, StopRule::Kind::iterations);
  EXPECT_EQ(handed_on_model(s), 1u);
  EXPECT_EQ(handed_on_resolution(s), 1);
  const Plan b = plan_from_yaml_text(plan_to_yaml(a), "again.yaml");
  EXPECT_EQ(plan_to_yaml(a), plan_to_yaml(b));
  // the built-in plans as the paper ran them: one and two fusions, resolutions rising
  const Plan two = builtin_plan("cosmoflow-mrmf2@perlmutter");
  ASSERT_EQ(two.stages.size(), 3u);
  EXPECT_EQ(two.stages[0].models[0].resolution, 4);
  EXPECT_EQ(two.stages[1].models[0].resolution, 2);
  EXPECT_EQ(handed_on_resolution(two.stages[1]), 1);
  EXPECT_EQ(plan_to_yaml(plan_from_yaml_text(plan_to_yaml(two), "x.yaml")), plan_to_yaml(two));
}

TEST(MrmfPlan, BadInputsNameWhatIsWrong) {
  auto err = [](const std::string& text) { return error_of([&] { plan_from_yaml_text(text, "bad.yaml"); }); };
  EXPECT_EQ(err(with(kMrmf, "    gpus: 8\n", "    gpus: 12\n")),
            "bad.yaml: stages[0].gpus: the stage has 12 GPUs but its models are given 4 (low) + 4 (high) = 8: the split does not add up");
  EXPECT_EQ(err(with(kMrmf, "bottom_from: low, top_from: high", "bottom_from: high, top_from: low")),
            "bad.yaml: stages[0].handoff.fuse: resolutions not increasing: the bottom layer group comes from the lower-resolution "
            "model (the larger coarsening factor), but 'high' has factor 1 and 'low' factor 2");
  EXPECT_EQ(err(with(kMrmf, "bottom_from: low,", "bottom_from: lo,")),
            "bad.yaml: stages[0].handoff.fuse.bottom_from: no model 'lo' in this stage (low or high)");
  EXPECT_EQ(err(with(kMrmf, "stop: {epochs: 3}", "stop: {target: true}")),
            "bad.yaml: stages[0].models[0].stop: a model of a fusion stage stops after epochs, iterations or by the switch_rule, not by target");
  EXPECT_EQ(err(with(kMrmf, "    handoff: {fuse: {bottom_from: low, top_from: high}}\n", "")),
            "bad.yaml: stages[0].handoff: a fusion stage hands on by fuse: {bottom_from: MODEL, top_from: MODEL}");
  EXPECT_EQ(err(with(kMrmf, "{name: finetune, resolution: 1,", "{name: finetune, resolution: 2,")),
            "bad.yaml: stages[1].resolution: resolutions not increasing: fine-tuning at factor 2 after a fusion at factor 1");
  // a fusion point that does not exist, and one whose bottom group depends on the resolution
  const auto& m = calibrated_builtin_profile("perlmutter");
  const Plan nowhere = plan_from_yaml_text(with(kMrmf, "top_from: high}", "top_from: high, split_after: conv9}"), "bad.yaml");
  EXPECT_EQ(error_of([&] { prepare(nowhere, m); }),
            "bad.yaml: stages[0].handoff.fuse.split_after: fusion point 'conv9' does not exist in workload 'neuron-inverter' (its own: "
            "'flatten')");
  const Plan too_high = plan_from_yaml_text(with(kMrmf, "top_from: high}", "top_from: high, split_after: fc1}"), "bad.yaml");
  EXPECT_EQ(error_of([&] { prepare(too_high, m); }),
            "bad.yaml: stages[0].handoff.fuse.split_after: op 'flat_bn' has 990 parameters at resolution factor 2 but 2160 in the "
            "fused model (factor 1): it cannot come from the bottom model; move the fusion point before it");
}

TEST(Fusion, TheSplitIsThePropertyOfTheOpList) {
  for (const auto& name : builtin_workload_names()) {
    const auto spec = builtin_workload(name);
    const size_t split = fusion_split(spec, "", "x", "k");
    EXPECT_EQ(spec.ops[split].name, spec.fusion_split_after) << name;
    // the bottom group is what MRT transfers; the resolution-dependent layers are above it
    for (size_t i = 0; i <= split; ++i)
      if (spec.ops[i].kind == OpKind::linear) ADD_FAILURE() << name << ": linear op below the fusion point";
  }
  const auto spec = builtin_workload("neuron-inverter", {.size = 1600, .width = 0.25});
  const size_t split = fusion_split(spec, "", "x", "k");
  const auto dense = resolve(spec, coarsened_spatial(spec, 1), 1), coarse = resolve(spec, coarsened_spatial(spec, 2), 1);
  check_fusible(coarse, 2, dense, 1, split, "x", "k");  // convolutions do not depend on the resolution
  const auto b = fusion_bytes(dense, split);
  double bottom = 0, top = 0;
  for (size_t i = 0; i < dense.layers.size(); ++i) (i <= split ? bottom : top) += 4.0 * dense.layers[i].params;
  EXPECT_DOUBLE_EQ(b.bottom_bytes, bottom);
  EXPECT_DOUBLE_EQ(b.top_bytes, top);
  EXPECT_DOUBLE_EQ(b.bottom_bytes + b.top_bytes, 4.0 * dense.total_params());
  EXPECT_EQ(b.bottom_tensors + b.top_tensors, dense.total_param_tensors());
}

TEST(Fusion, BroadcastCostIsTheFasterOfTreeAndScatterAllgather) {
  CommParams c;
  c.intra_node = {2e-6, 100e9};
  c.inter_node = {5e-6, 25e9};
  c.bandwidth_efficiency = 0.5;
  c.call_overhead_s = 1e-4;
  EXPECT_EQ(broadcast_s(1e6, 1, 4, c), 0.0);
  // 8 GPUs on 4-GPU nodes: the inter-node level; 3 hops
  const double tree = 3 * 5e-6 + 1e8 / 12.5e9, sa = (3 + 7) * 5e-6 + 2.0 * 7 / 8 * 1e8 / 12.5e9;
  EXPECT_NEAR(broadcast_s(1e8, 8, 4, c), std::min(tree, sa) + 1e-4, 1e-15);
  const double small = std::min(2 * 2e-6 + 1e3 / 50e9, (2 + 3) * 2e-6 + 1.5 * 1e3 / 50e9);  // one node of 4
  EXPECT_NEAR(broadcast_s(1e3, 4, 4, c), small + 1e-4, 1e-15);
}

TEST(Fusion, TheFusedModelCarriesTheBottomsProgressAsATransferAndAddsTheTops) {
  ConvergenceParams p;
  p.coarse_loss = {CurveForm::exp, 0.1, 1.0, 5.0};
  p.transfer_efficiency = 0.4;
  p.fusion_efficiency = 2.0;
  EXPECT_DOUBLE_EQ(fused_progress(p, 0.5, 0.1), 0.4 * 0.5 + 2.0 * 0.1);
  EXPECT_DOUBLE_EQ(fused_progress(p, 1.0, 0.9), 1.0);  // at most all of it
  p.fusion_efficiency = -3;
  EXPECT_DOUBLE_EQ(fused_progress(p, 0.5, 0.2), 0.4 * 0.5 - 3 * 0.2);  // a fusion may set the model back
  EXPECT_DOUBLE_EQ(dense_epochs_after_progress(40, -0.4), 56);
  p.fusion_efficiency = 0;
  EXPECT_DOUBLE_EQ(fused_progress(p, 0.5, 0.9), 0.2);  // nothing from the top: what MRT's transfer gives
  // progress at a resolution and its inverse
  EXPECT_DOUBLE_EQ(resolution_progress(p, 1, 40, 10), 0.25);  // the dense model: its share of the baseline's epochs
  EXPECT_DOUBLE_EQ(resolution_progress(p, 2, 40, 7), coarse_progress(p.coarse_loss, 7));
  EXPECT_NEAR(epochs_for_progress(p, 2, 40, resolution_progress(p, 2, 40, 7)), 7, 1e-9);
  EXPECT_DOUBLE_EQ(epochs_for_progress(p, 1, 40, 0.25), 10);
  EXPECT_DOUBLE_EQ(dense_epochs_after_progress(40, 0.25), 30);
  EXPECT_DOUBLE_EQ(dense_epochs_after_progress(40, 0.99), 1);
}

TEST(MrmfSimulator, AConcurrentStageTakesItsSlowerModelPlusTheFusion) {
  auto m = calibrated_builtin_profile("perlmutter");
  const Plan plan = plan_from_yaml_text(kMrmf, "fuse.yaml");
  const auto pp = prepare(plan, m);
  const auto& st = pp.stages[0];
  ASSERT_EQ(st.models.size(), 2u);
  // the fusion: each group's parameter tensors broadcast over the stage's 8 GPUs, one at a time
  const auto spec = plan_network(plan);
  const auto fused = model_run_table(plan, spec, plan.stages[0].models[1]);
  const auto b = fusion_bytes(fused, fusion_split(spec, "", "", ""));
  ASSERT_GT(b.bottom_tensors, 0);
  ASSERT_GT(b.top_tensors, 0);
  EXPECT_NEAR(st.fusion_s,
              b.bottom_tensors * broadcast_s(b.bottom_bytes / b.bottom_tensors, 8, m.gpus_per_node, m.comm) +
                  b.top_tensors * broadcast_s(b.top_bytes / b.top_tensors, 8, m.gpus_per_node, m.comm),
              1e-15);
  const auto ep = model_epochs(pp);
  ASSERT_EQ(ep.size(), 3u);
  EXPECT_DOUBLE_EQ(ep[0].epochs, 3);
  EXPECT_DOUBLE_EQ(ep[1].epochs, 100.0 / st.models[1].iterations_per_epoch);  // an iteration budget
  const double low = model_time(st.models[0], 3).epoch_s(), high = model_time(st.models[1], ep[1].epochs).epoch_s();
  const double fine = model_time(pp.stages[1].models[0], 2).epoch_s();
  const auto t = totals(pp, ep);
  EXPECT_NEAR(t.time_s, std::max(low, high) + st.fusion_s + fine, 1e-9 * t.time_s);
  EXPECT_NEAR(t.gpu_hours, ((std::max(low, high) + st.fusion_s) * 8 + fine * 8) / 3600.0, 1e-12);
  const auto r = simulate(pp, m);
  EXPECT_NEAR(r.stages[0].time_s, std::max(low, high) + st.fusion_s, 1e-9);
  EXPECT_DOUBLE_EQ(r.stages[0].fusion_s, st.fusion_s);
  EXPECT_NEAR(r.totals.time_to_target_s, t.time_s, 1e-9 * t.time_s);
  ASSERT_EQ(r.stages[0].models.size(), 2u);
  EXPECT_EQ(r.stages[0].models[1].name, "high");
  EXPECT_EQ(r.stages[0].models[1].stop_reason, StopReason::iterations);
}

TEST(MrmfSimulator, TheFineTuningStartsFromTheFusedModelsProgress) {
  const auto& m = calibrated_builtin_profile("perlmutter");
  const Plan plan = builtin_plan("cosmoflow-mrmf@perlmutter");
  const auto pp = prepare(plan, m);
  const auto& cv = *pp.convergence;
  const auto ep = model_epochs(pp);
  const double e0 = *crossing_epoch(cv.dense_metric, plan.target_value);
  // the low model stops by MRT's rule; the high one after its epochs; each one's progress as defined
  EXPECT_DOUBLE_EQ(ep[0].epochs, *pp.stages[0].rule_switch_epochs[0]);
  EXPECT_DOUBLE_EQ(ep[0].progress, coarse_progress(cv.coarse_loss, ep[0].epochs));
  EXPECT_DOUBLE_EQ(ep[1].progress, ep[1].epochs / e0);
  const double k = fused_progress(cv, ep[0].progress, ep[1].progress);
  EXPECT_GT(k, 0);
  EXPECT_DOUBLE_EQ(ep[2].epochs, std::ceil(dense_epochs_after_progress(e0, k) - 1e-9));
  EXPECT_NEAR(ep[2].metric_offset_epochs, e0 - dense_epochs_after_progress(e0, k), 1e-12);
  // a larger fusion benefit shortens the fine-tuning
  auto q = pp;
  q.convergence->fusion_efficiency *= 2;
  EXPECT_LT(model_epochs(q)[2].epochs, ep[2].epochs);
  // with two fusions the second stage's lower-resolution model goes on from the first fusion
  const auto two = prepare(builtin_plan("cosmoflow-mrmf2@perlmutter"), m);
  const auto e2 = model_epochs(two);
  ASSERT_EQ(e2.size(), 5u);
  EXPECT_GT(e2[2].metric_offset_epochs, 0);
  EXPECT_LE(e2[2].epochs, e2[0].epochs);  // it starts further along its loss curve: the rule fires sooner
}

TEST(MrmfSimulator, SweepMovesTheFusionStageAndTheSplit) {
  const auto& m = calibrated_builtin_profile("perlmutter");
  const Plan plan = builtin_plan("cosmoflow-mrmf@perlmutter");
  SweepSpec spec;
  spec.switch_epochs = {20, 40};
  spec.gpus = {32};
  spec.low_fractions = {0.25, 0.5};
  const auto pts = run_sweep(plan, m, spec, 2);
  ASSERT_EQ(pts.size(), 2u * (2 + 2));
  int rule = 0;
  for (const auto& p : pts) {
    if (p.role == SweepRole::rule && p.split == 0.5) {
      EXPECT_NEAR(p.time_to_target_s, simulate(plan, m).totals.time_to_target_s, 1e-9 * p.time_to_target_s);
      ++rule;
    }
    if (p.role == SweepRole::forced && p.switch_epoch) {
      const Plan at = plan_with_split(plan, *p.split);
      EXPECT_NEAR(p.time_to_target_s, totals(prepare(at, m), model_epochs(prepare(at, m), *p.switch_epoch)).time_s, 1e-9);
    }
  }
  EXPECT_EQ(rule, 1);
  const Plan quarter = plan_with_split(plan, 0.25);
  EXPECT_EQ(quarter.stages[0].models[0].gpus, 8);
  EXPECT_EQ(quarter.stages[0].models[1].gpus, 24);
  EXPECT_NE(error_of([&] { plan_with_split(plan, 0.01); }).find("leaves a model without a GPU"), std::string::npos);
  EXPECT_NE(sweep_csv(pts).substr(0, sweep_csv(pts).find('\n')).find(",low_gpu_fraction,"), std::string::npos);
}

TEST(MrmfPaper, TheFusionEfficiencyFitReproducesTheClaimItWasFittedTo) {
  const auto claims = mrmf_paper_claims();
  ASSERT_EQ(claims.size(), 2u);
  const auto& m = calibrated_builtin_profile(before_mlperf("perlmutter"));  // the paper's fits, which the prior was fitted on
  const auto fit = fit_fusion_efficiency(claims[0], m);
  ASSERT_TRUE(fit.reachable);
  EXPECT_NEAR(best_saving(predict_claim(claims[0], m, fit.eta)), claims[0].saving, 0.02);
  // the built-in profiles carry that prior, for every network (as the build wrote it: 8 digits)
  for (const auto& [w, cv] : m.convergence) EXPECT_NEAR(cv.fusion_efficiency / fit.eta, 1.0, 1e-7) << w;
  for (const auto& [w, cv] : calibrated_builtin_profile("perlmutter").convergence) EXPECT_NEAR(cv.fusion_efficiency / fit.eta, 1.0, 1e-7) << w;
  EXPECT_GT(best_saving(predict_claim(claims[0], m, 2 * fit.eta)), best_saving(predict_claim(claims[0], m, fit.eta)));
}
