#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "calibrate/batch_epochs_fit.hpp"
#include "calibrate/calibrated_builtins.hpp"
#include "model/learning_curve.hpp"
#include "model/profile_yaml.hpp"
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
                const MachineProfile& profile, const std::string& recipe = "", const std::string& software = "") {
  Plan plan = builtin_plan("deepcam-mlperf@perlmutter", gpus);
  plan.stages[0].models[0].gpus = gpus, plan.stages[0].models[0].local_batch = local_batch;
  plan.software = software;
  Record r = simulate(plan, profile);
  r.source = Source::measured;
  r.machine = machine;
  r.stages[0].models[0].epochs = epochs;
  r.stages[0].models[0].recipe = recipe;
  return {file, r};
}

// The epochs to target the closed form gives at global batch `b`, plus half an epoch (where a run stops).
double epochs_at(const ConvergenceParams& cv, double target, double factor, double critical, double b) {
  ConvergenceParams q = cv;
  q.epoch_factor = factor, q.critical_batch = critical, q.tuned_factor.clear();  // not the built-in's own batches
  return *crossing_epoch(cv.dense_metric, target) * epoch_scale_for_batch(q, b) + 0.5;
}

const FittedParameter* find(const BatchEpochsFit& f, const std::string& key) { return mrplan::testing::find_fitted(f.fitted, key); }

TuningSlot at(int batch, const std::string& recipe = "") { return {batch, recipe_id(recipe)}; }

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

TEST(BatchEpochs, ASeedsSpreadIsReadAtItsRunsEpochs) {
  MachineProfile p = calibrated_builtin_profile("perlmutter");
  const auto& cv = p.convergence.at(kWorkload);
  const double target = simulate(builtin_plan("deepcam-mlperf@perlmutter", 64), p).target_value;
  // three seeds at a small batch (few epochs) spread by a, three at a large one by a sqrt(E_small / E_large)
  const double few = epochs_at(cv, target, 1, 700, 128) - 0.5, many = epochs_at(cv, target, 1, 700, 2048) - 0.5;
  const double a = 0.1, b = a * std::sqrt(few / many);
  std::vector<NamedRecord> own;
  double mean_few = 0, mean_many = 0;
  std::vector<double> crossings;
  for (int k = -1; k <= 1; ++k) {
    own.push_back(run("s.json", "mine", 64, 2, few * std::exp(k * a) + 0.5, p));
    own.push_back(run("l.json", "mine", 512, 4, many * std::exp(k * b) + 0.5, p));
    mean_few += few * std::exp(k * a) / 3, mean_many += many * std::exp(k * b) / 3;
    crossings.push_back(few * std::exp(k * a)), crossings.push_back(many * std::exp(k * b));
  }
  std::sort(crossings.begin(), crossings.end());
  const double ref = (crossings[2] + crossings[3]) / 2;  // the runs' median crossing
  MachineProfile fitted = p;
  const auto fits = fit_batch_epochs(fitted, own, {});
  const auto* spread = find(fits[0], "convergence.deepcam.seed_epochs_cv");
  const auto* at_epochs = find(fits[0], "convergence.deepcam.seed_epochs_ref");
  ASSERT_NE(spread, nullptr);
  ASSERT_NE(at_epochs, nullptr);
  EXPECT_NEAR(at_epochs->value, ref, 1e-9);
  // each group's squared deviations (2a^2, 2b^2) scaled to the reference by its mean crossing, over 4 dof
  EXPECT_NEAR(spread->value, std::sqrt((2 * a * a * mean_few + 2 * b * b * mean_many) / ref / 4), 1e-9);
  EXPECT_EQ(fitted.convergence.at(kWorkload).seed_epochs_ref, at_epochs->value);
  // a draw at the reference moves a run of 4x its epochs half as far
  ConvergenceParams q = fitted.convergence.at(kWorkload);
  q.seed_epoch_factor = 1.2;
  EXPECT_NEAR(seed_factor_at(q, 4 * ref), 1.1, 1e-12);
  EXPECT_NEAR(seed_factor_at(q, ref / 4), 1.4, 1e-12);
  q.seed_epochs_ref = 0;  // a spread not read at any epochs (calibrate convergence's): the draw as it is
  EXPECT_DOUBLE_EQ(seed_factor_at(q, 4), 1.2);
}

TEST(BatchEpochs, ASeedsDrawIsUndoneExactlyAndIsNoPartOfTheBatchsScale) {
  ConvergenceParams q;
  q.seed_epochs_ref = 16, q.seed_epoch_factor = 1.2;
  EXPECT_NEAR(seeded_epochs(q, 64), 64 * 1.1, 1e-12);  // sqrt(16 / 64) of the draw's 20%
  for (const double f : {0.05, 0.5, 0.9, 1.0, 1.3, 3.0})
    for (const double e : {0.2, 1.0, 7.5, 16.0, 40.0, 300.0}) {
      q.seed_epoch_factor = f;
      EXPECT_NEAR(unseeded_epochs(q, seeded_epochs(q, e)), e, 1e-9 * e) << "factor " << f << " at " << e << " epochs";
    }
  q.seed_epoch_factor = 0.05;  // below seed_factor_at's floor at few epochs: a tenth
  EXPECT_NEAR(seeded_epochs(q, 1), 0.1, 1e-12);
  q.seed_epochs_ref = 0;
  q.seed_epoch_factor = 1.25;
  EXPECT_DOUBLE_EQ(unseeded_epochs(q, 10), 8);
  const double unseeded = epoch_scale_for_batch(q, 512);
  q.seed_epoch_factor = 1;
  EXPECT_DOUBLE_EQ(epoch_scale_for_batch(q, 512), unseeded);
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

// Three systems at two batches on the population curve (factor 1, critical batch 700), each
// shifted by its own factor (0.8, 1.0, 1.25) at both batches, or, `retuned`, at the smaller one only
// (all 1.0 at the larger: what a system shows at one batch says little of another). A seed spreads
// them 3% at the smaller batch, less at the larger's more epochs (as their square root).
std::vector<NamedRecord> population(const MachineProfile& p, double target, bool retuned = false) {
  const auto& cv = p.convergence.at(kWorkload);
  std::vector<NamedRecord> out;
  const std::vector<std::pair<std::string, double>> systems = {{"a", 0.8}, {"b", 1.0}, {"c", 1.25}};
  const double fewer = std::sqrt(epochs_at(cv, target, 1, 700, 128) / epochs_at(cv, target, 1, 700, 2048));
  for (const auto& [name, f] : systems)
    for (int seed = 0; seed < 3; ++seed) {
      const double jitter = 0.03 * (seed - 1);  // a seed's spread within a system
      out.push_back(run(name + std::to_string(seed) + "-small.json", name, 64, 2, epochs_at(cv, target, f * (1 + jitter), 700, 128), p));
      out.push_back(run(name + std::to_string(seed) + "-large.json", name, 512, 4,
                        epochs_at(cv, target, (retuned ? 1.0 : f) * (1 + jitter * fewer), 700, 2048), p));
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
  EXPECT_EQ(f.systems[0].name, "(fitted)");
  EXPECT_LT(f.systems[0].shrinkage, 0.05);  // nine runs against a between-system spread of ~25%: its own
  EXPECT_NEAR(find(f, "convergence.deepcam.epoch_factor")->value, 1.6, 0.08);
  EXPECT_NEAR(fitted.convergence.at(kWorkload).epoch_factor, find(f, "convergence.deepcam.epoch_factor")->value, 1e-12);
  // the other systems' deviations persist across their two batches: a batch's tuning is at its
  // floor, so the fitted system's deviation is its factor, and its runs are reproduced at their batch
  EXPECT_LT(f.tuning_sd, 0.03);
  EXPECT_NEAR(f.systems[0].tuning.at(at(128)), 1.0, 0.02);
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
  // no runs of its own: no batch it is tuned at, and a batch's tuning drawn from the others' spread
  EXPECT_TRUE(fitted.convergence.at(kWorkload).tuned_factor.empty());
  EXPECT_NEAR(find(f, "convergence.deepcam.batch_tuning_cv")->value, f.tuning_sd, 1e-12);
}

namespace {

// Perlmutter's profile, DeepCAM's target, and a system's three runs at global batch 128, 1.3x the
// population curve the other systems are made from.
struct OneBatchSystem {
  MachineProfile profile;
  double target = 0;
  std::vector<NamedRecord> own;
};
OneBatchSystem one_batch_system() {
  OneBatchSystem out{calibrated_builtin_profile("perlmutter"), 0, {}};
  const auto& cv = out.profile.convergence.at(kWorkload);
  out.target = simulate(builtin_plan("deepcam-mlperf@perlmutter", 64), out.profile).target_value;
  for (int i = 0; i < 3; ++i)
    out.own.push_back(run("m" + std::to_string(i) + ".json", "mine", 64, 2, epochs_at(cv, out.target, 1.3, 700, 128), out.profile));
  return out;
}

// The fitted system's epochs at global batch `b`, as the simulator prices them (no draw), over the
// curve every test population is made from (factor 1, critical batch 700).
double over_truth(const MachineProfile& m, double b, const std::string& recipe = "") {
  ConvergenceParams truth = m.convergence.at(kWorkload);
  truth.epoch_factor = 1, truth.critical_batch = 700, truth.tuned_factor.clear();
  return epoch_scale_for_batch(m.convergence.at(kWorkload), b, recipe) / epoch_scale_for_batch(truth, b);
}

}  // namespace

TEST(BatchEpochs, ADeviationThatPersistsOnTheOtherSystemsIsCarriedToAnotherBatch) {
  const auto [p, target, own] = one_batch_system();
  MachineProfile fitted = p;
  const auto f = fit_batch_epochs(fitted, own, population(p, target))[0];
  // at its batch, its runs; at 16x the batch, still ~1.3x the population (pulled a little toward it)
  EXPECT_NEAR(over_truth(fitted, 128), 1.3, 0.05);
  EXPECT_GT(over_truth(fitted, 2048), 1.2);
}

TEST(BatchEpochs, ADeviationTheOtherSystemsRetuneAwayStaysAtItsBatch) {
  const auto [p, target, own] = one_batch_system();
  MachineProfile fitted = p;
  const auto f = fit_batch_epochs(fitted, own, population(p, target, true))[0];
  EXPECT_GT(f.tuning_sd, 0.1);  // the three systems' cells about their means: ~0.13 in log
  EXPECT_GT(f.tuning_sd, f.system_sd);
  // its own batch keeps its runs' epochs (the tuning there); another batch carries less than half
  // of its deviation
  for (const auto& o : f.observations)
    if (o.machine == "(fitted)") {
      EXPECT_EQ(o.fitted, std::ceil(o.measured - 0.5)) << o.record;
    }
  EXPECT_NEAR(over_truth(fitted, 128), 1.3, 0.05);
  EXPECT_LT(over_truth(fitted, 2048), 1.14);
  ASSERT_NE(find(f, "convergence.deepcam.tuned_factor.128"), nullptr);
  EXPECT_GT(fitted.convergence.at(kWorkload).tuned_factor.at(at(128)), 1.1);
  // a batch its runs did not train at draws its tuning: the band at 2048 is wider than at 128
  DrawSources fits_and_tuning = drawn_alone(&DrawSources::tuning);
  fits_and_tuning.fitted = true;
  auto spread_at = [&](double batch) {
    std::vector<double> e;
    for (const auto& d : draw_profiles(fitted, kWorkload, 4000, 3, fits_and_tuning).profiles)
      e.push_back(epoch_scale_for_batch(d.convergence.at(kWorkload), batch));
    const auto q = quantiles_of(e);
    return q.p90 / q.p10;
  };
  EXPECT_GT(spread_at(2048), spread_at(128) + 0.1);
}

TEST(BatchEpochs, ASystemAtTwoBatchesKeepsBoth) {
  MachineProfile p = calibrated_builtin_profile("perlmutter");
  const auto& cv = p.convergence.at(kWorkload);
  const double target = simulate(builtin_plan("deepcam-mlperf@perlmutter", 64), p).target_value;
  std::vector<NamedRecord> own;
  for (int i = 0; i < 3; ++i) {  // 1.3x the population at 128, 0.9x at 2048: retuned
    own.push_back(run("s" + std::to_string(i) + ".json", "mine", 64, 2, epochs_at(cv, target, 1.3, 700, 128), p));
    own.push_back(run("l" + std::to_string(i) + ".json", "mine", 512, 4, epochs_at(cv, target, 0.9, 700, 2048), p));
  }
  MachineProfile fitted = p;
  const auto f = fit_batch_epochs(fitted, own, population(p, target, true))[0];
  for (const auto& o : f.observations)
    if (o.machine == "(fitted)") {
      EXPECT_NEAR(o.fitted, o.measured, 0.05 * o.measured) << o.record;
    }
  const auto& tuned = fitted.convergence.at(kWorkload).tuned_factor;
  ASSERT_EQ(tuned.size(), 2u);
  EXPECT_GT(tuned.at(at(128)) / tuned.at(at(2048)), 1.2);
}

TEST(BatchEpochs, MachinesThatRanOneCodeShareItsEffect) {
  // the fitted records and eos ran one code (their plans name its ML framework), 0.7x the population;
  // eos at two batches. Two other codes and a machine whose runs name no framework, at both batches.
  auto [p, target, own] = one_batch_system();
  const auto& cv = p.convergence.at(kWorkload);
  const std::string ngc = "pytorch nvidia release";
  for (int i = 0; i < 3; ++i)
    own[i] = run("m" + std::to_string(i) + ".json", "mine", 64, 2, epochs_at(cv, target, 0.7, 700, 128), p, "", ngc);
  struct Other {
    std::string machine, software;
    double factor;
  };
  std::vector<NamedRecord> others;
  for (const auto& o : std::vector<Other>{{"eos", ngc, 0.7}, {"x", "mxnet", 1.0}, {"y", "tensorflow", 1.3}, {"plain", "", 1.0}})
    for (int seed = 0; seed < 3; ++seed) {
      const double f = o.factor * (1.0 + 0.03 * (seed - 1));
      const std::string name = o.machine + std::to_string(seed);
      others.push_back(run(name + "-small.json", o.machine, 64, 2, epochs_at(cv, target, f, 700, 128), p, "", o.software));
      others.push_back(run(name + "-large.json", o.machine, 512, 4, epochs_at(cv, target, f, 700, 2048), p, "", o.software));
    }
  MachineProfile fitted = p;
  const auto f = fit_batch_epochs(fitted, own, others)[0];
  ASSERT_EQ(f.systems.size(), 4u);
  EXPECT_EQ(f.systems[0].name, "(fitted)");
  EXPECT_EQ(f.systems[0].machines, std::vector<std::string>{"eos"});
  EXPECT_EQ(f.systems[0].runs, 9);
  EXPECT_EQ(f.systems[1].name, "deepcam on mxnet");
  EXPECT_EQ(f.systems[1].machines, std::vector<std::string>{"x"});
  EXPECT_EQ(f.systems[2].name, "deepcam on tensorflow");
  EXPECT_EQ(f.systems[3].name, "plain");  // no framework named: its machine
  EXPECT_TRUE(f.systems[3].machines.empty());
  // at a batch its own runs did not train at, its code's factor (eos's runs there), not the population's
  EXPECT_NEAR(over_truth(fitted, 2048), 0.7, 0.07);
  EXPECT_NEAR(over_truth(fitted, 128), 0.7, 0.07);
  // eos's runs at 2048 are its code's, not the fitted records' own: no tuning under that batch alone
  EXPECT_FALSE(fitted.convergence.at(kWorkload).tuned_factor.contains(at(2048)));
  EXPECT_NE(find(f, "convergence.deepcam.epoch_factor")
                ->source.find("(the effect of its code, deepcam on pytorch nvidia release, from 9 run(s): its own and those of eos)"),
            std::string::npos);
  for (const auto& o : f.observations)
    if (o.record.starts_with("eos")) {
      EXPECT_EQ(o.machine, "eos") << o.record;
    }
  EXPECT_TRUE(f.notes.empty());
  // records that name no framework are their machine's alone, and the fit says what would share it
  for (int i = 0; i < 3; ++i) own[i] = run("m" + std::to_string(i) + ".json", "mine", 64, 2, epochs_at(cv, target, 0.7, 700, 128), p);
  MachineProfile unnamed = p;
  const auto g = fit_batch_epochs(unnamed, own, others)[0];
  ASSERT_EQ(g.systems.size(), 5u);
  EXPECT_EQ(g.systems[1].name, "deepcam on pytorch nvidia release");
  ASSERT_EQ(g.notes.size(), 1u);
  EXPECT_NE(g.notes[0].find("name no ML framework (one code): their epochs' factor is their machine's alone"), std::string::npos);
  EXPECT_NE(g.notes[0].find("ingest-mllog --system-json"), std::string::npos);
}

TEST(BatchEpochs, TheTuningAppliesAtItsBatchAndTheDrawElsewhere) {
  ConvergenceParams cv;
  cv.critical_batch = 0, cv.epoch_factor = 2, cv.tuned_factor = {{at(128), 1.5}}, cv.tuning_draw = 0.8;
  EXPECT_DOUBLE_EQ(epoch_scale_for_batch(cv, 128), 3.0);
  EXPECT_DOUBLE_EQ(epoch_scale_for_batch(cv, 256), 1.6);
  EXPECT_DOUBLE_EQ(epoch_scale_for_batch(cv, 128.5), 1.6);
  // a recipe's tuning at its batch; a plan of another recipe draws, unless its system's own runs
  // trained at the batch; one that states none takes the one recipe measured there, and draws where two were
  cv.tuned_factor[at(2048, "lr=0.0055")] = 1.2;
  EXPECT_DOUBLE_EQ(epoch_scale_for_batch(cv, 2048, "lr=0.0055"), 2.4);
  EXPECT_DOUBLE_EQ(epoch_scale_for_batch(cv, 2048, "lr=0.004"), 1.6);
  EXPECT_DOUBLE_EQ(epoch_scale_for_batch(cv, 128, "lr=0.004"), 3.0);
  EXPECT_DOUBLE_EQ(epoch_scale_for_batch(cv, 2048), 2.4);
  cv.tuned_factor[at(2048, "lr=0.004")] = 0.9;
  EXPECT_DOUBLE_EQ(epoch_scale_for_batch(cv, 2048, "lr=0.004"), 1.8);
  EXPECT_DOUBLE_EQ(epoch_scale_for_batch(cv, 2048), 1.6);
}

TEST(BatchEpochs, ARecipesTuningIsMeasuredOnEverySystemThatRanIt) {
  // the fitted system ran a recipe made for a larger batch at 128 (1.5x the population there); three
  // systems ran the same two recipes at 128 and 2048, each at its own factor, 2048's recipe 0.8x the population
  auto [p, target, own] = one_batch_system();
  const auto& cv = p.convergence.at(kWorkload);
  for (int i = 0; i < 3; ++i) own[i] = run("m" + std::to_string(i) + ".json", "mine", 64, 2, epochs_at(cv, target, 1.5, 700, 128), p, "lr=0.0055");
  std::vector<NamedRecord> others;
  for (const auto& [name, f] : std::vector<std::pair<std::string, double>>{{"a", 0.95}, {"b", 1.0}, {"c", 1.05}})
    for (int seed = 0; seed < 3; ++seed) {
      const double jitter = 1.0 + 0.03 * (seed - 1);
      others.push_back(run(name + std::to_string(seed) + "-s.json", name, 64, 2, epochs_at(cv, target, f * jitter, 700, 128), p, "lr=0.00155"));
      others.push_back(run(name + std::to_string(seed) + "-l.json", name, 512, 4, epochs_at(cv, target, 0.8 * f * jitter, 700, 2048), p, "lr=0.0055"));
    }
  MachineProfile fitted = p;
  const auto f = fit_batch_epochs(fitted, own, others)[0];
  EXPECT_NEAR(over_truth(fitted, 128, "lr=0.0055"), 1.5, 0.08);  // its own runs, at their recipe and batch
  EXPECT_NEAR(over_truth(fitted, 2048, "lr=0.0055"), 0.8, 0.08);  // the recipe's at 2048, as the others ran it
  const auto* tuning = find(f, "convergence.deepcam.tuned_factor." + to_string(at(2048, "lr=0.0055")));
  ASSERT_NE(tuning, nullptr);
  EXPECT_NE(tuning->source.find("the runs of a, b, c there"), std::string::npos) << tuning->source;
  EXPECT_EQ(f.recipes.at(recipe_id("lr=0.0055")), "lr=0.0055");
  // its own runs' tuning is kept under their batch alone: a plan there takes it, recipe stated or not
  EXPECT_EQ(fitted.convergence.at(kWorkload).tuned_factor.count(at(128)), 1u);
  EXPECT_NEAR(over_truth(fitted, 128), 1.5, 0.08);
  // stated as runs without recipes, the same epochs are one system's tunings: its own deviation carries further
  for (auto& n : own) n.record.stages[0].models[0].recipe.clear();
  for (auto& n : others) n.record.stages[0].models[0].recipe.clear();
  MachineProfile unstated = p;
  fit_batch_epochs(unstated, own, others);
  EXPECT_GT(over_truth(unstated, 2048), over_truth(fitted, 2048, "lr=0.0055") + 0.1);
}

TEST(BatchEpochs, TheTuningsRoundTripAndABadBatchIsNamed) {
  const auto [p, target, own] = one_batch_system();
  MachineProfile fitted = p;
  fit_batch_epochs(fitted, own, population(p, target, true));
  const auto text = profile_to_yaml(fitted);
  const auto back = profile_from_yaml_text(text, "p.yaml");
  const auto& tuned = fitted.convergence.at(kWorkload).tuned_factor;  // 8 digits in the YAML
  ASSERT_EQ(back.convergence.at(kWorkload).tuned_factor.size(), 1u);
  EXPECT_NEAR(back.convergence.at(kWorkload).tuned_factor.at(at(128)), tuned.at(at(128)), 1e-7);
  EXPECT_NEAR(back.convergence.at(kWorkload).batch_tuning_cv, fitted.convergence.at(kWorkload).batch_tuning_cv, 1e-8);
  EXPECT_EQ(profile_to_yaml(back), text);
  auto bad = text;
  bad.replace(bad.find("tuned_factor: {128:"), 19, "tuned_factor: {12x:");
  EXPECT_NE(error_of([&] { profile_from_yaml_text(bad, "p.yaml"); }).find("p.yaml: convergence.deepcam.tuned_factor.12x: expected a global batch"),
            std::string::npos);
  auto recipe = text;  // a recipe's id is 8 hex digits
  recipe.replace(recipe.find("tuned_factor: {128:"), 19, "tuned_factor: {128/lr:");
  EXPECT_NE(error_of([&] { profile_from_yaml_text(recipe, "p.yaml"); }).find("tuned_factor.128/lr: expected a global batch (a positive integer), or one and a recipe's id (2048/1a2b3c4d)"),
            std::string::npos);
  auto with_id = text;  // the slot, its fitted entry and its correlations renamed alike
  with_id.insert(with_id.find("tuned_factor: {128:") + 18, "/0a1b2c3d");
  const std::string key = "convergence.deepcam.tuned_factor.128";
  for (auto at = with_id.find(key); at != std::string::npos; at = with_id.find(key, at + 1))
    if (with_id[at + key.size()] != '/') with_id.insert(at + key.size(), "/0a1b2c3d");
  EXPECT_EQ(profile_from_yaml_text(with_id, "p.yaml").convergence.at(kWorkload).tuned_factor.count({128, "0a1b2c3d"}), 1u);
}
