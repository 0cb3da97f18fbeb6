#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "calibrate/calibrated_builtins.hpp"
#include "calibrate/code_priors.hpp"
#include "calibrate/mllog_ingest.hpp"
#include "calibrate/system_json.hpp"
#include "model/hardware_catalogue.hpp"
#include "calibrate/records_fit.hpp"
#include "model/plan_yaml.hpp"
#include "model/profile_parameters.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/simulate.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/find_fitted.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

// What a run of `plan` measures on a machine whose parameters are `truth`: the simulator's own record.
NamedRecord measured_run(const std::string& name, Plan plan, int gpus, int local_batch, const MachineProfile& truth) {
  auto& m = plan.stages[0].models[0];
  m.gpus = gpus, m.local_batch = local_batch;
  Record r = simulate(plan, truth);
  r.source = Source::measured;
  r.plan_spec = plan_to_yaml(plan);
  return {name, r};
}

const FittedParameter* find(const RecordsFit& f, const std::string& key) { return mrplan::testing::find_fitted(f.fitted, key); }

}  // namespace

TEST(CalibrateRecords, RecoversTheParametersThatMadeTheRecords) {
  // an input pipeline fast enough that the runs are compute-bound: their times pin compute
  MachineProfile prior = calibrated_builtin_profile(before_mlperf("perlmutter"));
  prior.io.host_decode_Bps *= 100;
  prior.io.pfs.per_node_bandwidth_Bps *= 100;
  prior.io.pfs.aggregate_bandwidth_Bps *= 100;
  prior.io.host_memory.per_node_bandwidth_Bps *= 100;
  MachineProfile truth = prior;
  truth.compute.efficiency["conv2d"] = 0.3;  // about four times the prior's
  truth.compute.inference_factor = 0.4;
  const Plan plan = builtin_plan("deepcam-mlperf@perlmutter", 64);
  const std::vector<NamedRecord> runs = {measured_run("a.json", plan, 64, 2, truth), measured_run("b.json", plan, 512, 1, truth),
                                         measured_run("c.json", plan, 16, 8, truth)};
  MachineProfile fitted = prior;
  const auto fit = fit_records(fitted, runs);
  const auto* eff = find(fit, "compute.efficiency.conv2d");
  ASSERT_NE(eff, nullptr);
  EXPECT_NEAR(eff->value, 0.3, std::max(0.01 * 0.3, 2 * eff->std_error));
  const auto* inf = find(fit, "compute.inference_factor");
  ASSERT_NE(inf, nullptr);
  EXPECT_NEAR(inf->value, 0.4, std::max(0.01 * 0.4, 2 * inf->std_error));
  EXPECT_EQ(fitted.compute.efficiency["conv2d"], eff->value);  // the profile carries the fit...
  EXPECT_NE(std::find_if(fitted.fitted.begin(), fitted.fitted.end(),
                         [](const FittedParameter& p) {
                           return p.key == "compute.efficiency.conv2d" && p.source.find("b.json") != std::string::npos;
                         }),
            fitted.fitted.end());  // ...and names the records it came from, so validate marks them used
  for (const auto& o : fit.observations) EXPECT_NEAR(o.fitted, o.measured, 0.01 * o.measured) << o.record << " " << o.quantity;
  // a family the network does not use stays where it was
  EXPECT_NE(std::find(fit.at_prior.begin(), fit.at_prior.end(), "compute.efficiency.conv3d"), fit.at_prior.end());
}

// A validation pass's fixed part (the MXNet CosmoFlow of MLPerf HPC v1.0: about 1 s a pass) shows
// only across GPU counts, where each GPU validates another share of the held-out samples.
TEST(CalibrateRecords, AValidationPassesFixedPartNeedsTwoShares) {
  MachineProfile prior = calibrated_builtin_profile(before_mlperf("perlmutter"));
  prior.compute.inference_factor = 0.5;
  MachineProfile truth = prior;
  truth.compute.eval_pass_s = 0.8;
  const Plan plan = builtin_plan("deepcam-mlperf@perlmutter", 64);
  MachineProfile fitted = prior;
  const auto fit = fit_records(fitted, {measured_run("a.json", plan, 64, 2, truth), measured_run("b.json", plan, 512, 2, truth)});
  const auto* pass = find(fit, "compute.eval_pass_ms");
  ASSERT_NE(pass, nullptr);
  EXPECT_NEAR(pass->value, 800, std::max(8.0, 2 * pass->std_error));
  EXPECT_NEAR(fitted.compute.eval_pass_s, 0.8, 0.01);
  EXPECT_TRUE(fit.notes.empty());
  // a first epoch weighs a quarter as much as a steady one (its warm-up varies from run to run)
  for (const auto& o : fit.observations)
    EXPECT_NEAR(o.fitted, o.measured, (o.quantity == "first_epoch_s" ? 0.05 : 0.02) * o.measured) << o.record << " " << o.quantity;
  MachineProfile one = prior;
  const auto alone = fit_records(one, {measured_run("a.json", plan, 64, 2, truth)});
  EXPECT_EQ(find(alone, "compute.eval_pass_ms"), nullptr);
  EXPECT_TRUE(std::any_of(alone.notes.begin(), alone.notes.end(), [](const std::string& n) {
    return n.starts_with("compute.eval_pass_ms (a validation pass's part that does not shrink with its samples) is not fitted");
  }));
  EXPECT_EQ(one.compute.eval_pass_s, prior.compute.eval_pass_s);
}

// The first epoch pays the workload's warm-up and, where it reads another tier than the later ones,
// its share at the first tier's rate: runs at two counts (two shares a node) tell the two apart.
TEST(CalibrateRecords, TheFirstEpochFitsTheWarmUpAndTheFirstTiersRate) {
  MachineProfile prior = calibrated_builtin_profile(before_mlperf("perlmutter"));
  prior.compute.inference_factor = 0.5;
  MachineProfile truth = prior;
  truth.compute.warmup_s["deepcam"] = 10;
  truth.io.pfs.per_node_bandwidth_Bps = 4e9;
  const Plan plan = builtin_plan("deepcam-mlperf@perlmutter", 64);
  MachineProfile fitted = prior;
  // a first epoch weighs a quarter as much as a steady one: three runs at each count, as MLPerf HPC logs
  std::vector<NamedRecord> runs;
  for (const char* n : {"a", "b", "c"})
    runs.push_back(measured_run(std::string(n) + "512.json", plan, 512, 2, truth)), runs.push_back(measured_run(std::string(n) + "2048.json", plan, 2048, 1, truth));
  const auto fit = fit_records(fitted, runs);
  const auto* warm = find(fit, "compute.warmup_s.deepcam");
  ASSERT_NE(warm, nullptr);
  EXPECT_NEAR(warm->value, 10, 2.0);  // noiseless runs: the prior pulls it toward a second (8.4 s)
  const auto* pfs = find(fit, "io.tiers.pfs.per_node_bandwidth_GBps");
  ASSERT_NE(pfs, nullptr);
  EXPECT_NEAR(pfs->value, 4.0, std::max(0.4, 2 * pfs->std_error));
  EXPECT_EQ(std::count_if(fit.observations.begin(), fit.observations.end(), [](const RecordObservation& o) { return o.quantity == "first_epoch_s"; }), 6);
  // a tier's latency that only first epochs read is left out (a warm-up would stand in for it)
  EXPECT_EQ(find(fit, "io.tiers.pfs.per_file_latency_ms"), nullptr);
  EXPECT_EQ(std::find(fit.at_prior.begin(), fit.at_prior.end(), "io.tiers.pfs.per_file_latency_ms"), fit.at_prior.end());
}

// At one GPU count a first epoch's excess may be a warm-up or reads that shrink with a node's share:
// held near the same code's warm-up fitted at two counts where one is given, else fitted and said,
// and never passed on as a code's value.
TEST(CalibrateRecords, AWarmUpAtOneGPUCountIsHeldNearTheCodesFits) {
  MachineProfile prior = calibrated_builtin_profile(before_mlperf("perlmutter"));
  prior.compute.inference_factor = 0.5;
  MachineProfile truth = prior;
  truth.compute.warmup_s["deepcam"] = 30;
  Plan plan = builtin_plan("deepcam-mlperf@perlmutter", 64);
  plan.staging = Staging::host_memory;  // every epoch reads node memory: only a warm-up tells the first apart
  const std::string code = *code_of({plan});
  std::vector<NamedRecord> runs;
  for (const char* n : {"a", "b", "c"}) runs.push_back(measured_run(std::string(n) + ".json", plan, 512, 2, truth));

  MachineProfile alone = prior;
  const auto free = fit_records(alone, runs);
  const auto* warm = find(free, "compute.warmup_s.deepcam");
  ASSERT_NE(warm, nullptr);
  EXPECT_GT(warm->value, 10);  // the first epochs' excess, taken for a warm-up
  EXPECT_EQ(warm->source.find("; at two GPU counts of"), std::string::npos) << warm->source;
  EXPECT_TRUE(std::any_of(free.notes.begin(), free.notes.end(), [](const std::string& n) {
    return n.starts_with("compute.warmup_s.deepcam (the first epoch's warm-up) is fitted at one GPU count");
  }));
  EXPECT_FALSE(has_fits_of(alone, code));

  MachineProfile other;  // the same code fitted at two counts: a 2 s warm-up
  other.compute.warmup_s["deepcam"] = 2;
  other.fitted.push_back({"compute.warmup_s.deepcam", 2, 0.5, code_source("calibrate records: x.json, y.json", code)});
  MachineProfile held = prior;
  const auto near = fit_records(held, runs, {{"x.yaml", other}});
  const auto* given = find(near, "compute.warmup_s.deepcam");
  ASSERT_NE(given, nullptr);
  EXPECT_LT(given->value, 8);  // one machine's prior: +-100% (2 s), against a quarter-weighted first epoch
  EXPECT_EQ(given->source,
            "calibrate records at one GPU count, near the median of the warm-up of " + code + " fitted in x.yaml: a.json, b.json, c.json");
  ASSERT_EQ(held_near_priors(held).size(), 1u);
  EXPECT_EQ(held_near_priors(held)[0].key, "compute.warmup_s.deepcam");
  EXPECT_LE(given->std_error, 2.0);  // in seconds: no wider than its prior
  // the band's rows stay near the prior: held in seconds, 0 s is two sigmas off, not a tail without end
  std::vector<double> rows;
  for (const auto& block : held.correlations)
    for (size_t k = 0; k < block.keys.size(); ++k)
      if (block.keys[k] == "compute.warmup_s.deepcam")
        for (const auto& row : block.draws) rows.push_back(row[k]);
  ASSERT_FALSE(rows.empty());
  std::sort(rows.begin(), rows.end());
  EXPECT_GT(rows[rows.size() / 10], 0.1);
  EXPECT_LT(rows[9 * rows.size() / 10], 8.0);
}

// LBNL's v1.0 DeepCAM at 512 GPUs read its first epoch from the file system at about 0.6 GB/s a
// node (100 s beyond its steady epoch), far below the profile's 25 GB/s. Held near a code whose warm-up
// is 12.6 +- 2.8 s and whose step-time spread is 0.126 (DGX A100's built-in fits), the fit from the
// profile's rate alone settled at a 46 s warm-up, its first epochs 50% short; the tier's rate also
// starts where the first epochs' reads take their excess, and that fit is kept.
TEST(CalibrateRecords, TheFirstTiersRateStartsWhereTheFirstEpochsReadsTakeTheirExcess) {
  const std::string logs = std::string(MRPLAN_MLPERF_LOGS) + "/v1.0/LBNL/perlmutter_10x128x4_ngc21.09_pytorch/deepcam/";
  if (!std::filesystem::exists(logs)) GTEST_SKIP() << "no " << logs;
  // Perlmutter as its system description lists it (studies/mlperf-scaling/systems.txt), named as the built-in
  auto d = load_system_json(std::string(MRPLAN_MLPERF_LOGS) + "/v1.0/LBNL/systems/perlmutter_512x4_ngc21.09_pytorch.json", builtin_catalogue());
  d.request.node_network = "2x Slingshot-10", d.request.prior = "perlmutter-paper", d.request.name = "perlmutter";
  MachineProfile fitted = compose_profile(d.request, builtin_catalogue());
  MllogOptions o;
  o.machine = "perlmutter", o.software = d.software;
  std::vector<NamedRecord> runs;
  for (const char* n : {"result_1.txt", "result_2.txt", "result_3.txt"}) runs.push_back({n, load_mllog_file(logs + n, o)});
  const std::string code = *code_of({plan_from_yaml_text(runs[0].record.plan_spec, "result_1.txt")});
  MachineProfile other;
  for (const auto& [key, value, sd] : {std::tuple{"compute.warmup_s.deepcam", 12.576319114600887, 2.7862671280374784},
                                       {"compute.step_time_cv", 0.12599823105893312, 0.12823922272701288},
                                       {"compute.eval_pass_ms", 0.99982953540375652, 2.3019910006589224}})
    other.fitted.push_back({key, value, sd, code_source("calibrate records: x.json, y.json", code)});
  const auto fit = fit_records(fitted, runs, {{"dgx.yaml", other}});
  for (const auto& obs : fit.observations) {
    if (obs.quantity == "first_epoch_s") {
      EXPECT_NEAR(obs.fitted, obs.measured, 0.25 * obs.measured) << obs.record;
    }
  }
  const auto* pfs = find(fit, "io.tiers.pfs.per_node_bandwidth_GBps");
  ASSERT_NE(pfs, nullptr);
  EXPECT_LT(pfs->value, 1.0);
  EXPECT_LT(fitted.compute.warmup_s["deepcam"], 12.6 + 2 * 12.6);  // within two of its prior's sigmas (one machine's: +-100%)
}

// The wait for the slowest rank grows with the ranks: runs at two GPU counts fit it, one count
// cannot, unless other machines' fits give it a prior.
TEST(CalibrateRecords, TheWaitForTheSlowestRankNeedsTwoGPUCountsOrAPrior) {
  const MachineProfile prior = calibrated_builtin_profile(before_mlperf("perlmutter"));
  MachineProfile truth = prior;
  truth.compute.step_time_cv = 0.08;
  Plan plan = builtin_plan("cosmoflow-mlperf@perlmutter", 64);
  plan.framework = CommFramework::ddp;  // NVIDIA's PyTorch code (the built-in plan runs LBNL's, with Horovod)
  const auto small = measured_run("a.json", plan, 64, 1, truth), large = measured_run("b.json", plan, 1024, 1, truth);
  MachineProfile fitted = prior;
  const auto fit = fit_records(fitted, {small, large});
  const auto* cv = find(fit, "compute.step_time_cv");
  ASSERT_NE(cv, nullptr);
  EXPECT_NEAR(cv->value, 0.08, std::max(0.004, 2 * cv->std_error));
  // the code it belongs to, which code_priors reads back
  EXPECT_TRUE(cv->source.starts_with("calibrate records: a.json, b.json")) << cv->source;
  EXPECT_TRUE(cv->source.ends_with("; at two GPU counts of cosmoflow-mlperf with ddp")) << cv->source;
  EXPECT_TRUE(has_fits_of(fitted, "cosmoflow-mlperf with ddp"));
  for (const auto& o : fit.observations) EXPECT_NEAR(o.fitted, o.measured, 0.02 * o.measured) << o.record << " " << o.quantity;

  MachineProfile one = prior;
  const auto alone = fit_records(one, {small});
  EXPECT_EQ(find(alone, "compute.step_time_cv"), nullptr);
  EXPECT_TRUE(std::any_of(alone.notes.begin(), alone.notes.end(), [](const std::string& n) {
    return n.starts_with("compute.step_time_cv (the wait for the slowest rank, which grows with the ranks) is not fitted");
  }));
  EXPECT_EQ(one.compute.step_time_cv, 0);

  MachineProfile held = prior;
  MachineProfile other;  // a machine fitted at two counts of the same code
  other.compute.step_time_cv = 0.08;
  other.fitted.push_back({"compute.step_time_cv", 0.08, 0.008, code_source("calibrate records: x.json, y.json", "cosmoflow-mlperf with ddp")});
  const auto near = fit_records(held, {small}, {{"x.yaml", other}});
  const auto* given = find(near, "compute.step_time_cv");
  ASSERT_NE(given, nullptr);
  EXPECT_NEAR(given->value, 0.08, 0.01);  // the one count says nothing against it
  EXPECT_EQ(given->source, "calibrate records at one GPU count, near the median of the step-time spread of cosmoflow-mlperf with ddp fitted in x.yaml: a.json");
  ASSERT_EQ(held_near_priors(held).size(), 1u);
  EXPECT_EQ(held_near_priors(held)[0].prior, "the median of the step-time spread of cosmoflow-mlperf with ddp fitted in x.yaml");
}

namespace {

// Runs of `plan` at two (GPUs, local batch) on a machine where `key` is twice the prior's: the fit moves it
// up from the prior and reproduces the runs.
void fits_toward_the_truth(const Plan& plan, std::pair<int, int> run1, std::pair<int, int> run2, const std::string& key) {
  MachineProfile prior = calibrated_builtin_profile("summit");
  MachineProfile truth = prior;
  set_parameter(truth, key, 2 * parameter_value(prior, key));
  MachineProfile fitted = prior;
  const auto fit = fit_records(fitted, {measured_run("a.json", plan, run1.first, run1.second, truth),
                                        measured_run("b.json", plan, run2.first, run2.second, truth)});
  const auto* p = find(fit, key);
  ASSERT_NE(p, nullptr) << key;
  EXPECT_GT(p->value, parameter_value(prior, key)) << key;
  for (const auto& o : fit.observations) EXPECT_NEAR(o.fitted, o.measured, 0.02 * o.measured) << o.record << " " << o.quantity;
}

// A key a plan does not use stays out of the fit.
void left_out(const Plan& plan, int gpus, int local_batch, const std::string& key) {
  MachineProfile prior = calibrated_builtin_profile("summit");
  const auto fit = fit_records(prior, {measured_run("c.json", plan, gpus, local_batch, prior)});
  EXPECT_EQ(find(fit, key), nullptr) << key;
  EXPECT_EQ(std::find(fit.at_prior.begin(), fit.at_prior.end(), key), fit.at_prior.end()) << key;
}

}  // namespace

TEST(CalibrateRecords, AHorovodRunFitsHorovodsCost) {
  fits_toward_the_truth(builtin_plan("cosmoflow-coarse@summit"), {32, 8}, {64, 4}, "comm.horovod_call_overhead_us");  // TensorFlow + Horovod
  left_out(builtin_plan("deepcam-mlperf@perlmutter", 64), 64, 2, "comm.horovod_call_overhead_us");
}

// JUWELS Booster's v2.0 DeepCAM pools batch norm over two ranks at 2048 GPUs only; fitted without a
// cost per pooled collective, its kernels' overhead took 28 us and conv2d reached its peak.
TEST(CalibrateRecords, PooledBatchNormsCostIsFittedBesideRunsThatDoNotPool) {
  MachineProfile prior = calibrated_builtin_profile(before_mlperf("perlmutter"));
  MachineProfile truth = prior;
  truth.comm.sync_batchnorm_call_s = 100e-6;
  Plan pooled = builtin_plan("deepcam-mlperf@perlmutter", 64);
  pooled.batchnorm_group = 2;
  const Plan alone = builtin_plan("deepcam-mlperf@perlmutter", 64);
  ASSERT_EQ(alone.batchnorm_group, 1);
  MachineProfile fitted = prior;
  const auto fit = fit_records(fitted, {measured_run("a.json", alone, 64, 2, truth), measured_run("b.json", pooled, 512, 1, truth),
                                        measured_run("c.json", alone, 16, 8, truth)});
  const auto* p = find(fit, "comm.sync_batchnorm_call_us");
  ASSERT_NE(p, nullptr);
  EXPECT_NEAR(p->value, 100, std::max(10.0, 2 * p->std_error));
  for (const auto& o : fit.observations) EXPECT_NEAR(o.fitted, o.measured, 0.02 * o.measured) << o.record << " " << o.quantity;
  left_out(alone, 64, 2, "comm.sync_batchnorm_call_us");  // runs that do not pool cannot see it
}

TEST(CalibrateRecords, ALoaderThatRestartsFitsItsWorkerStart) {
  const Plan plan = builtin_plan("deepcam-coarse@summit");  // the reference's PyTorch DataLoader
  ASSERT_FALSE(plan.persistent_workers);
  // one GPU count: at two, a start paid per epoch and a wait for the slowest rank both make the
  // epoch shrink less than the ranks grow, and two points cannot tell them apart
  fits_toward_the_truth(plan, {64, 8}, {64, 4}, "io.worker_start_ms");
  left_out(builtin_plan("cosmoflow-coarse@summit"), 32, 8, "io.worker_start_ms");
}

TEST(CalibrateRecords, RefusesWhatItCannotFit) {
  MachineProfile p = calibrated_builtin_profile(before_mlperf("perlmutter"));
  Record pred = simulate(builtin_plan("deepcam-mlperf@perlmutter", 64), p);
  EXPECT_NE(error_of([&] {
              fit_records(p, {{"p.json", pred}});
            }).find("p.json: source: calibrate records fits measured records"),
            std::string::npos);
  pred.source = Source::measured;
  pred.plan_spec.clear();
  EXPECT_NE(error_of([&] {
              fit_records(p, {{"q.json", pred}});
            }).find("q.json: plan_spec: the record does not carry the plan"),
            std::string::npos);
}

// At one GPU count most parameters are only bounded: the normal their standard errors describe
// crosses cliffs the records refute (a rate drawn below what kept it hidden). The profile keeps rows
// of the fit's posterior instead, and each reproduces the run it was fitted to.
TEST(CalibrateRecords, TheBandDrawsRowsThatReproduceTheRecords) {
  MachineProfile truth = calibrated_builtin_profile(before_mlperf("perlmutter"));
  truth.compute.efficiency["conv2d"] *= 1.5;
  const Plan plan = builtin_plan("deepcam-mlperf@perlmutter", 64);
  const auto run = measured_run("a.json", plan, 64, 2, truth);
  MachineProfile fitted = calibrated_builtin_profile(before_mlperf("perlmutter"));
  const auto fit = fit_records(fitted, {run});
  EXPECT_NE(fit.band.find("rows of their posterior"), std::string::npos) << fit.band;
  const auto block = std::find_if(fitted.correlations.begin(), fitted.correlations.end(), [](const FitCorrelation& c) { return !c.draws.empty(); });
  ASSERT_NE(block, fitted.correlations.end());
  EXPECT_EQ(block->draws.size(), 200u);
  const Plan at64 = plan_from_yaml_text(run.record.plan_spec, "a.json");
  auto train_s = [&](const MachineProfile& p) {
    const Record r = simulate(at64, p);
    const auto& e = r.stages[0].models[0].per_epoch[2];
    return e.epoch_s - e.eval_s;
  };
  const double measured = train_s(truth);
  auto share_within = [&](const std::vector<MachineProfile>& profiles) {
    double near = 0;
    for (const auto& p : profiles) near += std::abs(train_s(p) / measured - 1) < 0.05 ? 1 : 0;
    return near / static_cast<double>(profiles.size());
  };
  std::vector<MachineProfile> rows;
  for (const auto& row : block->draws) {
    rows.push_back(fitted);
    for (size_t k = 0; k < row.size(); ++k) set_parameter(rows.back(), block->keys[k], row[k]);
  }
  MachineProfile normal = fitted;  // the same block drawn from its normal
  for (auto& c : normal.correlations) c.draws.clear();
  const double from_rows = share_within(rows),
               from_normal = share_within(draw_profiles(normal, "deepcam", 200, 3, fitted_alone()).profiles);
  EXPECT_GT(from_rows, 0.95) << from_rows;
  EXPECT_LT(from_normal, from_rows - 0.2) << from_normal;
}
