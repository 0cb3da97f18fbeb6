#pragma once
// The built-in profiles as every command reads them: the paper fits (calibrate/paper_calibration),
// then, where the build has the public MLPerf HPC logs, the machines of data/mlperf_fits.yaml fitted
// to their own (calibrate/builtin_mlperf_fit), lending their GPU's fits to built-ins with the same
// GPU; made once at build time and embedded (use_prefitted_profiles). And a profile by name or file.
#include <string>
#include <utility>
#include <vector>

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
// `leave_out` names a machine of the file to fit as if its logs were not there (its runs neither its
// own nor in any population): it borrows like a built-in without runs (studies/mlperf-builtins).
void use_mlperf_logs(const std::string& logs_root, const std::string& fits_yaml, const std::string& fits_file,
                     const std::string& leave_out = "");

// What a machine fitted to its own runs lends another with the same GPU generation (hardware
// similarity: calibrated_builtins.cpp nearest_donor): the GPU's compute fits and the host's decode
// rate, each with its source; not the network's or the file system's, nor what belongs to a code (a
// validation pass's fixed part, the ranks' step-time spread), and its system's epochs to target only
// with Lend::gpu_and_epochs (`profile compose`, which has no logs to fit a population from; a built-in
// without runs takes the population's). Replaces what `to` had of them (the V100 fits, for an A100
// without runs of its own).
enum class Lend { gpu, gpu_and_epochs };
void lend_measured_fits(MachineProfile& to, const MachineProfile& from, Lend what);
// The name of a built-in's profile before its own MLPerf logs (its paper fits and what was lent to it).
std::string before_mlperf(const std::string& builtin);

// What the build fitted to the built-in machines' runs of one code at two or more GPU counts
// (code_fits: step-time spread, a validation pass's and staging's fixed parts), each machine and
// code as a profile holding those fits, named "NAME (built-in)": what `calibrate records` takes as
// its priors (code_priors) where its records train at one GPU count and no --priors-from is given.
// Empty without the MLPerf logs.
std::vector<std::pair<std::string, MachineProfile>> builtin_code_fits();

// A profile from a file or a built-in name.
MachineProfile resolve_profile(const std::string& name_or_file);

}  // namespace mrplan
