#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>

#include "calibrate/convergence_fit.hpp"
#include "calibrate/calibrated_builtins.hpp"
#include "model/errors.hpp"
#include "model/profile_parameters.hpp"
#include "model/profile_yaml.hpp"
#include "model/record.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/simulate.hpp"

using namespace mrplan;

namespace {

constexpr double kZ90 = 1.2815515655446004;  // the standard normal's 90th percentile

MachineProfile one_uncertain_parameter(double value_us, double se_us) {
  MachineProfile m = calibrated_builtin_profile("summit");
  m.fitted.clear();
  m.comm.call_overhead_s = value_us * 1e-6;
  record_fit(m, {"comm.call_overhead_us", value_us, se_us, "test"});
  return m;
}

// The spread's one line of width by source ("" where the record has none).
std::string width_line(const Record& r) {
  const auto line =
      std::find_if(r.warnings.begin(), r.warnings.end(), [](const std::string& w) { return w.starts_with("spread: P10-P90 width"); });
  return line == r.warnings.end() ? "" : *line;
}

}  // namespace

TEST(MonteCarlo, LinearFunctionOfOneNormalParameterHasTheNormalsQuantiles) {
  const double mu = 100, sd = 10;  // far from the bound at 0: the truncation does not show
  const auto draws = draw_profiles(one_uncertain_parameter(mu, sd), "cosmoflow-mrt", 20000, 7);
  std::vector<double> f;
  for (const auto& p : draws.profiles) f.push_back(3.0 + 2.0 * p.comm.call_overhead_s * 1e6);
  const auto q = quantiles_of(f);
  const double tol = 0.05 * 2.0 * sd;  // sampling error of a quantile of 20,000 draws is ~0.012 sd
  EXPECT_NEAR(q.p50, 3.0 + 2.0 * mu, tol);
  EXPECT_NEAR(q.p10, 3.0 + 2.0 * (mu - kZ90 * sd), tol);
  EXPECT_NEAR(q.p90, 3.0 + 2.0 * (mu + kZ90 * sd), tol);
}

TEST(MonteCarlo, SeedFactorFollowsTheMeasuredSpreadOrTheFlaggedDefault) {
  MachineProfile m = one_uncertain_parameter(100, 0);
  m.convergence["cosmoflow-mrt"].seed_epochs_cv = 0.05;
  const auto measured = draw_profiles(m, "cosmoflow-mrt", 20000, 3);
  std::vector<double> f;
  for (const auto& p : measured.profiles) f.push_back(p.convergence.at("cosmoflow-mrt").seed_epoch_factor);
  const auto q = quantiles_of(f);
  EXPECT_NEAR(q.p90 - q.p10, 2 * kZ90 * 0.05, 0.005);
  for (const auto& n : measured.notes) EXPECT_EQ(n.find("cosmoflow-mrt not measured"), std::string::npos) << n;
  const auto unknown = draw_profiles(m, "deepcam", 10, 3);
  ASSERT_FALSE(unknown.notes.empty());
  EXPECT_NE(unknown.notes.back().find("deepcam not measured: 20% assumed"), std::string::npos) << unknown.notes.back();
}

TEST(MonteCarlo, DrawsAreReproducibleFromTheirSeed) {
  const auto& m = calibrated_builtin_profile("perlmutter");
  const Plan plan = builtin_plan("cosmoflow-mrt@perlmutter");
  const auto a = plan_spread(plan, draw_profiles(m, "cosmoflow-mrt", 50, 11));
  const auto b = plan_spread(plan, draw_profiles(m, "cosmoflow-mrt", 50, 11));
  const auto c = plan_spread(plan, draw_profiles(m, "cosmoflow-mrt", 50, 12));
  EXPECT_EQ(a.time_to_target_s.p50, b.time_to_target_s.p50);
  EXPECT_NE(a.time_to_target_s.p50, c.time_to_target_s.p50);
  EXPECT_LT(a.time_to_target_s.p10, a.time_to_target_s.p50);
  EXPECT_LT(a.time_to_target_s.p50, a.time_to_target_s.p90);
  // the point prediction sits inside its own spread
  const double point = simulate(plan, m).totals.time_to_target_s;
  EXPECT_GT(point, a.time_to_target_s.p10);
  EXPECT_LT(point, a.time_to_target_s.p90);
}

TEST(MonteCarlo, TheBandsWidthIsSplitBySourceAndAnAssumedSeedSpreadIsNamed) {
  const Plan plan = builtin_plan("cosmoflow-mrt@summit");
  // the seeds the only source: drawing the fitted parameters alone gives no width
  MachineProfile m = one_uncertain_parameter(0, 0);
  m.convergence["cosmoflow-mrt"].seed_epochs_cv = 0;  // not measured: the 20% default, named
  Record r = simulate(plan, m);
  add_spread(r, plan, m, 400, 5);
  const auto line = width_line(r);
  ASSERT_FALSE(line.empty());
  EXPECT_NE(line.find("fitted parameters alone 1.00, seeds alone "), std::string::npos) << line;
  EXPECT_NE(
      line.find("run speed alone 1.00; the widest: seeds (20% assumed: calibrate convergence with records of several seeds measures it)"),
      std::string::npos)
      << line;
  // seeds drawn alone with the same seed as all sources: here the whole band
  const auto all = r.spread->time_to_target_s.p90 / r.spread->time_to_target_s.p10;
  EXPECT_NE(line.find(fmt::format("width (P90/P10) {:.2f}: ", all)), std::string::npos) << line;
  EXPECT_NE(line.find(fmt::format("seeds alone {:.2f}", all)), std::string::npos) << line;
}

TEST(MonteCarlo, AWidthFromAValueHeldNearOtherMachinesFitsNamesWhatMeasuresIt) {
  const Plan plan = builtin_plan("cosmoflow-mrt@summit");
  // one fitted parameter, wide and held near other machines' fits (its spread is theirs); the seeds narrow
  MachineProfile m = one_uncertain_parameter(0, 0);
  m.fitted.clear();
  m.compute.kernel_overhead_s = 400e-6;
  record_fit(m, {"compute.kernel_overhead_us", 400, 200,
                 std::string(kHeldNearPriorsSource) + "the median of a code's kernel costs fitted in x: r.json"});
  m.convergence["cosmoflow-mrt"].seed_epochs_cv = 0.001;
  auto line_of = [&](const MachineProfile& p) {
    Record r = simulate(plan, p);
    add_spread(r, plan, p, 200, 5);
    return width_line(r);
  };
  const auto held = line_of(m);
  EXPECT_NE(held.find("; the widest: fitted parameters (most from compute.kernel_overhead_us, held near other machines' fits since one "
                      "GPU count cannot fit it: calibrate records with runs at a second GPU count measures it)"),
            std::string::npos)
      << held;
  // fitted with a value held near other machines' fits that moves nothing: the block's width is not theirs
  MachineProfile beside = m;
  beside.fitted.front().source = "calibrate records: r.json";
  record_fit(beside, {"comm.call_overhead_us", 1, 0.5, std::string(kHeldNearPriorsSource) + "the median of a code's call costs: r.json"});
  beside.correlations.push_back({{"compute.kernel_overhead_us", "comm.call_overhead_us"}, {1, 0, 0, 1}, {}, DrawScale::linear});
  const auto block = line_of(beside);
  EXPECT_NE(block.find("(most: compute.kernel_overhead_us+comm.call_overhead_us "), std::string::npos) << block;
  EXPECT_TRUE(block.ends_with("; the widest: fitted parameters")) << block;
  // a block fitted to two workloads' runs is named by a key this plan reads, not another workload's warm-up
  beside.compute.warmup_s["deepcam"] = 2;
  record_fit(beside, {"compute.warmup_s.deepcam", 2, 1, "calibrate records: r.json"});
  auto& keys = beside.correlations.back().keys;
  keys.insert(keys.begin(), "compute.warmup_s.deepcam");
  beside.correlations.back().matrix = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const auto three = line_of(beside);
  EXPECT_NE(three.find("(most: compute.kernel_overhead_us and the 2 fitted with it "), std::string::npos) << three;
  // the same width from the machine's own runs: nothing to add
  m.fitted.front().source = "calibrate records: r.json";
  const auto own = line_of(m);
  EXPECT_TRUE(own.ends_with("; the widest: fitted parameters")) << own;
}

TEST(ProfileParameters, EveryFittedKeyOfTheBuiltinProfilesIsRegisteredOrANote) {
  for (const auto* name : {"summit", "cori-gpu", "perlmutter"}) {
    MachineProfile m = calibrated_builtin_profile(name);
    for (const auto& f : m.fitted) {
      const bool note = f.key == "hardware" || f.key.find(' ') != std::string::npos;
      EXPECT_TRUE(note || find_parameter(m, f.key).has_value()) << name << ": " << f.key;
    }
  }
  MachineProfile m = calibrated_builtin_profile("summit");
  EXPECT_THROW(record_fit(m, {"comm.no_such_thing", 1, 0, "test"}), std::logic_error);
  const auto slot = find_parameter(m, "comm.call_overhead_us");
  ASSERT_TRUE(slot);
  EXPECT_EQ(slot->to_internal, 1e-6);
  EXPECT_EQ(*slot->values.front(), m.comm.call_overhead_s);
  EXPECT_EQ(find_parameter(m, "convergence.*.fusion_efficiency")->values.size(), m.convergence.size());
}

TEST(ProfileParameters, TheReaderRefusesAFittedKeyThatNamesNoParameter) {
  MachineProfile m = calibrated_builtin_profile("summit");
  m.fitted.push_back({"comm.call_overhed_us", 1, 0, "typo"});
  std::string message;
  try {
    profile_from_yaml_text(profile_to_yaml(m), "p.yaml");
  } catch (const InputError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("'comm.call_overhed_us' names no parameter of this profile"), std::string::npos) << message;
  m.fitted.back().key = "a note (no parameter)";
  EXPECT_NO_THROW(profile_from_yaml_text(profile_to_yaml(m), "p.yaml"));
}

TEST(ProfileParameters, EveryYamlNumberIsRegisteredAndRoundTrips) {
  MachineProfile m = calibrated_builtin_profile("summit");
  m.io.codecs["lut"] = CodecRates{};
  auto key_of = [](std::string k) {  // a workload's entry, or a codec's
    if (const auto star = k.find('*'); star != std::string::npos) k.replace(star, 1, k.starts_with("io.codecs.") ? "lut" : "deepcam");
    return k;
  };
  double v = 0.31;
  for (const auto& y : yaml_numbers()) {
    const auto slot = find_parameter(m, key_of(y.key));
    ASSERT_TRUE(slot) << y.key;
    for (double* x : slot->values) *x = (v += 0.01) * slot->to_internal;  // a distinct value each, in its bounds
  }
  MachineProfile back = profile_from_yaml_text(profile_to_yaml(m), "p.yaml");
  v = 0.31;
  for (const auto& y : yaml_numbers()) {
    const auto slot = find_parameter(back, key_of(y.key));
    EXPECT_NEAR(*slot->values.front() / slot->to_internal, v += 0.01, 1e-9) << y.key;
  }
}

TEST(ProfileParameters, SeedSpreadRoundTripsThroughYaml) {
  MachineProfile m = calibrated_builtin_profile("summit");
  m.convergence["deepcam"].seed_epochs_cv = 0.12;
  m.convergence["deepcam"].seed_switch_cv = 0.3;
  const auto again = profile_from_yaml_text(profile_to_yaml(m), "p.yaml");
  EXPECT_DOUBLE_EQ(again.convergence.at("deepcam").seed_epochs_cv, 0.12);
  EXPECT_DOUBLE_EQ(again.convergence.at("deepcam").seed_switch_cv, 0.3);
  EXPECT_DOUBLE_EQ(again.convergence.at("cosmoflow-mrt").seed_epochs_cv, 0.0);
}

TEST(MonteCarlo, SeedSpreadIsFittedFromRecordsOfOnePlan) {
  std::vector<NamedRecord> recs;
  auto add = [&](const std::string& spec, double dense_epochs, double switch_epoch, double matmul = 0) {
    Record r;
    if (matmul > 0) r.device_matmul_flops_per_s = matmul;
    r.plan_spec = spec;
    r.totals.reached_target = true;
    StageRecord coarse, dense;
    ModelRecord m;
    m.switch_epoch = switch_epoch;
    coarse.models = {m};
    dense.epochs = dense_epochs;
    dense.models = {ModelRecord{}};
    r.stages = {coarse, dense};
    recs.push_back({"r.json", r});
  };
  add("plan a", 10, 4, 1.0), add("plan a", 12, 5, 1.2), add("plan a", 14, 6, 0.8);  // mean 12, s 2: cv 1/6
  add("plan b", 20, 8);                                             // one seed: no spread
  const auto s = fit_seed_spread(recs);
  EXPECT_EQ(s.groups, 1);
  EXPECT_EQ(s.runs, 3);
  EXPECT_NEAR(s.epochs_cv, 2.0 / 12.0, 1e-12);
  EXPECT_NEAR(s.switch_cv, 1.0 / 5.0, 1e-12);
  EXPECT_NEAR(s.epochs_cv_std_error, (2.0 / 12.0) / 2.0, 1e-12);  // cv / sqrt(2 (n - 1))
  EXPECT_EQ(s.speed_runs, 3);
  EXPECT_NEAR(s.run_speed_cv, 0.2, 1e-12);  // matmul 1.0, 1.2, 0.8: mean 1, s 0.2
}
