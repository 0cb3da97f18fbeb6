#include "calibrate/straggler_prior.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "model/error_summary.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {

constexpr std::string_view kCodeTag = "; the step-time spread of ";

const FittedParameter* fitted_spread(const MachineProfile& p) {
  for (const auto& f : p.fitted)
    if ((f.key == "compute.step_time_cv" || f.key == "node_sharing.step_time_cv") && f.source.starts_with("calibrate records:") && f.value > 0)
      return &f;
  return nullptr;
}

std::optional<std::string> code_in(const std::string& source) {
  const auto at = source.rfind(kCodeTag);
  if (at == std::string::npos) return std::nullopt;
  return source.substr(at + kCodeTag.size());
}

}  // namespace

std::optional<std::string> code_of(const std::vector<Plan>& plans) {
  std::optional<std::string> code;
  for (const auto& p : plans) {
    // a workload file is named by its stem, wherever it lies
    const std::string c = fmt::format("{} with {}", std::filesystem::path(p.workload).stem().string(), to_string(p.framework));
    if (code && *code != c) return std::nullopt;
    code = c;
  }
  return code;
}

std::string spread_source(const std::string& records_source, const std::optional<std::string>& code) {
  return code ? fmt::format("{}{}{}", records_source, kCodeTag, *code) : records_source;
}

bool has_spread_of(const MachineProfile& fitted, const std::string& code) {
  const FittedParameter* f = fitted_spread(fitted);
  return f && code_in(f->source) == code;
}

SpreadPrior straggler_prior(const std::vector<std::pair<std::string, MachineProfile>>& fitted, const std::string& code) {
  if (fitted.empty()) fail_input("", "--straggler-from", "give at least one fitted profile");
  std::vector<double> values, logs, relative_errors;
  std::vector<std::string> files, left_out;
  for (const auto& [file, profile] : fitted) {
    const FittedParameter* f = fitted_spread(profile);
    if (!f)
      fail_input(file, "fitted",
                 "no step-time spread fitted by calibrate records (compute.step_time_cv): fit this machine's runs at two or more GPU "
                 "counts first");
    const auto theirs = code_in(f->source);
    if (theirs != code) {
      left_out.push_back(fmt::format("{}: its step-time spread is {}, not {}'s", file, theirs ? *theirs + "'s" : "of runs of several codes", code));
      continue;
    }
    values.push_back(f->value), logs.push_back(std::log(f->value)), files.push_back(file);
    relative_errors.push_back(f->std_error / f->value);
  }
  if (values.empty())
    fail_input(fitted.front().first, "--straggler-from",
               fmt::format("no profile given has a step-time spread of {}: {}", code, fmt::join(left_out, "; ")));
  // no narrower than one fit pins its own value
  SpreadPrior prior{median(values), median(relative_errors),
                    fmt::format("the median of the step-time spreads of {} fitted in {}", code, fmt::join(files, ", ")), left_out};
  // the logs' median absolute deviation, scaled to a normal's sigma: one machine unlike the others
  // (a step that does not grow) neither moves the prior nor widens it
  std::vector<double> deviations;
  for (const double l : logs) deviations.push_back(std::abs(l - std::log(prior.value)));
  prior.log_sd = std::max(prior.log_sd, 1.4826 * median(deviations));
  return prior;
}

}  // namespace mrplan
