#pragma once
// The staging tool's own pace from logged staging times (MLPerf HPC's staging_start-staging_stop):
// a fixed part (the tool's start, listing the files) and a node rate, io.staging_fixed_s +
// share / io.staging_node_GBps (model/io_cost). Fitted apart from the epochs: the copy tool's pace
// is not what a loader reads at.
#include <optional>
#include <string>
#include <vector>

#include "calibrate/code_priors.hpp"
#include "model/machine_profile.hpp"
#include "model/plan.hpp"

namespace mrplan {

struct StagingTime {
  std::string file;    // the record's, for messages
  const Plan* plan;    // the plan it ran
  double measured_s;   // its staging time
};

struct StagingFit {
  std::vector<FittedParameter> fitted;  // io.staging_node_GBps, and io.staging_fixed_s where identified
  std::vector<std::string> notes;       // what the times cannot pin, and why
  std::vector<double> covariance;       // of `fitted`'s values, row-major, where both are fitted (they trade off)
  std::vector<double> before_s, after_s;  // each time as the profile predicted it, before and after
};

// The fixed part other machines' fits of the same code give (code_priors), and the source a value
// held near it takes.
struct StagingPrior {
  CodePrior fixed;
  std::string held_source;
};

// Least squares of the times on each run's node share (the bytes the plan stages per node, summed
// over its resolutions): the intercept is the fixed part and the slope the inverse rate where the
// shares differ by more than 5%; with one share, the rate alone through the fixed part `prior` gives
// (its spread carried into the rate's), else through the profile's. A negative intercept is
// refitted through the origin. InputError naming the record where a plan stages nothing on `profile`.
// `fixed_source`: the fixed part's source where two shares fit it (empty: `source`; calibrate records
// tags it with the code, code_priors).
StagingFit fit_staging(const MachineProfile& profile, const std::vector<StagingTime>& times, const std::string& source,
                       const std::optional<StagingPrior>& prior = std::nullopt, const std::string& fixed_source = "");

}  // namespace mrplan
