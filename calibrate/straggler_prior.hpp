#pragma once
// The wait for the slowest rank of a machine that has run at one GPU count, from machines that have
// run the same code at two: what `calibrate records --straggler-from` gives the fit.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/machine_profile.hpp"
#include "model/plan.hpp"

namespace mrplan {

// What other machines' fits say of a parameter one GPU count cannot fit: their median, and their
// spread in log space (the prior's width).
struct SpreadPrior {
  double value = 0, log_sd = 0;
  std::string source;
  std::vector<std::string> left_out;  // profiles given but not used, each with its reason
};

// The code whose step a spread describes: the workload and the library that runs its gradient
// allreduce ("cosmoflow-mlperf with ddp"). A rank's jitter per step is its implementation's (its
// loop, loader and runtime), so only the same code's spreads make a prior. None where the plans differ.
std::optional<std::string> code_of(const std::vector<Plan>& plans);

// The source `calibrate records` gives a spread it fitted at two or more GPU counts: the records'
// source, and the code where they share one (which straggler_prior reads back).
std::string spread_source(const std::string& records_source, const std::optional<std::string>& code);

// Whether `fitted` holds a step-time spread that calibrate records fitted to runs of `code` at two or
// more GPU counts (what straggler_prior takes from it).
bool has_spread_of(const MachineProfile& fitted, const std::string& code);

// The median of the step-time spreads (compute.step_time_cv, or node_sharing.step_time_cv) that
// `calibrate records` fitted to runs of `code` at two or more GPU counts in each profile, and the
// median absolute deviation of their logarithms as a normal's sigma, no narrower than their median
// relative standard error. A profile of another code is left out, with its reason; one without such a
// fit, or none of `code`, is refused, naming the file.
SpreadPrior straggler_prior(const std::vector<std::pair<std::string, MachineProfile>>& fitted, const std::string& code);

}  // namespace mrplan
