#pragma once
// `calibrate compute`: fit the roofline's per-kind efficiencies, saturation and per-kernel
// overhead from ops timed alone (exec's SpecNet::time_ops) and optimizer steps, with the peak
// and memory bandwidth measured (largest matmul, largest copy).
#include <map>
#include <string>
#include <vector>

#include "model/layer_table.hpp"
#include "model/optimizers.hpp"
#include "model/machine_profile.hpp"

namespace mrplan {

struct OpTimingSample {
  Layer layer;         // resolved at the batch it ran at
  double fwd_s = 0;
  double bwd_s = 0;
  std::string context;  // e.g. "cosmoflow-mrt 16x16x16 batch 4", for tables and plots
};

struct OptimizerTiming {
  Optimizer optimizer = Optimizer::adam;
  int64_t params = 0;
  double seconds = 0;
  std::string context;
  int64_t param_tensors = 0;
};

// One whole training step (zero_grad, forward, loss, backward, optimizer) of a configuration whose
// ops were timed alone under the same `context`, split as the trainer splits it (exec/step_clock).
struct WholeStepTiming {
  std::string context;
  Optimizer optimizer = Optimizer::adam;
  int64_t params = 0;
  double seconds = 0;  // median of the repeats
  double spread = 0;   // step-to-step standard deviation / mean (from back-to-back pairs, drift left out)
  double forward_s = 0, backward_s = 0, optimizer_s = 0;  // each phase's median
  int64_t param_tensors = 0;
  // A fresh network and optimizer's first two steps on a heap given back to the kernel, as a new
  // process starts a stage, and the bytes they touched for the first time (0: not timed)
  double first_steps_s = 0, first_touch_bytes = 0;
  double activation_bytes = 0;  // LayerTable::activation_bytes of the configuration
  double inference_s = 0;       // median forward in eval mode without autograd, as validation runs it (0: not timed)
};

struct ComputeFit {
  ComputeParams compute;  // the measured peaks, fitted efficiencies and overhead
  std::map<std::string, double> efficiency_std_error;           // by math family
  std::map<std::string, double> mem_efficiency_by_kind_std_error;
  std::map<std::string, double> backward_efficiency_std_error;  // by family or kind
  std::map<std::string, double> half_work_std_error_flops_by_family;
  double mem_efficiency_std_error = 0;  // from the optimizer steps
  double kernel_overhead_std_error_s = 0;
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
// squares (relative error) of phase = factor * its modelled ops + bytes_per_param * params / (bw * eff),
// the ops model being the one already fitted in `fit`; the factor alone when the sweep term comes
// out negative or drives the factor below zero. compute.step_time_cv: the median of the steps'
// spreads. compute.inference_factor: the no-autograd forwards on the forward phase as just
// fitted, weighted least squares (relative error) through the origin. Without whole steps all keep their values.
void fit_step_phases(ComputeFit& fit, const std::vector<OpTimingSample>& ops, const std::vector<WholeStepTiming>& steps);

// Replaces `compute` and its fitted entries; `source` says what data the fit came from.
void apply_compute_fit(MachineProfile& profile, const ComputeFit& fit, const std::string& source);

}  // namespace mrplan
