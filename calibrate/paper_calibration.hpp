#pragma once
// Fits the built-in profiles' efficiency, overhead and convergence parameters from the MRT
// paper's calibration rows only (CosmoFlow 32 GPUs, DeepCAM 64 GPUs); held-out rows never
// touch a parameter. Machines without rows (Perlmutter, Cori-A100) take the V100 fits, marked as
// transferred. What the commands read is calibrate/calibrated_builtins.
#include <map>
#include <string>

#include "model/machine_profile.hpp"

namespace mrplan {

// A built-in's hardware with the MRT paper's fits, the convergence priors and MRMF's fusion prior
// (calibrate/calibrated_builtins adds the codec rates and the MLPerf logs' fits). Not thread safe:
// calibrated_builtin_profile calls it under its lock.
MachineProfile paper_fitted_profile(const std::string& key);

// Moves `m`'s compute fits to a GPU with these peaks (model/compute_cost move_to_peaks) and updates
// the fitted list's saturation work to the moved value.
void move_fits_to_peaks(MachineProfile& m, double peak_fp32_flops, double peak_fp16_flops);

// The paper's convergence parameters for "cosmoflow-mrt" and "deepcam" (machine independent).
ConvergenceParams fit_paper_convergence(const std::string& app, std::vector<FittedParameter>& provenance);
// Neuron Inverter's priors: its public dense validation curve (calibrate/public_curves); CosmoFlow's
// transfer efficiency where no run says more.
ConvergenceParams neuron_inverter_prior_convergence(const ConvergenceParams& cosmoflow, std::vector<FittedParameter>& provenance);
// MLPerf HPC CosmoFlow's dense curve and seed spread, fitted from public result logs (calibrate/public_curves).
ConvergenceParams mlperf_cosmoflow_convergence(std::vector<FittedParameter>& provenance);

// Fits compute, comm and I/O parameters of each of `hardware` ("summit", "cori-gpu": the paper's
// machines, by name) to its calibration rows; the allreduce of both at once (one DDP cost).
std::map<std::string, MachineProfile> fit_paper_machines(std::map<std::string, MachineProfile> hardware);

}  // namespace mrplan
