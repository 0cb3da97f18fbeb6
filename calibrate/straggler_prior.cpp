#include "calibrate/straggler_prior.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "model/error_summary.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {

const FittedParameter* fitted_spread(const MachineProfile& p) {
  for (const auto& f : p.fitted)
    if ((f.key == "compute.step_time_cv" || f.key == "node_sharing.step_time_cv") && f.source.starts_with("calibrate records:") && f.value > 0)
      return &f;
  return nullptr;
}

}  // namespace

SpreadPrior straggler_prior(const std::vector<std::pair<std::string, MachineProfile>>& fitted) {
  if (fitted.empty()) fail_input("", "--straggler-from", "give at least one fitted profile");
  std::vector<double> values, logs, relative_errors;
  std::vector<std::string> files;
  for (const auto& [file, profile] : fitted) {
    const FittedParameter* f = fitted_spread(profile);
    if (!f)
      fail_input(file, "fitted",
                 "no step-time spread fitted by calibrate records (compute.step_time_cv): fit this machine's runs at two or more GPU "
                 "counts first");
    values.push_back(f->value), logs.push_back(std::log(f->value)), files.push_back(file);
    relative_errors.push_back(f->std_error / f->value);
  }
  // no narrower than one fit pins its own value
  SpreadPrior prior{median(values), median(relative_errors), fmt::format("the median of the step-time spreads fitted in {}", fmt::join(files, ", "))};
  // the logs' median absolute deviation, scaled to a normal's sigma: one machine unlike the others
  // (a step that does not grow) neither moves the prior nor widens it
  std::vector<double> deviations;
  for (const double l : logs) deviations.push_back(std::abs(l - std::log(prior.value)));
  prior.log_sd = std::max(prior.log_sd, 1.4826 * median(deviations));
  return prior;
}

}  // namespace mrplan
