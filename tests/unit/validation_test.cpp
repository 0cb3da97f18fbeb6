#include <gtest/gtest.h>

#include <cmath>

#include "calibrate/mllog_ingest.hpp"
#include "calibrate/calibrated_builtins.hpp"
#include "calibrate/validation.hpp"
#include "model/method_rules.hpp"
#include "model/plan_yaml.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/simulate.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;

namespace {

// A measured record made by hand from the plan's own prediction, with chosen deviations.
Record hand_made(double epoch_scale, double io_per_epoch) {
  const auto& m = calibrated_builtin_profile("summit");
  Record r = simulate(builtin_plan("cosmoflow-baseline@summit"), m);
  r.source = Source::measured;
  auto& s = r.stages[0].single();
  s.io_s = io_per_epoch * s.epochs;
  s.compute_s *= epoch_scale;
  s.comm_s *= epoch_scale;
  s.phases->forward_s *= epoch_scale, s.phases->backward_s *= epoch_scale, s.phases->optimizer_s *= epoch_scale;
  s.time_s = s.io_s + s.comm_s + s.compute_s;
  finish_stage(r.stages[0]);
  r.totals.time_to_target_s = s.time_s;
  return r;
}

}  // namespace

TEST(Validate, NumbersAreWhatTheFormulaSays) {
  const auto& m = calibrated_builtin_profile("summit");
  const Record pred = simulate(builtin_plan("cosmoflow-baseline@summit"), m);
  const auto rows = validate_records({{"a.json", hand_made(1.25, 2.0)}, {"b.json", hand_made(0.8, 0.0)}}, m);
  const auto& p = pred.stages[0].single();
  auto find = [&](const std::string& rec, const std::string& q) {
    for (const auto& r : rows)
      if (r.record == rec && r.quantity == q) return r;
    ADD_FAILURE() << rec << " " << q;
    return ValidationRow{};
  };
  // compute: measured = 1.25 x predicted -> rel error = 1/1.25 - 1
  const auto c = find("a.json", "compute_s");
  EXPECT_NEAR(c.predicted, p.compute_s / p.epochs, 1e-9);
  EXPECT_NEAR(c.rel_error, 1.0 / 1.25 - 1.0, 1e-9);
  EXPECT_NEAR(find("b.json", "compute_s").rel_error, 1.0 / 0.8 - 1.0, 1e-9);
  // the step's phases: the same ratio, each against the simulator's own split of compute
  for (const char* q : {"forward_s", "backward_s", "optimizer_s"}) EXPECT_NEAR(find("a.json", q).rel_error, 1.0 / 1.25 - 1.0, 1e-9) << q;
  EXPECT_NEAR(find("a.json", "forward_s").predicted, p.phases->forward_s / p.epochs, 1e-9 * p.phases->forward_s);
  // io: measured 2.0 s per epoch; predicted the model's per-epoch mean
  const auto io = find("a.json", "io_s");
  EXPECT_DOUBLE_EQ(io.measured, 2.0);
  EXPECT_NEAR(io.rel_error, (p.io_s / p.epochs - 2.0) / 2.0, 1e-9);
  EXPECT_EQ(find("b.json", "io_s").rel_error, 0.0);  // measured 0: no relative error
  EXPECT_NEAR(find("a.json", "epochs").rel_error, 0.0, 1e-12);
  const auto tot = find("a.json", "time_to_target_s");
  EXPECT_NEAR(tot.rel_error, (pred.totals.time_to_target_s - tot.measured) / tot.measured, 1e-9);
  EXPECT_EQ(validation_csv(rows).rfind("record,stage,quantity,measured,predicted,rel_error,used_for_calibration\n", 0), 0u);
}

TEST(Validate, WhereTheProfilePredictsValidationPassesEpochTimesIncludeThem) {
  auto m = calibrated_builtin_profile("summit");
  m.compute.inference_factor = 0.5;
  Record r = simulate(builtin_plan("cosmoflow-baseline@summit"), m);
  r.source = Source::measured;
  auto& s = r.stages[0].single();
  const double predicted_eval_s = s.eval_s, predicted_time_s = s.time_s;
  ASSERT_GT(predicted_eval_s, 0);
  s.eval_s *= 2, s.time_s += predicted_eval_s, r.totals.time_to_target_s += predicted_eval_s;  // validation took twice as long
  auto find = [](const std::vector<ValidationRow>& rows, const std::string& q) {
    for (const auto& x : rows)
      if (x.quantity == q) return x;
    ValidationRow none;
    none.record = "none";
    return none;
  };
  const auto rows = validate_records({{"v.json", r}}, m);
  EXPECT_NEAR(find(rows, "eval_s").rel_error, -0.5, 1e-9);
  const auto epoch = find(rows, "epoch_s");
  EXPECT_NEAR(epoch.measured, s.time_s / s.epochs, 1e-9);
  EXPECT_NEAR(epoch.rel_error, predicted_time_s / s.time_s - 1, 1e-9);
  EXPECT_NEAR(find(rows, "time_to_target_s").rel_error, predicted_time_s / r.totals.time_to_target_s - 1, 1e-9);
  // a profile without the factor: the measured side stays the Record's, the run's own evaluation
  // time is added to the prediction
  m.compute.inference_factor = 0;
  const auto plain = validate_records({{"v.json", r}}, m);
  EXPECT_EQ(find(plain, "eval_s").record, "none");
  EXPECT_NEAR(find(plain, "epoch_s").measured, s.time_s / s.epochs, 1e-9);
  EXPECT_NEAR(find(plain, "epoch_s").predicted, (predicted_time_s - predicted_eval_s + s.eval_s) / s.epochs, 1e-9);
  EXPECT_NEAR(find(plain, "time_to_target_s").measured, r.totals.time_to_target_s, 1e-9);
}

TEST(Validate, MachineDriftIsTheProbeOverThePeak) {
  const auto& m = calibrated_builtin_profile("summit");
  auto a = hand_made(1.25, 0.0), b = hand_made(0.8, 0.0);
  a.device_matmul_flops_per_s = 0.8 * m.compute.peak_fp32_flops;  // the machine ran at 0.8x its calibrated speed
  b.device_matmul_flops_per_s = 1.0 * m.compute.peak_fp32_flops;
  const auto rows = validate_records({{"a.json", a}, {"b.json", b}, {"c.json", hand_made(1.0, 0.0)}}, m);
  int probes = 0;
  for (const auto& r : rows) {
    if (r.quantity == "device_matmul_flops_per_s") {
      ++probes;
      EXPECT_NE(r.record, "c.json");  // no probe, no row
      EXPECT_DOUBLE_EQ(r.predicted, m.compute.peak_fp32_flops);
    }
  }
  EXPECT_EQ(probes, 2);
  const auto d = machine_drift(rows);
  EXPECT_EQ(d.runs, 2);
  EXPECT_DOUBLE_EQ(d.median_ratio, 0.9);
  EXPECT_DOUBLE_EQ(d.min_ratio, 0.8);
  EXPECT_DOUBLE_EQ(d.max_ratio, 1.0);
  // the probe goes through JSON and a bad one is refused
  EXPECT_DOUBLE_EQ(*record_from_json(record_to_json(a), "a.json").device_matmul_flops_per_s, *a.device_matmul_flops_per_s);
  a.device_matmul_flops_per_s = 0;
  EXPECT_NE(error_of([&] { record_from_json(record_to_json(a), "a.json"); }).find("a.json: device_matmul_flops_per_s: expected a rate > 0"),
            std::string::npos);
}

TEST(Validate, RefusesPredictionsAndRecordsWithoutTheirPlan) {
  const auto& m = calibrated_builtin_profile("summit");
  Record pred = simulate(builtin_plan("cosmoflow-baseline@summit"), m);
  EXPECT_NE(error_of([&] { validate_records({{"p.json", pred}}, m); }).find("p.json: source: validate compares measured"),
            std::string::npos);
  pred.source = Source::measured;
  pred.plan_spec.clear();
  EXPECT_NE(error_of([&] { validate_records({{"p.json", pred}}, m); }).find("p.json: plan_spec:"), std::string::npos);
}

TEST(MllogIngest, HandMadeLogBecomesARecord) {
  const std::string log = R"(noise before
:::MLLOG {"namespace": "", "time_ms": 1000, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {}}
:::MLLOG {"namespace": "", "time_ms": 1001, "event_type": "POINT_IN_TIME", "key": "global_batch_size", "value": 256, "metadata": {}}
:::MLLOG {"namespace": "", "time_ms": 1001, "event_type": "POINT_IN_TIME", "key": "number_of_nodes", "value": 8, "metadata": {}}
:::MLLOG {"namespace": "", "time_ms": 1001, "event_type": "POINT_IN_TIME", "key": "accelerators_per_node", "value": 4, "metadata": {}}
:::MLLOG {"namespace": "", "time_ms": 2000, "event_type": "INTERVAL_START", "key": "epoch_start", "value": null, "metadata": {"epoch_num": 1}}
:::MLLOG {"namespace": "", "time_ms": 12000, "event_type": "INTERVAL_END", "key": "epoch_stop", "value": null, "metadata": {"epoch_num": 1}}
:::MLLOG {"namespace": "", "time_ms": 12500, "event_type": "POINT_IN_TIME", "key": "eval_error", "value": 0.2, "metadata": {"epoch_num": 1}}
:::MLLOG {"namespace": "", "time_ms": 13000, "event_type": "INTERVAL_START", "key": "epoch_start", "value": null, "metadata": {"epoch_num": 2}}
:::MLLOG {"namespace": "", "time_ms": 21000, "event_type": "INTERVAL_END", "key": "epoch_stop", "value": null, "metadata": {"epoch_num": 2}}
:::MLLOG {"namespace": "", "time_ms": 21500, "event_type": "POINT_IN_TIME", "key": "eval_error", "value": 0.12, "metadata": {"epoch_num": 2}}
:::MLLOG {"namespace": "", "time_ms": 22000, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, "metadata": {"status": "success"}}
)";
  const auto r = record_from_mllog(log, "x.log");
  ASSERT_EQ(r.stages.size(), 1u);
  EXPECT_EQ(r.stages[0].gpus, 32);
  EXPECT_EQ(r.stages[0].global_batch, 256);
  const auto& s = r.stages[0].single();
  ASSERT_EQ(s.per_epoch.size(), 2u);
  EXPECT_DOUBLE_EQ(s.per_epoch[0].epoch_s, 10.0);
  EXPECT_DOUBLE_EQ(s.per_epoch[1].epoch_s, 8.0);
  EXPECT_DOUBLE_EQ(*s.per_epoch[1].metric, 0.12);
  EXPECT_DOUBLE_EQ(r.totals.time_to_target_s, 21.0);
  EXPECT_TRUE(r.totals.reached_target);
  EXPECT_EQ(r.target_metric, "eval_error");
  // round trip through the Record JSON
  EXPECT_EQ(record_to_json(record_from_json(record_to_json(r), "x.json")), record_to_json(r));
  EXPECT_NE(error_of([] { record_from_mllog("hello\n", "y.log"); }).find("y.log: run_start: no run_start event"), std::string::npos);
  EXPECT_NE(error_of([] { record_from_mllog(":::MLLOG {broken\n", "z.log"); }).find("z.log: line 1: malformed :::MLLOG line"),
            std::string::npos);
}
