#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/support/error_of.hpp"

#include <cmath>
#include <filesystem>
#include <functional>
#include <tuple>
#include <fstream>

#include "calibrate/calibrated_builtins.hpp"
#include "model/builtin_workloads.hpp"
#include "model/compute_cost.hpp"
#include "model/errors.hpp"
#include "model/startup_cost.hpp"
#include "model/straggler.hpp"
#include "model/method_rules.hpp"
#include "model/plan_network.hpp"
#include "model/sync_batchnorm.hpp"
#include "model/plan_yaml.hpp"
#include "model/profile_yaml.hpp"
#include "model/record.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/simulate.hpp"
#include "sim/sweep.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

const char* kPlan = R"(name: test
workload: cosmoflow-mrt
machine: summit
method: mrt
dataset: {train_samples: 8192}
target: {metric: val_mse, value: 0.0025}
stages:
  - {name: coarse, resolution: 2, gpus: 32, local_batch: 8, stop: {switch_rule: {patience: 5, epsilon: 0.001}}}
  - {name: dense, resolution: 1, gpus: 32, local_batch: 8, stop: {target: true}}
)";

}  // namespace

TEST(Plan, YamlRoundTrip) {
  const Plan a = plan_from_yaml_text(kPlan, "p.yaml");
  const Plan b = plan_from_yaml_text(plan_to_yaml(a), "again.yaml");
  EXPECT_EQ(plan_to_yaml(a), plan_to_yaml(b));
  ASSERT_EQ(b.stages.size(), 2u);
  EXPECT_EQ(b.stages[0].models[0].stop.kind, StopRule::Kind::switch_rule);
  EXPECT_EQ(b.stages[0].models[0].stop.rule.patience, 5);
  EXPECT_EQ(b.stages[1].global_batch(), 256);
  EXPECT_EQ(b.precise_bn_batches, 0);
  std::string precise = kPlan;
  precise.replace(precise.find("value: 0.0025}"), 14, "value: 0.0025, precise_bn_batches: 16}");
  EXPECT_EQ(plan_from_yaml_text(plan_to_yaml(plan_from_yaml_text(precise, "p.yaml")), "again.yaml").precise_bn_batches, 16);
}

// A stage's own scaling wins over the plan's when the plan moves; --keep (with_keep) and the
// optimizer's forced scaling win over both.
TEST(Plan, AStageMayScaleOtherwiseThanItsPlan) {
  std::string text = kPlan;
  text.replace(text.find("gpus: 32, local_batch: 8, stop: {s"), 34, "gpus: 32, local_batch: 8, scaling: weak, stop: {s");
  const Plan a = plan_from_yaml_text(text, "p.yaml");
  EXPECT_EQ(a.scaling, Scaling::strong);
  EXPECT_EQ(a.stages[0].scaling, Scaling::weak);
  EXPECT_FALSE(a.stages[1].scaling.has_value());
  const Plan b = plan_from_yaml_text(plan_to_yaml(a), "again.yaml");
  EXPECT_EQ(b.stages[0].scaling, Scaling::weak);
  EXPECT_EQ(plan_to_yaml(plan_from_yaml_text(kPlan, "p.yaml")).find("scaling"), std::string::npos);  // written only when set
  const Plan moved = plan_at_gpus(a, 64);
  EXPECT_EQ(moved.stages[0].models[0].local_batch, 8);  // weak: the local batch
  EXPECT_EQ(moved.stages[1].models[0].local_batch, 4);  // the plan's strong: global 256
  EXPECT_EQ(plan_at_gpus(a, 64, Scaling::strong).stages[0].models[0].local_batch, 4);
  text.replace(text.find("scaling: weak"), 13, "scaling: both");
  EXPECT_EQ(error_of([&] { plan_from_yaml_text(text, "p.yaml"); }),
            "p.yaml: stages[0].scaling: unknown scaling 'both' (expected strong: keep the global batch, or weak: keep the local batch)");
}

TEST(Plan, BuiltinPlansRoundTripAndPredict) {
  for (const auto& app : builtin_plan_names())
    for (const auto& m : {"summit", "cori-gpu", "perlmutter"}) {
      const Plan p = builtin_plan(std::string(app) + "@" + m);
      const Plan q = plan_from_yaml_text(plan_to_yaml(p), "x.yaml");
      const auto r1 = simulate(p, calibrated_builtin_profile(m));
      const auto r2 = simulate(q, calibrated_builtin_profile(m));
      EXPECT_NEAR(r1.totals.time_to_target_s, r2.totals.time_to_target_s, 1e-9 * r1.totals.time_to_target_s) << app << m;
      EXPECT_GT(r1.totals.time_to_target_s, 0) << app << m;
    }
}

TEST(Record, PredictionRoundTripsThroughJson) {
  const auto r = simulate(plan_from_yaml_text(kPlan, "p.yaml"), calibrated_builtin_profile("summit"));
  const auto back = record_from_json(record_to_json(r), "r.json");
  EXPECT_EQ(record_to_json(back), record_to_json(r));
  ASSERT_EQ(back.stages.size(), 2u);
  EXPECT_EQ(back.source, Source::predicted);
  EXPECT_TRUE(back.stages[0].single().switch_epoch.has_value());
  double sum = 0;
  for (const auto& s : back.stages) sum += s.time_s;
  EXPECT_NEAR(sum, back.totals.time_to_target_s, 1e-9 * sum);
  // the phases split compute exactly, per epoch and per stage, as a measurement's do
  for (const auto& st : back.stages) {
    const auto& s = st.single();
    ASSERT_TRUE(s.phases.has_value());
    EXPECT_NEAR(s.phases->forward_s + s.phases->backward_s + s.phases->optimizer_s, s.compute_s, 1e-9 * s.compute_s);
    EXPECT_GT(s.phases->backward_s, s.phases->forward_s);
    EXPECT_LE(s.phases->h2d_s, s.io_s + 1e-12);
    for (const auto& e : s.per_epoch) {
      ASSERT_TRUE(e.phases.has_value());
      EXPECT_NEAR(e.phases->forward_s + e.phases->backward_s + e.phases->optimizer_s, e.compute_s, 1e-9 * e.compute_s);
    }
  }
}

TEST(Record, PhasesAreOptionalAndChecked) {
  auto r = simulate(plan_from_yaml_text(kPlan, "p.yaml"), calibrated_builtin_profile("summit"));
  r.stages[0].single().phases.reset();
  r.stages[0].single().per_epoch[0].phases.reset();
  const auto back = record_from_json(record_to_json(r), "r.json");
  EXPECT_FALSE(back.stages[0].single().phases.has_value());
  EXPECT_FALSE(back.stages[0].single().per_epoch[0].phases.has_value());
  EXPECT_TRUE(back.stages[0].single().per_epoch[1].phases.has_value());
  auto text = record_to_json(r);
  const auto at = text.find("\"forward_s\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 11, "\"forward_s\": -1, \"unused\"");
  const auto msg = error_of([&] { record_from_json(text, "bad.json"); });
  EXPECT_NE(msg.find("bad.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("phases.forward_s"), std::string::npos) << msg;
  EXPECT_NE(msg.find("negative"), std::string::npos) << msg;
}

TEST(Record, BadMeasurementFilesAreRefused) {
  const auto good = record_to_json(simulate(plan_from_yaml_text(kPlan, "p.yaml"), calibrated_builtin_profile("summit")));
  auto broken = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto pos = s.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    s.replace(pos, from.size(), to);
    return error_of([&] { record_from_json(s, "m.json"); });
  };
  EXPECT_NE(broken("\"time_to_target_s\"", "\"time_to_target\"").find("m.json: totals.time_to_target_s: missing required field"), std::string::npos);
  const auto neg = broken("\"compute_s\": ", "\"compute_s\": -");
  EXPECT_NE(neg.find("a time cannot be negative"), std::string::npos) << neg;
  EXPECT_NE(error_of([] { record_from_json("{\"schema\": \"mrplan.record/1\", \"source\": \"measured\", \"plan\": \"x\"", "t.json"); })
                .find("t.json: not valid JSON"),
            std::string::npos);
  // nlohmann writes NaN as null; a null where a time is required is refused
  EXPECT_NE(broken("\"io_s\": ", "\"io_s\": null, \"x\": ").find("expected a number"), std::string::npos);
  EXPECT_NE(broken("\"minimize\"", "\"lower\"").find("m.json: target.goal: 'lower': expected minimize or maximize"), std::string::npos);
}

// The target's direction travels with the record; records from before it existed minimize.
TEST(Record, TargetGoalRoundTripsAndDefaultsToMinimize) {
  auto r = simulate(plan_from_yaml_text(kPlan, "p.yaml"), calibrated_builtin_profile("summit"));
  EXPECT_FALSE(r.target_maximize);
  r.target_maximize = true;
  EXPECT_TRUE(record_from_json(record_to_json(r), "r.json").target_maximize);
  auto text = record_to_json(r);
  const auto at = text.find("\"goal\": \"maximize\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 6, "\"note\"");  // as an older record: no goal
  EXPECT_FALSE(record_from_json(text, "old.json").target_maximize);
}

TEST(Plan, BadInputsGiveOneClearMessage) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string s = kPlan;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_EQ(error_of([&] { plan_from_yaml_text(with("method: mrt", "method: mrt\ncolour: red"), "p.yaml"); }),
            "p.yaml: colour: unknown key (expected one of: name, workload, workload_options, machine, scaling, method, precision, "
            "steps, software, dataset, target, comm, io, stages, data, checkpoint_every)");
  EXPECT_EQ(error_of([&] { plan_from_yaml_text(with("gpus: 32, local_batch: 8, stop: {t", "gpus: many, local_batch: 8, stop: {t"), "p.yaml"); }),
            "p.yaml: stages[1].gpus: expected a decimal integer (no leading zeros, no fraction), got 'many'");
  EXPECT_EQ(error_of([&] { plan_from_yaml_text(with("value: 0.0025}", "value: 0.0025, precise_bn_batches: -1}"), "p.yaml"); }),
            "p.yaml: target.precise_bn_batches: must be >= 0 (0: the running averages)");
  EXPECT_EQ(error_of([&] { plan_from_yaml_text(with("method: mrt", "method: mrt\nscaling: linear"), "p.yaml"); }),
            "p.yaml: scaling: unknown scaling 'linear' (expected strong: keep the global batch, or weak: keep the local batch)");
  EXPECT_NE(error_of([&] { plan_from_yaml_text(with("local_batch: 8, stop: {s", "global_batch: 16, stop: {s"), "p.yaml"); })
                .find("global batch 16 is smaller than the 32 GPUs"),
            std::string::npos);
  EXPECT_EQ(error_of([] { load_plan_file("/nonexistent/plan.yaml"); }), "/nonexistent/plan.yaml: file not found");
  // GPUs not a multiple of GPUs per node, when the machine allocates whole nodes
  auto m = calibrated_builtin_profile("summit");
  m.whole_nodes = true;
  EXPECT_NE(error_of([&] { prepare(plan_from_yaml_text(kPlan, "p.yaml"), m); })
                .find("p.yaml: stages[0].gpus: 32 GPUs is not a multiple of the 6 GPUs per node"),
            std::string::npos);
  EXPECT_NE(error_of([&] { prepare(plan_from_yaml_text(with("workload: cosmoflow-mrt", "workload: resnet"), "p.yaml"),
                                   calibrated_builtin_profile("summit")); })
                .find("p.yaml: workload: "),
            std::string::npos);
}

TEST(Profile, YamlRoundTripAndBadValues) {
  const auto& m = calibrated_builtin_profile("summit");
  const auto back = profile_from_yaml_text(profile_to_yaml(m), "s.yaml");
  EXPECT_EQ(profile_to_yaml(back), profile_to_yaml(profile_from_yaml_text(profile_to_yaml(back), "s2.yaml")));
  const Plan p = builtin_plan("cosmoflow-mrt@summit");
  EXPECT_NEAR(simulate(p, m).totals.time_to_target_s, simulate(p, back).totals.time_to_target_s,
              1e-6 * simulate(p, m).totals.time_to_target_s);
  std::string y = profile_to_yaml(m);
  const std::string key = "per_node_bandwidth_GBps: ";
  y.insert(y.find(key) + key.size(), "-");
  EXPECT_NE(error_of([&] { profile_from_yaml_text(y, "s.yaml"); }).find("s.yaml: io.tiers.pfs.per_node_bandwidth_GBps: expected a positive number"),
            std::string::npos);
}

TEST(Simulator, SwitchRuleAndTransferReproduceTheCalibrationRow) {
  // Table I: 55 coarse + 54 dense epochs; the rule's switch is what the record reports
  const auto r = simulate(builtin_plan("cosmoflow-mrt@summit"), calibrated_builtin_profile("summit"));
  ASSERT_EQ(r.stages.size(), 2u);
  EXPECT_DOUBLE_EQ(*r.stages[0].single().switch_epoch, 55);
  EXPECT_DOUBLE_EQ(r.stages[1].epochs, 54);
  EXPECT_TRUE(r.totals.reached_target);
}

TEST(Simulator, FewerIterationsMeanFewerSynchronisations) {
  // Table VII's remark: a larger local batch -> fewer allreduces per epoch -> less comm per epoch
  const auto& m = calibrated_builtin_profile("summit");
  Plan small = builtin_plan("deepcam-coarse@summit");
  Plan big = small;
  small.stages[0].models[0].local_batch = 2;
  const auto a = prepare(small, m), b = prepare(big, m);
  EXPECT_GT(a.stages[0].models[0].iterations_per_epoch, b.stages[0].models[0].iterations_per_epoch);
  EXPECT_GT(a.stages[0].models[0].first_epoch.comm_s, b.stages[0].models[0].first_epoch.comm_s);
}

namespace {

// The coarse CosmoFlow stage on Summit, costed with the calibrated profile and with `tweak` applied to it.
std::pair<ModelCosts, ModelCosts> coarse_stage_before_after(const std::function<void(MachineProfile&)>& tweak) {
  auto m = calibrated_builtin_profile("summit");
  const Plan p = builtin_plan("cosmoflow-coarse@summit");
  const auto before = prepare(p, m).stages[0].models[0];
  tweak(m);
  return {before, prepare(p, m).stages[0].models[0]};
}

}  // namespace

TEST(Simulator, StepFactorsScaleTheirPhaseNotTheOptimizer) {
  const auto [a, b] = coarse_stage_before_after([](MachineProfile& m) { m.compute.step_forward.factor = m.compute.step_backward.factor = 1.5; });
  EXPECT_NEAR(b.compute_iter_s - b.optimizer_iter_s, 1.5 * (a.compute_iter_s - a.optimizer_iter_s), 1e-12);
  EXPECT_DOUBLE_EQ(b.optimizer_iter_s, a.optimizer_iter_s);
  const auto [c, d] = coarse_stage_before_after([](MachineProfile& m) { m.compute.step_forward.factor = 2; });
  EXPECT_NEAR(d.forward_iter_s, 2 * c.forward_iter_s, 1e-12);
  EXPECT_DOUBLE_EQ(d.backward_iter_s, c.backward_iter_s);
}

TEST(Simulator, PooledBatchNormWaitsInlineAndRoundTrips) {
  auto m = calibrated_builtin_profile("summit");
  Plan p = builtin_plan("cosmoflow-coarse@summit");
  const auto a = prepare(p, m).stages[0].models[0];
  p.batchnorm_group = 2;
  const Plan q = plan_from_yaml_text(plan_to_yaml(p), "again.yaml");
  EXPECT_EQ(q.batchnorm_group, 2);
  const auto b = prepare(q, m).stages[0].models[0];
  EXPECT_EQ(a.sync_batchnorm_iter_s, 0.0);
  EXPECT_GT(b.sync_batchnorm_iter_s, 0.0);
  EXPECT_DOUBLE_EQ(b.compute_iter_s, a.compute_iter_s);
  EXPECT_NEAR(b.comm_exposed_iter_s - a.comm_exposed_iter_s, b.sync_batchnorm_iter_s, 1e-12);
  // a plan without a group writes no key: its text (and hash) is what it was
  EXPECT_EQ(plan_to_yaml(builtin_plan("cosmoflow-coarse@summit")).find("batchnorm_group"), std::string::npos);
  // each layer's two collectives (forward, backward) pay the profile's cost per pooled collective
  const auto table = model_run_table(q, plan_network(q), q.stages[0].models[0]);
  const auto layers = std::count_if(table.layers.begin(), table.layers.end(), [](const auto& l) { return l.kind == OpKind::batch_norm; });
  ASSERT_GT(layers, 0);
  m.comm.sync_batchnorm_call_s = 1e-4;
  const auto c = prepare(q, m).stages[0].models[0];
  EXPECT_NEAR(c.sync_batchnorm_iter_s - b.sync_batchnorm_iter_s, 2.0 * static_cast<double>(layers) * 1e-4, 1e-12);
  EXPECT_EQ(prepare(builtin_plan("cosmoflow-coarse@summit"), m).stages[0].models[0].sync_batchnorm_iter_s, 0.0);
}

// MLPerf HPC DeepCAM's recipes pool batch norm over pairs of ranks at local batch 1 and not above.
TEST(Simulator, APlanPoolsBatchNormWhereARankHoldsTooFewSamples) {
  Plan p = builtin_plan("deepcam-mlperf@perlmutter");
  ASSERT_EQ(p.batchnorm_samples, 2);
  ModelRun run = p.stages[0].models[0];
  for (auto [local, gpus, ranks] : {std::tuple{8, 256, 1}, {2, 64, 1}, {1, 2048, 2}, {1, 1, 1}}) {
    run.local_batch = local, run.gpus = gpus;
    EXPECT_EQ(batchnorm_pool_ranks(p, run), ranks) << local << " " << gpus;
  }
  p.batchnorm_samples = 5, run.local_batch = 2, run.gpus = 64;
  EXPECT_EQ(batchnorm_pool_ranks(p, run), 3);  // as many ranks as hold 5 samples
  p.batchnorm_group = 4;
  EXPECT_EQ(batchnorm_pool_ranks(p, run), 4);  // the group where it is more
  // priced at 2048 GPUs, local batch 1, not at 2; the key round-trips
  auto m = calibrated_builtin_profile("perlmutter");
  const Plan again = plan_from_yaml_text(plan_to_yaml(builtin_plan("deepcam-mlperf@perlmutter")), "again.yaml");
  EXPECT_EQ(again.batchnorm_samples, 2);
  const auto at = [&](int gpus, int local) {
    Plan q = again;
    q.stages[0].models[0].gpus = gpus, q.stages[0].models[0].local_batch = local;
    return prepare(q, m).stages[0].models[0].sync_batchnorm_iter_s;
  };
  EXPECT_GT(at(2048, 1), 0.0);
  EXPECT_EQ(at(1024, 2), 0.0);
  std::string bad = plan_to_yaml(again);
  bad.replace(bad.find("batchnorm_samples: 2"), 20, "batchnorm_samples: -1");
  const auto e = error_of([&] { plan_from_yaml_text(bad, "bad.yaml"); });
  EXPECT_NE(e.find("comm.batchnorm_samples"), std::string::npos) << e;
  EXPECT_NE(e.find("must be >= 0"), std::string::npos) << e;
}

TEST(Simulator, EachFrameworkPaysItsOwnCostPerCall) {
  auto m = calibrated_builtin_profile("summit");
  m.comm.call_overhead_s = 1e-3;
  m.comm.horovod_call_overhead_s = 5e-3;
  Plan p = builtin_plan("cosmoflow-coarse@summit");  // TensorFlow + Horovod, no overlap
  ASSERT_EQ(p.framework, CommFramework::horovod);
  const auto hvd = prepare(p, m).stages[0].models[0];
  p.framework = CommFramework::ddp;
  const auto ddp = prepare(p, m).stages[0].models[0];
  ASSERT_GT(hvd.buckets, 0);
  EXPECT_NEAR(hvd.comm_exposed_iter_s - ddp.comm_exposed_iter_s, hvd.buckets * 4e-3, 1e-12);
  EXPECT_DOUBLE_EQ(hvd.compute_iter_s, ddp.compute_iter_s);
  // a profile without a Horovod cost prices every call at its one cost
  m.comm.horovod_call_overhead_s = 0;
  p.framework = CommFramework::horovod;
  EXPECT_DOUBLE_EQ(prepare(p, m).stages[0].models[0].comm_exposed_iter_s, ddp.comm_exposed_iter_s);
  // the key round-trips, and a DDP plan writes none (its text and hash stay as they were)
  EXPECT_EQ(plan_from_yaml_text(plan_to_yaml(p), "again.yaml").framework, CommFramework::horovod);
  EXPECT_EQ(plan_to_yaml(builtin_plan("deepcam-coarse@summit")).find("framework"), std::string::npos);
}

TEST(Simulator, ALoaderWithoutPersistentWorkersStartsThemAtEveryPass) {
  auto m = calibrated_builtin_profile("summit");
  m.io.worker_start_s = 1.5;
  m.compute.inference_factor = 0.5;  // so that a validation pass is modelled
  Plan p = builtin_plan("deepcam-coarse@summit");  // the MLPerf HPC reference's PyTorch DataLoader
  ASSERT_FALSE(p.persistent_workers);
  const auto restart = prepare(p, m).stages[0].models[0];
  p.persistent_workers = true;
  const auto keep = prepare(p, m).stages[0].models[0];
  ASSERT_GT(keep.eval_batches, 0);
  // once per training epoch and once per validation pass; the step does not change
  for (const auto& [r, k] : {std::pair{restart.first_epoch, keep.first_epoch}, std::pair{restart.later_epoch, keep.later_epoch}}) {
    EXPECT_NEAR(r.io_s - k.io_s, 1.5, 1e-9);
    EXPECT_NEAR(r.eval_s - k.eval_s, 1.5, 1e-9);
    EXPECT_DOUBLE_EQ(r.compute_s, k.compute_s);
    EXPECT_DOUBLE_EQ(r.comm_s, k.comm_s);
  }
  // the key round-trips, and a plan that keeps its workers writes none (its text and hash stay)
  p.persistent_workers = false;
  EXPECT_FALSE(plan_from_yaml_text(plan_to_yaml(p), "again.yaml").persistent_workers);
  EXPECT_EQ(plan_to_yaml(builtin_plan("cosmoflow-coarse@summit")).find("persistent_workers"), std::string::npos);
}

TEST(Simulator, RanksWaitForTheSlowestAsOrderStatisticsSay) {
  EXPECT_EQ(expected_max_std_normal(1), 0.0);
  EXPECT_NEAR(expected_max_std_normal(2), 1 / std::sqrt(M_PI), 1e-7);
  EXPECT_NEAR(expected_max_std_normal(3), 1.5 / std::sqrt(M_PI), 1e-7);
  EXPECT_NEAR(expected_max_std_normal(1000), 3.2414, 1e-3);  // tabulated (Tippett 1925)
  EXPECT_EQ(straggler_wait_s(0.2, 0.1, 1), 0.0);
  EXPECT_NEAR(straggler_wait_s(0.2, 0.1, 2), 0.02 / std::sqrt(M_PI), 1e-9);
  // in a stage: exposed comm grows by exactly that wait, compute does not change
  const auto [a, b] = coarse_stage_before_after([](MachineProfile& m) { m.compute.step_time_cv = 0.05; });
  EXPECT_DOUBLE_EQ(b.compute_iter_s, a.compute_iter_s);
  EXPECT_NEAR(b.comm_exposed_iter_s - a.comm_exposed_iter_s, straggler_wait_s(a.compute_iter_s, 0.05, a.gpus), 1e-12);
  // ranks sharing a node spread as calibrate sharing measured them; one rank per node as alone
  const auto [c, d] = coarse_stage_before_after([](MachineProfile& m) { m.compute.step_time_cv = 0.05, m.node_sharing.step_time_cv = 0.2; });
  EXPECT_NEAR(d.comm_exposed_iter_s - c.comm_exposed_iter_s, straggler_wait_s(c.compute_iter_s, 0.2, c.gpus), 1e-12);
  auto m = calibrated_builtin_profile("summit");
  m.gpus_per_node = 1;
  const Plan p = builtin_plan("cosmoflow-coarse@summit");
  const auto g = prepare(p, m).stages[0].models[0];
  m.compute.step_time_cv = 0.05, m.node_sharing.step_time_cv = 0.2;
  const auto h = prepare(p, m).stages[0].models[0];
  EXPECT_NEAR(h.comm_exposed_iter_s - g.comm_exposed_iter_s, straggler_wait_s(g.compute_iter_s, 0.05, g.gpus), 1e-12);
}

TEST(Simulator, AStageStartsUpByTouchingTheHeapItsProcessHasNotGrownYet) {
  ComputeParams::FirstTouch t{2.0, 4.0, 0.5e9};
  EXPECT_DOUBLE_EQ(step_working_set_bytes(t, 10e6, 1'000'000), 2.0 * 10e6 + 4.0 * 4e6);
  EXPECT_NEAR(startup_s(t, 100e6, 40e6), 60e6 / 0.5e9, 1e-15);
  EXPECT_EQ(startup_s(t, 100e6, 100e6), 0.0);
  EXPECT_EQ(startup_s(ComputeParams::FirstTouch{2.0, 4.0, 0.0}, 100e6, 0.0), 0.0);  // not measured
  // MRT: the coarse stage grows the heap first, the dense one pays only what it needs beyond that
  auto m = calibrated_builtin_profile("summit");
  const Plan p = builtin_plan("cosmoflow-mrt@summit");
  const auto before = prepare(p, m);
  m.compute.first_touch = t;
  const auto after = prepare(p, m);
  const auto& coarse = after.stages[0].models[0];
  const auto& dense = after.stages[1].models[0];
  ASSERT_GT(dense.working_set_bytes, coarse.working_set_bytes);
  EXPECT_NEAR(coarse.startup_s, coarse.working_set_bytes / 0.5e9, 1e-12);
  EXPECT_NEAR(dense.startup_s, (dense.working_set_bytes - coarse.working_set_bytes) / 0.5e9, 1e-12);
  for (size_t i = 0; i < 2; ++i) {  // once, in the first epoch's compute
    const auto& a = after.stages[i].models[0];
    const auto& b = before.stages[i].models[0];
    EXPECT_NEAR(a.first_epoch.compute_s - b.first_epoch.compute_s, a.startup_s, 1e-9);
    EXPECT_DOUBLE_EQ(a.later_epoch.compute_s, b.later_epoch.compute_s);
  }
  // and the profile keeps it
  const auto back = profile_from_yaml_text(profile_to_yaml(m), "t.yaml");
  EXPECT_DOUBLE_EQ(back.compute.first_touch.activation_factor, 2.0);
  EXPECT_DOUBLE_EQ(back.compute.first_touch.param_factor, 4.0);
  EXPECT_NEAR(back.compute.first_touch.bandwidth_Bps, 0.5e9, 1);
}

// A workload's warm-up (compute.warmup_s.W) is paid once per stage, in its first epoch, only by
// plans of that workload; the profile keeps it, and refuses a negative one naming the key.
TEST(Simulator, AWorkloadsWarmUpIsPaidInEachStagesFirstEpoch) {
  auto m = calibrated_builtin_profile("summit");
  const Plan p = builtin_plan("cosmoflow-mrt@summit");
  const auto before = prepare(p, m);
  m.compute.warmup_s["some-other-workload"] = 100;
  const auto other = prepare(p, m);
  m.compute.warmup_s[before.spec.name] = 7;
  const auto after = prepare(p, m);
  for (size_t i = 0; i < 2; ++i) {
    const auto& a = after.stages[i].models[0];
    const auto& b = before.stages[i].models[0];
    EXPECT_NEAR(a.first_epoch.compute_s - b.first_epoch.compute_s, 7.0, 1e-9);
    EXPECT_DOUBLE_EQ(a.later_epoch.compute_s, b.later_epoch.compute_s);
    EXPECT_DOUBLE_EQ(other.stages[i].models[0].first_epoch.compute_s, b.first_epoch.compute_s);
  }
  EXPECT_NEAR(simulate(after, m).totals.time_to_target_s - simulate(before, m).totals.time_to_target_s, 14.0, 1e-6);
  const std::string yaml = profile_to_yaml(m);
  const auto back = profile_from_yaml_text(yaml, "t.yaml");
  EXPECT_EQ(back.compute.warmup_s, m.compute.warmup_s);
  std::string bad = yaml;
  bad.replace(bad.find("some-other-workload: 100"), 24, "some-other-workload: -1");
  EXPECT_EQ(error_of([&] { profile_from_yaml_text(bad, "t.yaml"); }),
            "t.yaml: compute.warmup_s.some-other-workload: expected 0 <= value <= inf, got -1");
}

TEST(Simulator, AValidationPassIsTheRanksShareOfHeldOutSamplesForwardWithoutAutograd) {
  auto m = calibrated_builtin_profile("summit");
  // reads far faster than a forward, so a pass waits for its first batch only
  m.io.pfs = m.io.nvme = m.io.host_memory = {1e15, 1e15, 1e15, 0};
  m.io.host_decode_Bps = m.io.host_to_device_Bps = 1e15;
  Plan p = builtin_plan("cosmoflow-mrt@summit");
  p.validation_samples = 1000;
  p.precise_bn_batches = 3;
  const auto without = prepare(p, m);
  const auto r0 = simulate(without, m);
  for (const auto& c : without.stages) EXPECT_EQ(c.models[0].later_epoch.eval_s, 0.0);  // not measured: not predicted
  m.compute.inference_factor = 0.6;
  const auto with = prepare(p, m);
  const auto r1 = simulate(with, m);
  double added_s = 0;
  for (size_t i = 0; i < 2; ++i) {
    const auto& c = with.stages[i].models[0];
    const auto& st = p.stages[i];
    const double lb = st.models[0].local_batch;
    const double gpus = st.models[0].gpus;
    EXPECT_NEAR(c.inference_iter_s, 0.6 * c.forward_iter_s, 1e-15);
    // each rank: ceil(1000 / gpus) held-out samples, then 3 batches (or its whole share) recomputing batch norm
    const double held = std::ceil(1000 / gpus) / lb;
    const double recompute = std::min(3 * lb, std::ceil(static_cast<double>(p.train_samples) / gpus)) / lb;
    EXPECT_DOUBLE_EQ(c.eval_batches, held + recompute);
    // the forwards, plus each pass's first batch read, as an epoch's (the forwards hide the rest here)
    ASSERT_GT(c.later_epoch.io_s, 0);
    EXPECT_NEAR(c.later_epoch.eval_s, c.inference_iter_s * c.eval_batches + 2 * c.later_epoch.io_s, 1e-9 * c.later_epoch.eval_s);
    // training is what it was
    EXPECT_DOUBLE_EQ(c.later_epoch.compute_s, without.stages[i].models[0].later_epoch.compute_s);
    EXPECT_DOUBLE_EQ(c.later_epoch.io_s, without.stages[i].models[0].later_epoch.io_s);
    EXPECT_DOUBLE_EQ(r1.stages[i].epochs, r0.stages[i].epochs);
    const auto t = model_time(c, r1.stages[i].epochs);
    EXPECT_NEAR(r1.stages[i].eval_s, t.eval_s, 1e-12);
    EXPECT_NEAR(r1.stages[i].single().per_epoch.back().eval_s, c.later_epoch.eval_s, 1e-12);
    added_s += t.eval_s;
  }
  EXPECT_NEAR(r1.totals.time_to_target_s, r0.totals.time_to_target_s + added_s, 1e-9 * r1.totals.time_to_target_s);
  const auto back = profile_from_yaml_text(profile_to_yaml(m), "t.yaml");
  EXPECT_DOUBLE_EQ(back.compute.inference_factor, 0.6);
}

TEST(Simulator, SmallLocalBatchOnCoarseDataWastesTheGpu) {
  // MRT IV-C: compute per sample is worse at a small local batch on coarse data (from the curve)
  const auto& m = calibrated_builtin_profile("summit");
  Plan p = builtin_plan("deepcam-coarse@summit");
  auto per_sample = [&](int local) {
    p.stages[0].models[0].local_batch = local;
    const auto pp = prepare(p, m);
    return pp.stages[0].models[0].compute_iter_s / local;
  };
  EXPECT_GT(per_sample(2), 1.05 * per_sample(8));
}

TEST(Sweep, RulePointEqualsPredictAndForcedPointsVary) {
  const auto& m = calibrated_builtin_profile("summit");
  const Plan p = builtin_plan("cosmoflow-mrt@summit");
  SweepSpec spec;
  spec.switch_epochs = parse_range("10:90:10", "--switch");
  spec.gpus = {32, 64};
  const auto pts = run_sweep(p, m, spec, 2);
  ASSERT_EQ(pts.size(), 2u * (9 + 2));
  const auto r = simulate(p, m);
  bool seen = false;
  for (const auto& x : pts)
    if (x.role == SweepRole::rule && x.gpus == 32) {
      EXPECT_NEAR(x.time_to_target_s, r.totals.time_to_target_s, 1e-9 * x.time_to_target_s);
      seen = true;
    }
  EXPECT_TRUE(seen);
  EXPECT_EQ(sweep_csv(pts).rfind(
                "method,gpus,switch_epoch,coarse_epochs,dense_epochs,time_to_target_s,io_s,comm_s,compute_s,gpu_hours,", 0),
            0u);
  EXPECT_EQ(error_of([] { parse_range("10:5:1", "--switch"); }), "command line: --switch: '10:5:1': need FROM <= TO and STEP > 0");
  EXPECT_NE(error_of([&] { plan_at_gpus(p, 48, Scaling::strong); }).find("cannot split evenly"), std::string::npos);
}

TEST(Simulator, RanksSharingANodeSlowEachOtherDown) {
  NodeSharingParams c;
  c.slowdown = 1.2;
  EXPECT_DOUBLE_EQ(node_sharing_factor(c, 1, 6), 1.0);
  EXPECT_DOUBLE_EQ(node_sharing_factor(c, 6, 6), 1.2);
  EXPECT_DOUBLE_EQ(node_sharing_factor(c, 3, 6), 1.08);  // 2 of the 5 other ranks
  EXPECT_DOUBLE_EQ(node_sharing_factor(c, 2, 1), 1.0);
  // a full node: every part of the step scales; comm steal adds its share of the allreduce's time
  const auto [a, b] = coarse_stage_before_after([](MachineProfile& m) { m.node_sharing.slowdown = 1.2; });
  EXPECT_NEAR(b.compute_iter_s, 1.2 * a.compute_iter_s, 1e-12);
  const auto [d, e] = coarse_stage_before_after([](MachineProfile& m) { m.node_sharing.comm_steal_fraction = 0.5; });
  ASSERT_GT(d.comm_total_iter_s, 0);
  EXPECT_NEAR(e.compute_iter_s - d.compute_iter_s, 0.5 * d.comm_total_iter_s, 1e-12);
}

TEST(Plan, AStageWhoseNetworkCannotBeBuiltNamesTheResolutionAndSizesThatWork) {
  Plan p = plan_from_yaml_text(R"(name: cam96
workload: deepcam
workload_options: {size: 96, width: 0.125}
machine: summit
method: mrt
dataset: {train_samples: 64}
target: {metric: val_iou, value: 0.8, goal: maximize}
stages:
  - {name: coarse, resolution: 2, gpus: 1, local_batch: 4, stop: {epochs: 1}}
  - {name: dense, resolution: 1, gpus: 1, local_batch: 4, stop: {epochs: 1}}
)",
                               "cam96.yaml");
  const auto e = error_of([&] { prepare(p, calibrated_builtin_profile("summit")); });
  EXPECT_NE(e.find("cam96.yaml: stages.resolution: at resolution 2: "), std::string::npos) << e;
  EXPECT_NE(e.find("concat inputs differ in spatial size"), std::string::npos) << e;
  const auto sizes = nearest_working_sizes("deepcam", p.workload_options, {1, 2});
  EXPECT_NE(e.find(fmt::format("workload_options.size {} or {} works at resolutions 1, 2", sizes.at(0), sizes.at(1))), std::string::npos)
      << e;
}

TEST(Plan, AStageListsItsModelsAndTheOneModelFormIsShorthandForIt) {
  const Plan a = plan_from_yaml_text(kPlan, "p.yaml");
  // the same plan with the dense stage written as a list of one model
  std::string listed = kPlan;
  const std::string dense = "  - {name: dense, resolution: 1, gpus: 32, local_batch: 8, stop: {target: true}}\n";
  listed.replace(listed.find(dense), dense.size(),
                 "  - name: dense\n    models:\n      - {name: dense, resolution: 1, gpus: 32, local_batch: 8, stop: {target: true}}\n");
  const Plan b = plan_from_yaml_text(listed, "listed.yaml");
  EXPECT_EQ(plan_to_yaml(a), plan_to_yaml(b));
  ASSERT_EQ(b.stages[1].models.size(), 1u);
  EXPECT_EQ(b.stages[1].models[0].name, "dense");
  EXPECT_TRUE(b.stages[1].models[0].from_previous);
  // each model keeps its own stop, optimizer and learning rate; stage-level ones are their defaults
  const Plan c = plan_from_yaml_text(R"(name: two
workload: neuron-inverter
machine: perlmutter
method: baseline
dataset: {train_samples: 1024}
target: {metric: val_mse, value: 0.1}
stages:
  - name: only
    optimizer: sgd
    learning_rate: 0.5
    models:
      - {name: a, resolution: 1, gpus: 4, local_batch: 8, learning_rate: 0.1, stop: {iterations: 100}, init: scratch}
)",
                                     "two.yaml");
  const auto& m = c.stages[0].models[0];
  EXPECT_EQ(m.optimizer, Optimizer::sgd);
  EXPECT_DOUBLE_EQ(m.learning_rate, 0.1);
  EXPECT_EQ(m.stop.kind, StopRule::Kind::iterations);
  EXPECT_EQ(m.stop.iterations, 100);
  EXPECT_FALSE(m.from_previous);
  const Plan d = plan_from_yaml_text(plan_to_yaml(c), "again.yaml");
  EXPECT_EQ(plan_to_yaml(c), plan_to_yaml(d));
  // two models in one stage are MRMF's, not MRT's
  std::string two = kPlan;
  two.replace(two.find(dense), dense.size(),
              "  - name: dense\n    models:\n      - {name: x, resolution: 1, gpus: 16, local_batch: 8, stop: {epochs: 1}}\n"
              "      - {name: y, resolution: 1, gpus: 16, local_batch: 8, stop: {epochs: 1}}\n");
  EXPECT_EQ(error_of([&] { plan_from_yaml_text(two, "two.yaml"); }),
            "two.yaml: stages[1].models: an MRT stage trains one model; concurrent models (with a fusion) are MRMF's: method: mrmf");
}

TEST(Record, StagesHoldModelsWithTheirOwnBreakdownAndSchemaOneStillReads) {
  auto r = simulate(plan_from_yaml_text(kPlan, "p.yaml"), calibrated_builtin_profile("summit"));
  EXPECT_EQ(r.schema, "mrplan.record/2");
  // a stage of two concurrent models: each keeps its own epochs, curve and times
  auto& st = r.stages[0];
  st.models.push_back(st.models[0]);
  st.models[0].name = "low", st.models[1].name = "high";
  st.models[1].time_s = st.models[0].time_s * 2;
  st.models[1].per_epoch.resize(1);
  st.models[1].per_epoch[0].loss = 0.5;
  st.fusion_s = 1.5;
  finish_stage(st);
  EXPECT_DOUBLE_EQ(st.time_s, st.models[1].time_s + 1.5);  // the slower model plus the fusion
  EXPECT_EQ(st.gpus, 64);
  const auto back = record_from_json(record_to_json(r), "two.json");
  EXPECT_EQ(record_to_json(back), record_to_json(r));
  ASSERT_EQ(back.stages[0].models.size(), 2u);
  EXPECT_EQ(back.stages[0].models[1].name, "high");
  EXPECT_EQ(back.stages[0].models[1].per_epoch.size(), 1u);
  EXPECT_DOUBLE_EQ(*back.stages[0].models[1].per_epoch[0].loss, 0.5);
  EXPECT_DOUBLE_EQ(back.stages[0].fusion_s, 1.5);
  EXPECT_NE(error_of([&] { back.stages[0].single(); }).find("trains 2 models at once"), std::string::npos);
  // a schema-1 record: the one model's breakdown sat on its stage
  const std::string old = R"({"schema": "mrplan.record/1", "source": "measured", "plan": "p", "workload": "w", "machine": "local",
    "method": "baseline", "target": {"metric": "val_mse", "value": 0.2},
    "stages": [{"name": "dense", "models": [{"workload": "w", "resolution": 1, "gpus": 2, "local_batch": 8, "params": 10}],
                "gpus": 2, "global_batch": 16, "iterations_per_epoch": 48, "iterations": 96, "epochs": 2, "switch_epoch": null,
                "stop_reason": "target reached", "io_s": 0.1, "comm_s": 0.2, "compute_s": 3, "time_s": 3.5,
                "per_epoch": [{"epoch": 1, "io_s": 0.05, "comm_s": 0.1, "compute_s": 1.5, "epoch_s": 1.8, "loss": 0.3, "metric": 0.25},
                              {"epoch": 2, "io_s": 0.05, "comm_s": 0.1, "compute_s": 1.5, "epoch_s": 1.7, "loss": 0.2, "metric": 0.19}]}],
    "totals": {"time_to_target_s": 3.5, "gpu_hours": 0.002, "io_s": 0.1, "comm_s": 0.2, "compute_s": 3, "epochs": 2, "reached_target": true}})";
  const auto one = record_from_json(old, "old.json");
  EXPECT_EQ(one.schema, "mrplan.record/2");
  const auto& m = one.stages[0].single();
  EXPECT_EQ(m.name, "dense");
  EXPECT_EQ(m.iterations, 96);
  EXPECT_EQ(m.stop_reason, StopReason::target_reached);
  ASSERT_EQ(m.per_epoch.size(), 2u);
  EXPECT_DOUBLE_EQ(*m.per_epoch[1].metric, 0.19);
  EXPECT_DOUBLE_EQ(m.time_s, 3.5);
  EXPECT_DOUBLE_EQ(one.stages[0].time_s, 3.5);
  EXPECT_NE(error_of([&] { record_from_json(std::string(old).replace(old.find("record/1"), 8, "record/9"), "x.json"); })
                .find("x.json: schema: expected 'mrplan.record/2' (or 'mrplan.record/1'), got 'mrplan.record/9'"),
            std::string::npos);
  // one vocabulary: every reason round-trips by its text, another text is refused with the list
  for (const auto why : {StopReason::none, StopReason::target_reached, StopReason::target_missed, StopReason::epochs, StopReason::iterations,
                         StopReason::switch_rule, StopReason::switch_never_fired, StopReason::plateau, StopReason::forced_switch,
                         StopReason::max_epochs, StopReason::logged, StopReason::run_success, StopReason::run_aborted, StopReason::unknown}) {
    Record r = one;
    r.stages[0].models[0].stop_reason = why;
    EXPECT_EQ(record_from_json(record_to_json(r), "r.json").stages[0].single().stop_reason, why) << to_string(why);
  }
  const std::string typo = std::string(old).replace(old.find("target reached"), 14, "target reachd");
  EXPECT_NE(error_of([&] { record_from_json(typo, "t.json"); }).find("t.json: stages[0].stop_reason: expected \"target reached\""),
            std::string::npos)
      << error_of([&] { record_from_json(typo, "t.json"); });
}

TEST(Record, TheAllreducesAlgorithmIsPredictedAndItsLibraryMeasured) {
  Record r = simulate(builtin_plan("cosmoflow-mrt@summit"), calibrated_builtin_profile("summit"));
  ModelRecord& m = r.stages[0].models[0];
  EXPECT_NE(m.allreduce_algorithm, "");  // the cost model's choice
  EXPECT_EQ(m.allreduce_library, "");
  m.allreduce_library = "nccl";
  const auto back = record_from_json(record_to_json(r), "r.json").stages[0].models[0];
  EXPECT_EQ(back.allreduce_library, "nccl");
  EXPECT_EQ(back.allreduce_algorithm, m.allreduce_algorithm);
  // a measured record of before 2026-11-27 named its library as the algorithm
  m.allreduce_library = "", m.allreduce_algorithm = "mpi";
  const auto j = record_to_json(r);
  ASSERT_EQ(j.find("allreduce_library"), std::string::npos);
  const auto old = record_from_json(j, "old.json").stages[0].models[0];
  EXPECT_EQ(old.allreduce_library, "mpi");
  EXPECT_EQ(old.allreduce_algorithm, "");
}

TEST(PlanYaml, NumbersAreWrittenInTheirShortestRoundTripForm) {
  Plan p = builtin_plan("cosmoflow-mrt@summit");
  EXPECT_NE(plan_to_yaml(p).find("value: 0.0025,"), std::string::npos) << plan_to_yaml(p);
  p.target_value = 0.1 + 0.2;  // 0.30000000000000004: every digit needed
  p.stages[0].models[0].learning_rate = 1e-7;
  const auto back = plan_from_yaml_text(plan_to_yaml(p));
  EXPECT_EQ(back.target_value, p.target_value);
  EXPECT_EQ(back.stages[0].models[0].learning_rate, 1e-7);
  EXPECT_NE(plan_to_yaml(p).find("learning_rate: 1e-07"), std::string::npos);
}
