#pragma once
// What one GPU count cannot fit (the wait for the slowest rank, a workload's first-epoch warm-up, a
// validation pass's fixed part, staging's fixed part), from machines that ran the same code at two:
// the priors `calibrate records` holds those parameters near, from the built-in machines' fits or
// from `--priors-from` profiles.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/machine_profile.hpp"
#include "model/plan.hpp"

namespace mrplan {

// Other machines' fits of one parameter: their median, and their spread in log space (the MAP fit's
// prior) and in the key's unit (staging's fixed part, which may be 0).
struct CodePrior {
  std::string key;  // compute.step_time_cv (a node-sharing spread too), compute.warmup_s.W, compute.eval_pass_ms, io.staging_fixed_s
  double value = 0, log_sd = 0, sd = 0;
  // its spread is read in the key's unit (sd), not as a factor (log_sd): it may be near 0, or its fits may not exclude 0
  bool additive = false;
  std::string source;
};

struct CodePriors {
  std::vector<CodePrior> priors;
  std::vector<std::string> left_out;  // profiles given but not used, each with its reason
  // The prior of `key` (either step-time spread's for one), or none.
  const CodePrior* of(std::string_view key) const;
};

// The code a fit describes: the workload, the library that runs its gradient allreduce and, where the
// plans name it, the ML framework ("deepcam with ddp on pytorch nvidia release"). A rank's jitter, its
// validation loop and its staging script are its implementation's, so only the same code's fits make
// a prior; a code that does not name its framework takes the fits of its workload and library on any.
// None where the plans differ.
std::optional<std::string> code_of(const std::vector<Plan>& plans);

// Whether `key` is one of the parameters code_priors gives (either step-time spread for one).
bool is_code_parameter(std::string_view key);

// The source `calibrate records` gives a code parameter it fitted at two or more GPU counts: the
// records' source, and the code where they share one (which code_priors reads back).
std::string code_source(const std::string& records_source, const std::optional<std::string>& code);

// The source of a parameter one GPU count held near `prior` ("calibrate records: FILES" → "calibrate
// records at one GPU count, near PRIOR: FILES"): not a measurement to pass on.
std::string held_source(const CodePrior& prior, const std::string& records_source);

// A value of `profile` held near other machines' prior (held_source): what a prediction from it takes
// from other machines rather than from its own runs, and the prior's source.
struct HeldValue {
  std::string key;
  double value = 0;
  std::string prior;
};
std::vector<HeldValue> held_near_priors(const MachineProfile& profile);

// Whether `fitted` holds a parameter calibrate records fitted to runs of `code` at two or more GPU counts.
bool has_fits_of(const MachineProfile& fitted, const std::string& code);

// Per parameter, the median of what `calibrate records` fitted to runs of `code` at two or more GPU
// counts in each profile (of their logs, for a factor), its logs' median absolute deviation as a
// normal's sigma (no narrower than their median relative standard error), and in the key's unit likewise. One machine's fit says
// nothing of how machines differ: its prior is as wide as a value with none (a factor of 10; ±100%).
// A profile of another code is left out, with its reason; one with no such fit, or none of `code`,
// is refused, naming the file.
CodePriors code_priors(const std::vector<std::pair<std::string, MachineProfile>>& fitted, const std::string& code);

}  // namespace mrplan
