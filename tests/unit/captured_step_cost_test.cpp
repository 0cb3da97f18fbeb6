// A plan whose steps are captured as CUDA graphs (`steps: captured`): read and written, priced
// without kernel launches (model/compute_cost captured_step_params, sim/model_costs), and the gap
// between kernels fitted from captured steps (calibrate/compute_fit fit_captured_steps).
#include <gtest/gtest.h>
#include <fmt/format.h>

#include "calibrate/compute_fit.hpp"
#include "model/builtin_workloads.hpp"
#include "model/compute_cost.hpp"
#include "model/plan_network.hpp"
#include "model/plan_yaml.hpp"
#include "model/profile_yaml.hpp"
#include "sim/model_costs.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/tiny_plan.hpp"

using namespace mrplan;

namespace {

Plan one_gpu_plan(const std::string& steps_line) {
  auto yaml = mrplan::testing::tiny_plan_yaml({.method = "baseline"}, "  - {name: dense, resolution: 1, gpus: 1, local_batch: 8, stop: {epochs: 3}}\n");
  return plan_from_yaml_text(steps_line + yaml, "tiny.yaml");
}

double sum_s(const std::vector<LayerTime>& times) {
  double s = 0;
  for (const auto& t : times) s += t.fwd_s + t.bwd_s;
  return s;
}

}  // namespace

TEST(CapturedSteps, ThePlanKeyReadsWritesAndRefusesOtherValues) {
  EXPECT_EQ(one_gpu_plan("").steps, StepExecution::eager);
  const auto p = one_gpu_plan("steps: captured\n");
  EXPECT_EQ(p.steps, StepExecution::captured);
  EXPECT_EQ(plan_from_yaml_text(plan_to_yaml(p), "again.yaml").steps, StepExecution::captured);
  EXPECT_EQ(plan_to_yaml(one_gpu_plan("")).find("steps:"), std::string::npos);  // an eager plan's text stays as before
  EXPECT_EQ(mrplan::testing::error_of([] { one_gpu_plan("steps: graphed\n"); }),
            "tiny.yaml: steps: unknown step execution 'graphed' (expected eager or captured)");
}

TEST(CapturedSteps, TheSimulatorPricesOneReplayWithoutLaunchesAndValidationEager) {
  MachineProfile m;  // defaults: 5 us a kernel launch
  m.compute.kernel_overhead_s = 50e-6, m.compute.optimizer_tensor_s = 20e-6, m.compute.captured_kernel_gap_s = 2e-6;
  m.compute.step_forward = {0.8, 0, -10e-6}, m.compute.step_backward = {0.9, 0, -30e-6};
  m.compute.inference_factor = 0.7;
  auto eager = one_gpu_plan(""), captured = one_gpu_plan("steps: captured\n");
  eager.validation_samples = captured.validation_samples = 16;
  const auto table = resolve(plan_network(eager), plan_network(eager).input_spatial, 8);
  const auto e = model_costs(eager, eager.stages[0].models[0], table, m);
  const auto c = model_costs(captured, captured.stages[0].models[0], table, m);
  const auto cap = captured_step_params(m.compute);
  EXPECT_EQ(cap.kernel_overhead_s, 2e-6);
  EXPECT_EQ(cap.step_forward.per_op_s, 0);
  EXPECT_EQ(cap.optimizer_tensor_s, 0);
  const double want = sum_s(whole_step_layer_times(table, cap, false, 1.0)) + optimizer_step_s(cap, table.total_params(), table.total_param_tensors(), Optimizer::adam);
  EXPECT_NEAR(c.forward_iter_s, want, 1e-12 * want);  // the whole replay, as the executor records it
  EXPECT_NEAR(captured_step_s(table, m.compute, false, Optimizer::adam), want, 1e-12 * want);
  EXPECT_EQ(c.backward_iter_s, 0);
  EXPECT_EQ(c.optimizer_iter_s, 0);
  EXPECT_LT(c.compute_iter_s, e.compute_iter_s);
  EXPECT_DOUBLE_EQ(c.eager_forward_iter_s, e.forward_iter_s);  // validation runs eagerly either way
  EXPECT_DOUBLE_EQ(c.inference_iter_s, e.inference_iter_s);
}

TEST(CapturedSteps, CalibrateComputeFitsTheGapBetweenKernels) {
  ComputeParams truth;
  truth.peak_fp32_flops = 1e11, truth.mem_bandwidth_Bps = 1e10, truth.mem_efficiency = 0.4, truth.kernel_overhead_s = 60e-6;
  truth.step_forward = {0.85, 0, -20e-6}, truth.step_backward = {0.9, 0, -70e-6};
  truth.captured_kernel_gap_s = 3e-6;
  std::vector<OpTimingSample> ops;
  std::vector<WholeStepTiming> whole;
  const auto spec = builtin_workload("cosmoflow-mrt", {32, 0.25});
  for (int b : {2, 8}) {
    const auto t = resolve(spec, coarsened_spatial(spec, 1), b);
    const auto alone = layer_times(t, truth, false);
    const auto ctx = fmt::format("batch {}", b);
    for (size_t i = 0; i < t.layers.size(); ++i) ops.push_back({t.layers[i], alone[i].fwd_s, alone[i].bwd_s, ctx});
    WholeStepTiming w{ctx, Optimizer::adam, t.total_params(), 1e-3, 0.01, 4e-4, 5e-4, 1e-4, t.total_param_tensors()};
    w.captured_s = captured_step_s(t, truth, false, Optimizer::adam);
    whole.push_back(w);
  }
  ComputeFit fit;
  fit.compute = truth;
  fit.compute.captured_kernel_gap_s = 0;
  fit_captured_steps(fit, ops, whole);
  EXPECT_EQ(fit.captured_steps, 2);
  EXPECT_NEAR(fit.compute.captured_kernel_gap_s, 3e-6, 1e-12);
  // in the profile, in microseconds; a profile without captured steps keeps none
  for (const auto& [k, v] : fit.compute.efficiency) fit.efficiency_std_error[k] = 0;
  MachineProfile prof;
  apply_compute_fit(prof, fit, "test");
  const auto yaml = profile_to_yaml(prof);
  EXPECT_NE(yaml.find("captured_kernel_gap_us: 3"), std::string::npos) << yaml;
  EXPECT_NEAR(profile_from_yaml_text(yaml).compute.captured_kernel_gap_s, 3e-6, 1e-15);
  for (auto& w : whole) w.captured_s = 0;
  ComputeFit none;
  none.compute = truth;
  fit_captured_steps(none, ops, whole);
  EXPECT_EQ(none.captured_steps, 0);
  EXPECT_EQ(none.compute.captured_kernel_gap_s, 3e-6);  // kept
}
