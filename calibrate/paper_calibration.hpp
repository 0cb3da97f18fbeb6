#pragma once
// Fits the built-in profiles' efficiency, overhead and convergence parameters from the MRT
// paper's calibration rows only (CosmoFlow 32 GPUs, DeepCAM 64 GPUs); held-out rows never
// touch a parameter. Machines without rows (Perlmutter, Cori-A100) take the V100 fits, marked as
// transferred; then, where the build has the public MLPerf HPC logs, the machines of
// data/mlperf_fits.yaml are fitted to their own (calibrate/builtin_mlperf_fit) and lend their GPU's
// fits to built-ins with the same GPU.
#include <map>
#include <string>

#include "model/machine_profile.hpp"

namespace mrplan {

// Hardware profile + paper fits (the MRT paper's; MRMF's fusion prior; for the preprocessing paper's
// machines, its codec rates). Cached: the fit runs once per process and name, or not at all where
// the program carries the fits made at build time (use_prefitted_profiles).
const MachineProfile& calibrated_builtin_profile(const std::string& name);

// Every built-in profile, fitted, as YAML documents: what the build writes once (mrplan-fit-builtins)
// and the programs embed, so that they start without fitting.
std::string prefitted_profiles_yaml();
// Makes calibrated_builtin_profile read `yaml_documents` (prefitted_profiles_yaml's text) first.
void use_prefitted_profiles(const char* yaml_documents);
// Makes calibrated_builtin_profile fit the machines `fits_yaml` names (data/mlperf_fits.yaml) to
// their MLPerf HPC logs under `logs_root`, and lend their GPU's fits to built-ins with the same GPU.
// Each built-in's profile before that stays available as NAME-paper (a leave-one-system-out prior).
void use_mlperf_logs(const std::string& logs_root, const std::string& fits_yaml, const std::string& fits_file);

// What a machine fitted to its own runs lends another with the same GPU (hardware similarity): the
// GPU's compute fits, the host's decode rate and the workloads' epochs to target, each with its
// source; not the network's or the file system's. Replaces what `to` had of them (the V100 fits, for
// an A100 without runs of its own).
void lend_measured_fits(MachineProfile& to, const MachineProfile& from);
// The name of a built-in's profile before its own MLPerf logs (its paper fits and what was lent to it).
std::string before_mlperf(const std::string& builtin);

// Moves `m`'s compute fits to a GPU with these peaks (model/compute_cost move_to_peaks) and updates
// the fitted list's saturation work to the moved value.
void move_fits_to_peaks(MachineProfile& m, double peak_fp32_flops, double peak_fp16_flops);

// A profile from a file or a built-in name.
MachineProfile resolve_profile(const std::string& name_or_file);

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
