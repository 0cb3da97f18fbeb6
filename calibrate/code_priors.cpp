#include "calibrate/code_priors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "model/error_summary.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {

constexpr std::string_view kCodeTag = "; at two GPU counts of ", kSoftwareTag = " on ";
constexpr std::string_view kRecords = "calibrate records: ";

// The parameters one GPU count cannot fit, each with its name in words and the least value its log
// is taken at (a fitted 0 s of staging is a value, not a missing one).
struct Kind {
  std::string_view key, one, many;
  double least = 0;
  bool zero_fits = false;     // a fit may end at 0 (a staging tool that starts at once)
  bool per_workload = false;  // key is a prefix: the workload's name follows (the code names its workload)
};
constexpr Kind kKinds[] = {
    {"compute.step_time_cv", "step-time spread", "step-time spreads", 1e-3},
    {"compute.eval_pass_ms", "validation pass's fixed part", "validation passes' fixed parts", 1.0},
    {"io.staging_fixed_s", "staging's fixed part", "staging's fixed parts", 0.1, true},
    // a first epoch's excess at one count is warm-up or reads that shrink with a node's share: one
    // count cannot tell them apart (HoreKa's v2.0 DeepCAM: 45 s at 64 GPUs, 1-3 s at 512)
    {"compute.warmup_s.", "warm-up", "warm-ups", 0.01, true, true},
};

bool matches(const Kind& k, std::string_view key) {
  if (k.per_workload) return key.starts_with(k.key);
  return key == k.key || (k.key == "compute.step_time_cv" && key == "node_sharing.step_time_cv");
}

const Kind* kind_of(std::string_view key) {
  for (const auto& k : kKinds)
    if (matches(k, key)) return &k;
  return nullptr;
}

// The profile's fits of code parameters at two or more GPU counts, as calibrate records wrote them.
std::vector<const FittedParameter*> two_count_fits(const MachineProfile& p) {
  std::vector<const FittedParameter*> out;
  for (const auto& f : p.fitted)
    if (const Kind* k = kind_of(f.key); k && f.source.starts_with(kRecords) && (f.value > 0 || (k->zero_fits && f.value == 0)))
      out.push_back(&f);
  return out;
}

std::optional<std::string> code_in(const std::string& source) {
  const auto at = source.rfind(kCodeTag);
  if (at == std::string::npos) return std::nullopt;
  return source.substr(at + kCodeTag.size());
}

// Whether fits of code `fitted` serve a fit of `wanted`: the same code, or, where `wanted` does not
// name its software (a user's own runs), the same benchmark and library on any.
bool serves(const std::optional<std::string>& fitted, const std::string& wanted) {
  if (!fitted) return false;
  if (*fitted == wanted) return true;
  return wanted.find(kSoftwareTag) == std::string::npos && fitted->substr(0, fitted->find(kSoftwareTag)) == wanted;
}

CodePrior prior_of(const Kind& k, const std::vector<const FittedParameter*>& fits, const std::vector<std::string>& files, const std::string& code) {
  std::vector<double> values, logs, sds, relative;
  for (const auto* f : fits) {
    values.push_back(f->value), sds.push_back(f->std_error);
    logs.push_back(std::log(std::max(f->value, k.least))), relative.push_back(f->std_error / std::max(f->value, k.least));
  }
  const std::string_view key = k.per_workload ? std::string_view(fits.front()->key) : k.key;
  // the centre in the space its spread is read in: a factor's median is that of the logs (fits at
  // 0.001 and 0.126 give 0.011, not their mean 0.064, which a x/36 spread reads as 6x one of them)
  const double centre = k.zero_fits ? median(values) : std::exp(median(logs));
  const double relative_se = median(relative);
  CodePrior p{std::string(key), centre, relative_se, median(sds), k.zero_fits,
              fmt::format("the median of the {} of {} fitted in {}", fits.size() == 1 ? k.one : k.many, code, fmt::join(files, ", "))};
  // fits whose standard errors pass their values cannot tell them from 0 (NVIDIA's DeepCAM steps, which
  // do not grow with the ranks: 0.001 ± 0.002): read as a factor, their spread would put 10x at one sigma
  p.additive = k.zero_fits || relative_se >= 1.0;
  // the median absolute deviation, scaled to a normal's sigma: one machine unlike the others (a step
  // that does not grow) neither moves the prior nor widens it
  std::vector<double> log_dev, dev;
  for (size_t i = 0; i < values.size(); ++i)
    log_dev.push_back(std::abs(logs[i] - std::log(std::max(p.value, k.least)))), dev.push_back(std::abs(values[i] - p.value));
  p.log_sd = std::max(p.log_sd, 1.4826 * median(log_dev));
  p.sd = std::max(p.sd, 1.4826 * median(dev));
  if (fits.size() == 1) p.log_sd = std::max(p.log_sd, std::log(10.0)), p.sd = std::max(p.sd, p.value);
  return p;
}

}  // namespace

const CodePrior* CodePriors::of(std::string_view key) const {
  const Kind* k = kind_of(key);
  for (const auto& p : priors)
    if (k && matches(*k, p.key)) return &p;
  return nullptr;
}

std::optional<std::string> code_of(const std::vector<Plan>& plans) {
  std::optional<std::string> code;
  for (const auto& p : plans) {
    // a workload file is named by its stem, wherever it lies
    std::string c = fmt::format("{} with {}", std::filesystem::path(p.workload).stem().string(), to_string(p.framework));
    if (!p.software.empty()) c += fmt::format("{}{}", kSoftwareTag, p.software);
    if (code && *code != c) return std::nullopt;
    code = c;
  }
  return code;
}

bool is_code_parameter(std::string_view key) { return kind_of(key) != nullptr; }

std::string code_source(const std::string& records_source, const std::optional<std::string>& code) {
  return code ? fmt::format("{}{}{}", records_source, kCodeTag, *code) : records_source;
}

std::string held_source(const CodePrior& prior, const std::string& records_source) {
  const std::string_view files = records_source.starts_with(kRecords) ? std::string_view(records_source).substr(kRecords.size()) : records_source;
  return fmt::format("{}{}: {}", kHeldNearPriorsSource, prior.source, files);
}

std::vector<HeldValue> held_near_priors(const MachineProfile& profile) {
  std::vector<HeldValue> out;
  for (const auto& f : profile.fitted)
    if (is_held_near_priors(f)) {
      const auto files = f.source.find(": ", kHeldNearPriorsSource.size());  // the records follow the prior
      out.push_back({f.key, f.value,
                     f.source.substr(kHeldNearPriorsSource.size(),
                                     files == std::string::npos ? std::string::npos : files - kHeldNearPriorsSource.size())});
    }
  return out;
}

bool has_fits_of(const MachineProfile& fitted, const std::string& code) {
  const auto fits = two_count_fits(fitted);
  return std::any_of(fits.begin(), fits.end(), [&](const FittedParameter* f) { return serves(code_in(f->source), code); });
}

CodePriors code_priors(const std::vector<std::pair<std::string, MachineProfile>>& fitted, const std::string& code) {
  if (fitted.empty()) fail_input("", "--priors-from", "give at least one fitted profile");
  CodePriors out;
  std::vector<std::vector<const FittedParameter*>> by_kind(std::size(kKinds));
  std::vector<std::vector<std::string>> files(std::size(kKinds));
  for (const auto& [file, profile] : fitted) {
    const auto fits = two_count_fits(profile);
    if (fits.empty())
      fail_input(file, "fitted",
                 "no step-time spread, warm-up, validation pass's or staging's fixed part fitted by calibrate records at two or more "
                 "GPU counts: fit this machine's runs at two or more GPU counts first");
    const auto mine = std::count_if(fits.begin(), fits.end(), [&](const FittedParameter* f) { return serves(code_in(f->source), code); });
    if (mine == 0) {
      const auto theirs = code_in(fits.front()->source);
      out.left_out.push_back(fmt::format("{}: its fits are {}, not {}'s", file, theirs ? *theirs + "'s" : "of runs of several codes", code));
      continue;
    }
    for (const auto* f : fits)
      if (serves(code_in(f->source), code)) {
        const auto k = static_cast<size_t>(kind_of(f->key) - kKinds);
        by_kind[k].push_back(f), files[k].push_back(file);
      }
  }
  for (size_t k = 0; k < std::size(kKinds); ++k)
    if (!by_kind[k].empty()) out.priors.push_back(prior_of(kKinds[k], by_kind[k], files[k], code));
  if (out.priors.empty())
    fail_input(fitted.front().first, "--priors-from", fmt::format("no profile given has fits of {} at two GPU counts: {}", code, fmt::join(out.left_out, "; ")));
  return out;
}

}  // namespace mrplan
