#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "calibrate/batch_epochs_fit.hpp"
#include "calibrate/calibrated_builtins.hpp"
#include "model/learning_curve.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/simulate.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/find_fitted.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

const char* kWorkload = "deepcam";

// A baseline run of DeepCAM at `gpus` x `local_batch` on `machine` that reached its target after
// `epochs` (fractional where a test wants the crossing exactly: half an epoch past it).
NamedRecord run(const std::string& file, const std::string& machine, int gpus, int local_batch, double epochs,
                const MachineProfile& profile) {
  Plan plan = builtin_plan("deepcam-mlperf@perlmutter", gpus);
  plan.stages[0].models[0].gpus = gpus, plan.stages[0].models[0].local_batch = local_batch;
  Record r = simulate(plan, profile);
  r.source = Source::measured;
  r.machine = machine;
  r.stages[0].models[0].epochs = epochs;
  return {file, r};
}

// The epochs to target the closed form gives at global batch `b`, plus half an epoch (where a run stops).
double epochs_at(const ConvergenceParams& cv, double target, double factor, double critical, double b) {
  ConvergenceParams q = cv;
  q.epoch_factor = factor, q.critical_batch = critical;
  return *crossing_epoch(cv.dense_metric, target) * epoch_scale_for_batch(q, b) + 0.5;
}

const FittedParameter* find(const BatchEpochsFit& f, const std::string& key) { return mrplan::testing::find_fitted(f.fitted, key); }

}  // namespace

TEST(BatchEpochs, RecoversTheFactorAndCriticalBatchThatMadeTheRuns) {
  MachineProfile p = calibrated_builtin_profile("perlmutter");
  const auto& cv = p.convergence.at(kWorkload);
  const double target = simulate(builtin_plan("deepcam-mlperf@perlmutter", 64), p).target_value;
  // own runs at one batch, another machine's at two: the factor is 0.7, the critical batch 700
  const std::vector<NamedRecord> own = {run("a.json", "mine", 64, 2, epochs_at(cv, target, 0.7, 700, 128), p)};
  const std::vector<NamedRecord> others = {run("b.json", "theirs", 64, 4, epochs_at(cv, target, 0.7, 700, 256), p),
                                           run("c.json", "theirs", 512, 4, epochs_at(cv, target, 0.7, 700, 2048), p)};
  MachineProfile fitted = p;
  const auto fits = fit_batch_epochs(fitted, own, others);
  ASSERT_EQ(fits.size(), 1u);
  const auto* factor = find(fits[0], "convergence.deepcam.epoch_factor");
  const auto* critical = find(fits[0], "convergence.deepcam.critical_batch");
  ASSERT_NE(factor, nullptr);
  ASSERT_NE(critical, nullptr);
  EXPECT_NEAR(factor->value, 0.7, 1e-6);
  EXPECT_NEAR(critical->value, 700, 1e-3);
  EXPECT_NEAR(fitted.convergence.at(kWorkload).epoch_factor, 0.7, 1e-6);  // the profile carries the fit
  EXPECT_NEAR(fitted.convergence.at(kWorkload).critical_batch, 700, 1e-3);
  // the fitted profile predicts another batch as the closed form does
  Plan larger = builtin_plan("deepcam-mlperf@perlmutter", 1024);
  larger.stages[0].models[0].gpus = 1024, larger.stages[0].models[0].local_batch = 1;
  EXPECT_EQ(simulate(larger, fitted).stages[0].epochs, std::ceil(epochs_at(cv, target, 0.7, 700, 1024) - 0.5));
}

TEST(BatchEpochs, OneGlobalBatchFitsTheFactorAndLeavesTheCriticalBatch) {
  MachineProfile p = calibrated_builtin_profile("perlmutter");
  p.convergence.at(kWorkload).critical_batch = 500;
  const auto& cv = p.convergence.at(kWorkload);
  const double target = simulate(builtin_plan("deepcam-mlperf@perlmutter", 64), p).target_value;
  // three seeds at one batch: the factor is their geometric mean, with their spread as its error
  std::vector<NamedRecord> own;
  for (double f : {0.9, 1.0, 1.1}) own.push_back(run("s.json", "mine", 64, 2, epochs_at(cv, target, f, 500, 128), p));
  MachineProfile fitted = p;
  const auto fits = fit_batch_epochs(fitted, own, {});
  const auto* factor = find(fits[0], "convergence.deepcam.epoch_factor");
  ASSERT_NE(factor, nullptr);
  EXPECT_NEAR(factor->value, std::cbrt(0.9 * 1.0 * 1.1), 1e-6);
  EXPECT_GT(factor->std_error, 0);
  // and their spread about it is the seed-to-seed spread the Monte Carlo draws
  const double m = std::log(0.9 * 1.1) / 3, rss = std::pow(std::log(0.9) - m, 2) + m * m + std::pow(std::log(1.1) - m, 2);
  const auto* spread = find(fits[0], "convergence.deepcam.seed_epochs_cv");
  ASSERT_NE(spread, nullptr);
  EXPECT_NEAR(spread->value, std::sqrt(rss / 2), 1e-6);
  EXPECT_EQ(fitted.convergence.at(kWorkload).seed_epochs_cv, spread->value);
  EXPECT_EQ(find(fits[0], "convergence.deepcam.critical_batch"), nullptr);
  EXPECT_EQ(fitted.convergence.at(kWorkload).critical_batch, 500);
  ASSERT_EQ(fits[0].at_prior.size(), 1u);
  EXPECT_NE(fits[0].at_prior[0].find("critical_batch (the runs share one global batch"), std::string::npos);
}

TEST(BatchEpochs, SaysWhatItSkipsAndRefusesAnotherWorkload) {
  MachineProfile p = calibrated_builtin_profile("perlmutter");
  auto unfinished = run("u.json", "mine", 64, 2, 30, p);
  unfinished.record.totals.reached_target = false;
  auto fine = run("f.json", "mine", 64, 2, 8, p);
  MachineProfile fitted = p;
  const auto fits = fit_batch_epochs(fitted, {unfinished, fine}, {});
  ASSERT_EQ(fits[0].skipped.size(), 1u);
  EXPECT_EQ(fits[0].skipped[0], "u.json: did not reach its target");
  EXPECT_EQ(fits[0].observations.size(), 1u);
  EXPECT_EQ(fit_batch_epochs(fitted, {fine}, {fine})[0].observations.size(), 1u);  // a record given twice counts once

  auto cosmo = fine;
  cosmo.file = "c.json";
  cosmo.record.workload = "cosmoflow-mlperf";
  EXPECT_NE(error_of([&] { fit_batch_epochs(fitted, {fine}, {cosmo}); })
                .find("c.json: workload: 'cosmoflow-mlperf' is not a workload of the fitted records (deepcam)"),
            std::string::npos);
}

namespace {

// Three systems at two batches each on the population curve (factor 1, critical batch 700), each
// shifted by its own factor; `mine`: the fitted system's runs.
std::vector<NamedRecord> population(const MachineProfile& p, double target) {
  const auto& cv = p.convergence.at(kWorkload);
  std::vector<NamedRecord> out;
  const std::vector<std::pair<std::string, double>> systems = {{"a", 0.8}, {"b", 1.0}, {"c", 1.25}};
  for (const auto& [name, f] : systems)
    for (int seed = 0; seed < 3; ++seed) {
      const double jitter = 1.0 + 0.03 * (seed - 1);  // a seed's spread within a system
      out.push_back(run(name + std::to_string(seed) + "-small.json", name, 64, 2, epochs_at(cv, target, f * jitter, 700, 128), p));
      out.push_back(run(name + std::to_string(seed) + "-large.json", name, 512, 4, epochs_at(cv, target, f * jitter, 700, 2048), p));
    }
  return out;
}

}  // namespace

TEST(BatchEpochs, ASystemWithManyRunsKeepsItsOwnFactor) {
  MachineProfile p = calibrated_builtin_profile("perlmutter");
  const auto& cv = p.convergence.at(kWorkload);
  const double target = simulate(builtin_plan("deepcam-mlperf@perlmutter", 64), p).target_value;
  std::vector<NamedRecord> own;
  for (int i = 0; i < 9; ++i) own.push_back(run("mine" + std::to_string(i) + ".json", "mine", 64, 2, epochs_at(cv, target, 1.6, 700, 128), p));
  MachineProfile fitted = p;
  const auto fits = fit_batch_epochs(fitted, own, population(p, target));
  ASSERT_EQ(fits.size(), 1u);
  const auto& f = fits[0];
  EXPECT_NEAR(f.population_factor, std::pow(0.8 * 1.0 * 1.25 * 1.6, 0.25), 0.06);  // the four systems' geometric mean
  EXPECT_NEAR(f.population_critical, 700, 70);
  ASSERT_EQ(f.systems.size(), 4u);
  EXPECT_EQ(f.systems[0].machine, "(fitted)");
  EXPECT_LT(f.systems[0].shrinkage, 0.05);  // nine runs against a between-system spread of ~25%: its own
  EXPECT_NEAR(find(f, "convergence.deepcam.epoch_factor")->value, 1.6, 0.08);
  EXPECT_NEAR(fitted.convergence.at(kWorkload).epoch_factor, find(f, "convergence.deepcam.epoch_factor")->value, 1e-12);
  // one batch: the prior splits its deviation between factor and critical batch, and the runs are
  // reproduced at their batch
  EXPECT_NEAR(f.systems[0].critical, f.population_critical, 0.1 * f.population_critical);
  for (const auto& o : f.observations) {
    if (o.machine == "(fitted)") {
      EXPECT_EQ(o.fitted, std::ceil(o.measured - 0.5)) << o.record;
    }
  }
  EXPECT_GT(f.system_sd, 0.15);
  EXPECT_LT(f.seed_sd, 0.06);
}

TEST(BatchEpochs, ASystemWithoutRunsGetsThePopulationsFactorAndTheSystemsSpread) {
  MachineProfile p = calibrated_builtin_profile("perlmutter");
  const double target = simulate(builtin_plan("deepcam-mlperf@perlmutter", 64), p).target_value;
  MachineProfile fitted = p;
  const auto fits = fit_batch_epochs(fitted, {}, population(p, target));
  ASSERT_EQ(fits.size(), 1u);
  const auto& f = fits[0];
  EXPECT_NEAR(find(f, "convergence.deepcam.epoch_factor")->value, f.population_factor, 1e-12);
  EXPECT_EQ(f.systems[0].runs, 0);
  EXPECT_DOUBLE_EQ(f.systems[0].shrinkage, 1.0);
  // a new system's next run spreads as the systems do: its factor carries their spread, drawn with
  // the parameters; a seed spreads as within a system
  const auto* factor = find(f, "convergence.deepcam.epoch_factor");
  EXPECT_GE(factor->std_error / factor->value, f.system_sd);
  EXPECT_NEAR(find(f, "convergence.deepcam.seed_epochs_cv")->value, f.seed_sd, 1e-12);
  EXPECT_GT(find(f, "convergence.deepcam.critical_batch")->std_error, 0.04 * f.population_critical);
}

TEST(BatchEpochs, ASystemAtOneBatchIsDrawnThroughItsRuns) {
  MachineProfile p = calibrated_builtin_profile("perlmutter");
  const auto& cv = p.convergence.at(kWorkload);
  const double target = simulate(builtin_plan("deepcam-mlperf@perlmutter", 64), p).target_value;
  std::vector<NamedRecord> own;
  for (int i = 0; i < 3; ++i) own.push_back(run("m" + std::to_string(i) + ".json", "mine", 64, 2, epochs_at(cv, target, 1.3, 700, 128), p));
  MachineProfile fitted = p;
  fit_batch_epochs(fitted, own, population(p, target));
  // the factor and the critical batch trade off along the runs' batch: kept as one block
  const std::vector<std::string> keys{"convergence.deepcam.critical_batch", "convergence.deepcam.epoch_factor"};
  const auto block = std::find_if(fitted.correlations.begin(), fitted.correlations.end(), [&](const FitCorrelation& c) { return c.keys == keys; });
  ASSERT_NE(block, fitted.correlations.end());
  EXPECT_LT(std::abs(block->matrix[1]), 1.0);
  // drawn together, the epochs at the runs' batch stay near theirs; the larger batch is what the
  // runs do not pin
  auto spread_at = [&](const MachineProfile& m, double batch) {
    const auto draws = draw_profiles(m, kWorkload, 4000, 3, {true, false, false, {}});
    std::vector<double> e;
    for (const auto& d : draws.profiles) e.push_back(epoch_scale_for_batch(d.convergence.at(kWorkload), batch));
    const auto q = quantiles_of(e);
    return q.p90 / q.p10;
  };
  EXPECT_LT(spread_at(fitted, 128), 1.1);
  EXPECT_GT(spread_at(fitted, 2048), spread_at(fitted, 128) + 0.05);
}

TEST(BatchEpochs, ASystemAtTwoBatchesGetsItsOwnCriticalBatch) {
  MachineProfile p = calibrated_builtin_profile("perlmutter");
  const auto& cv = p.convergence.at(kWorkload);
  const double target = simulate(builtin_plan("deepcam-mlperf@perlmutter", 64), p).target_value;
  std::vector<NamedRecord> own;
  for (int i = 0; i < 3; ++i) {
    own.push_back(run("s" + std::to_string(i) + ".json", "mine", 64, 2, epochs_at(cv, target, 1.0, 3000, 128), p));
    own.push_back(run("l" + std::to_string(i) + ".json", "mine", 512, 4, epochs_at(cv, target, 1.0, 3000, 2048), p));
  }
  MachineProfile fitted = p;
  const auto f = fit_batch_epochs(fitted, own, population(p, target))[0];
  EXPECT_GT(f.systems[0].critical, 1500);  // pulled from its runs' 3000 toward the population's 700, most of the way to its own
  for (const auto& o : f.observations)
    if (o.machine == "(fitted)") {
      EXPECT_NEAR(o.fitted, o.measured, 0.15 * o.measured) << o.record;
    }
}
