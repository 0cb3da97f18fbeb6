#pragma once
// `calibrate compute`: fit the roofline's per-kind efficiencies, saturation and per-kernel
// overhead from ops timed alone (exec's SpecNet::time_ops) and optimizer steps, with the peak
// and memory bandwidth measured (largest matmul, largest copy).
#include <map>
#include <string>
#include <vector>

#include "model/layer_table.hpp"
#include "model/machine_profile.hpp"
#include "model/microbench_samples.hpp"

namespace mrplan {

struct ComputeFit {
  ComputeParams compute;  // the measured peaks, fitted efficiencies and overhead
  std::map<std::string, double> efficiency_std_error;           // by math family
  std::map<std::string, double> mem_efficiency_by_kind_std_error;
  std::map<std::string, double> backward_efficiency_std_error;  // by family or kind
  std::map<std::string, double> half_work_std_error_flops_by_family;
  double mem_efficiency_std_error = 0;  // from the optimizer steps
  double kernel_overhead_std_error_s = 0;
  double captured_kernel_gap_std_error_s = 0;
  int captured_steps = 0;  // the captured steps it was fitted from
  double optimizer_tensor_std_error_s = 0;
  StepPhaseScale step_forward_std_error, step_backward_std_error;
  double step_time_cv_std_error = 0;
  double inference_factor_std_error = 0;
  std::vector<double> step_factor_ratios;  // per whole step: model / measured forward + backward
  double r2 = 0;  // on log time
  std::vector<double> relative_residuals;  // (model - measured) / measured, every observation
};

// Levenberg-Marquardt on the errors of layer_times() and optimizer_step_s() (model/compute_cost)
// over every forward, backward and optimizer step, each op's error relative to its configuration's
// whole step; parameters are fitted in log space so they stay positive.
ComputeFit fit_compute(const std::vector<OpTimingSample>& ops, const std::vector<OptimizerTiming>& steps,
                       const ComputeParams& measured_peaks);

// The optimizer from the whole steps' optimizer phase: weighted least squares (relative error) of
// phase - overhead = params * bytes / (bw * mem_efficiency) + tensors * optimizer_tensor_s, the
// tensor term dropped when it comes out negative. Then
// compute.step_forward and step_backward from whole steps, each phase on its own: weighted least
// squares (relative error) of phase = factor * its modelled ops + bytes_per_param * params / (bw * eff)
// + per_op_s * its op count (signed; only where the steps' op counts differ, e.g. several workloads),
// the ops model being the one already fitted in `fit`; terms dropped, last first, when the sweep
// comes out negative or the factor not positive. compute.step_time_cv: the median of the steps'
// spreads. compute.inference_factor: the no-autograd forwards on the forward phase as just
// fitted, weighted least squares (relative error) through the origin. Without whole steps all keep their values.
void fit_step_phases(ComputeFit& fit, const std::vector<OpTimingSample>& ops, const std::vector<WholeStepTiming>& steps);

// compute.captured_kernel_gap_s from the steps timed captured (captured_s > 0), after
// fit_step_phases: each step as the model has it on captured_step_params with no gap, plus the gap
// per kernel (the phases' factors applied, the optimizer's one kernel), weighted least squares
// (relative error) through the origin, at least 0. Without captured steps it keeps its value.
void fit_captured_steps(ComputeFit& fit, const std::vector<OpTimingSample>& ops, const std::vector<WholeStepTiming>& steps);

// Replaces `compute` and its fitted entries; `source` says what data the fit came from.
void apply_compute_fit(MachineProfile& profile, const ComputeFit& fit, const std::string& source);

}  // namespace mrplan
