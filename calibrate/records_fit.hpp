#pragma once
// `mrplan calibrate records`: a profile's timing parameters fitted from measured Records (one or
// several GPU counts, any cluster: ingested MLPerf logs or mrplan's own runs) by least squares
// through the simulator itself, so the fit and the prediction share every formula.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "calibrate/code_priors.hpp"
#include "calibrate/validation.hpp"
#include "model/machine_profile.hpp"

namespace mrplan {

// One measured quantity per record and model: the steady epoch's training time (median over the
// epochs after the first) and its validation pass (median), against the simulator's third epoch.
struct RecordObservation {
  std::string record, quantity;
  double measured = 0, prior = 0, fitted = 0;  // prior / fitted: predicted before and after the fit
};

struct RecordsFit {
  std::vector<FittedParameter> fitted;  // key, value (the key's unit), std_error (0: exactly determined)
  std::vector<std::string> at_prior;    // candidates the records do not move
  std::vector<std::string> bounded;     // fitted, but only bounded by the records (a rate at least this fast), not pinned
  std::vector<RecordObservation> observations;
  std::vector<std::string> used;      // the records the fit used (named as the source of every fitted value)
  std::vector<std::string> warnings;  // what the fit could not do, and what the user may check
  std::vector<std::string> notes;     // parameters the records cannot fit, and what would
  std::string band;                   // how a band draws the joint fit's parameters (its posterior's rows), where it does
  std::optional<CodePriors> priors;      // of what one GPU count cannot fit, where profiles gave them
};

// Every candidate (compute efficiency per math family, inference factor, a validation pass's fixed
// part where the runs validate two or more shares of the held-out samples a GPU, kernel overhead, allreduce
// bandwidth efficiency and latency, memory-bound efficiency, decode, file system, page cache and
// NVMe rates) is fitted at once, maximum a posteriori: relative errors of 2% per observation against
// a log-normal prior (a factor of 10) around the profile's value, so that one record moves what it
// can and the prior holds the rest. A parameter the records do not move is left at its prior; one
// they narrow less than twofold is kept but reported as bounded, not pinned. `profile` gets the
// fitted values, recorded through the registry with the records as their source. What one GPU count
// cannot fit (the wait for the slowest rank, a validation pass's and staging's fixed parts) is fitted
// where the records run at two or more (its source then names their code: code_priors); at one, it
// is held near the prior that `priors_from`, other machines' profiles fitted at two counts, give
// from those of the records' code (held_source), and left out without one.
RecordsFit fit_records(MachineProfile& profile, const std::vector<NamedRecord>& records,
                       const std::vector<std::pair<std::string, MachineProfile>>& priors_from = {});

}  // namespace mrplan
