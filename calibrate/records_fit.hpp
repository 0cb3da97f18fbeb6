#pragma once
// `mrplan calibrate records`: a profile's timing parameters fitted from measured Records (one or
// several GPU counts, any cluster: ingested MLPerf logs or mrplan's own runs) by least squares
// through the simulator itself, so the fit and the prediction share every formula.
#include <string>
#include <vector>

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
  std::vector<std::string> at_prior;  // candidates the records do not move
  std::vector<std::string> bounded;   // fitted, but only bounded by the records (a rate at least this fast), not pinned
  std::vector<RecordObservation> observations;
  std::vector<std::string> used;  // the records the fit used (named as the source of every fitted value)
};

// Candidates in order of preference: the compute efficiency of each math family the workloads use,
// the validation pass's inference factor, the per-kernel overhead, the allreduce's bandwidth
// efficiency and latency, memory-bound efficiency. A candidate enters while the records can tell it
// from those before it (its sensitivity column is not a combination of theirs) and the parameters
// stay fewer than the observations. `profile` gets the fitted values, recorded through the registry.
RecordsFit fit_records(MachineProfile& profile, const std::vector<NamedRecord>& records);

}  // namespace mrplan
