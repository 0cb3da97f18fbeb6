#include "calibrate/calibrated_builtins.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "calibrate/builtin_mlperf_fit.hpp"
#include "calibrate/code_priors.hpp"
#include "calibrate/paper_calibration.hpp"
#include "calibrate/preprocessing_paper.hpp"
#include "model/builtin_profiles.hpp"
#include "model/errors.hpp"
#include "model/profile_parameters.hpp"
#include "model/profile_yaml.hpp"
#include "model/text_file.hpp"
#include "model/yaml_fields.hpp"

namespace mrplan {

namespace {

const char* prefitted = nullptr;

// The document of the prefitted text ("---"-separated) that starts with `head`, empty when absent.
std::string prefitted_document_with(const std::string& head) {
  if (!prefitted) return "";
  const std::string text = prefitted;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find("\n---\n", at), text.size());
    if (text.compare(at, head.size(), head) == 0) return text.substr(at, end - at);
    at = end + 5;
  }
  return "";
}

// The document of profile `key`.
std::string prefitted_document(const std::string& key) { return prefitted_document_with("name: " + key + "\n"); }

constexpr std::string_view kCodeFitsHead = "code_fits:\n";

}  // namespace

void use_prefitted_profiles(const char* yaml_documents) { prefitted = yaml_documents; }

namespace {

struct MlperfSetup {
  std::string logs_root;
  std::vector<MlperfMachine> machines;
  std::vector<MlperfFolder> hidden;  // a machine left out: its logs are in no fit
};
std::optional<MlperfSetup> mlperf_setup;

// The name under which a machine fitted to its MLPerf logs keeps its profile from before them (its
// paper fits): the prior of a leave-one-system-out check (studies/mlperf-scaling).
constexpr std::string_view kBeforeMlperf = "-paper";

// The same GPU generation: the same peaks (an A100 with 40 or 80 GB; Cori's A100 profile takes the
// preprocessing paper's 1600 GB/s of HBM, Perlmutter's the datasheet's 1555).
bool same_peaks(const MachineProfile& a, const MachineProfile& b) {
  return a.compute.peak_fp32_flops == b.compute.peak_fp32_flops && a.compute.peak_fp16_flops == b.compute.peak_fp16_flops;
}

// Whether a built-in's GPU fits are its own (the MRT paper's rows, its logs) rather than carried
// over from another machine: only then does it keep them when a fitted machine could lend.
bool fits_its_own_gpu(const MachineProfile& p) {
  return std::any_of(p.fitted.begin(), p.fitted.end(), [](const FittedParameter& f) {
    return f.key.starts_with("compute.") && !f.source.starts_with("transferred") && !f.source.starts_with("lent");
  });
}

// The machine among the first `upto` of data/mlperf_fits.yaml, fitted to its own logs, most like
// `p`: the same peaks, then the nearest memory bandwidth, then the first listed; without a GPU of the
// same peaks, the generation nearest in tensor-core peak, where it is nearer than the V100 whose MRT
// paper fits `p` carries (Eos, the first H100, takes an A100's; an A100 never a V100's). None where
// no such machine has runs.
const MachineProfile* nearest_donor(const MachineProfile& p, size_t upto);

}  // namespace

void lend_measured_fits(MachineProfile& to, const MachineProfile& from, Lend what) {
  for (const auto& f : from.fitted) {
    // what one GPU count cannot fit (the first epoch's warm-up among them) is the code's, not the
    // GPU's (calibrate/code_priors), and a batch's tuning is the system's submission's
    // (calibrate/batch_epochs_fit): not lent
    const bool code_own = is_code_parameter(f.key) || f.key.find(".tuned_factor.") != std::string::npos;
    const bool lent = f.key.starts_with("compute.") || f.key == "io.host_decode_GBps" ||
                      (what == Lend::gpu_and_epochs && f.key.starts_with("convergence."));
    if (code_own || !lent || !f.source.starts_with("calibrate records")) continue;
    set_parameter(to, f.key, f.value);
    record_fit(to, {f.key, f.value, f.std_error, fmt::format("lent by {} (fitted to its MLPerf HPC logs): {}", from.name, f.source)});
  }
}

namespace {

std::map<std::string, MachineProfile>& profile_cache() {
  static std::map<std::string, MachineProfile> cache;
  return cache;
}

const MachineProfile& built_profile(const std::string& key);

// A built-in's paper fits (and the preprocessing paper's codec rates, for the machines it ran on: its
// study starts from the paper fits, so it runs here, under the lock, once), named `key`.
MachineProfile paper_fitted(const std::string& base, const std::string& key) {
  if (prefitted) {  // the build kept NAME-paper only where the logs changed the machine
    MachineProfile p = built_profile(base);
    p.name = key;
    return p;
  }
  MachineProfile p = paper_fitted_profile(base);
  static const PreprocessingStudy codecs = preprocessing_paper_study(paper_fitted_profile);
  take_codec_fits(codecs, p);
  p.name = key;
  return p;
}

// The paper fits, then the machine's own MLPerf logs, or what a machine with the same GPU lends.
MachineProfile mlperf_fitted(const std::string& key) {
  MachineProfile p = built_profile(key + std::string(kBeforeMlperf));
  p.name = key;
  if (!mlperf_setup) return p;
  const auto& machines = mlperf_setup->machines;
  const auto own = std::find_if(machines.begin(), machines.end(), [&](const MlperfMachine& m) { return m.name == key; });
  // what its own logs leave open (without logs: its GPU's fits), from the nearest GPU above it rather
  // than a V100's, unless the GPU fits it has are its own
  if (fits_its_own_gpu(p)) return p;
  if (const MachineProfile* donor = nearest_donor(p, static_cast<size_t>(own - machines.begin()))) lend_measured_fits(p, *donor, Lend::gpu);
  // without logs of its own: the population's epochs to target (fit_to_mlperf_logs)
  const auto s = fit_to_mlperf_logs(p, own == machines.end() ? std::vector<MlperfFolder>{} : own->folders, mlperf_setup->logs_root,
                                    mlperf_setup->hidden, machines);
  // only mrplan-fit-builtins sets the logs: this is the build's log
  if (s.own_runs > 0)
    fmt::print(stderr, "{}: fitted to {} runs of its own; epochs to target with {} runs of other systems\n", key, s.own_runs, s.population_runs);
  else
    fmt::print(stderr, "{}: no runs of its own: the population's epochs to target, from {} runs\n", key, s.population_runs);
  for (const auto& why : s.skipped) fmt::print(stderr, "{}: left out of the population: {}\n", key, why);
  return p;
}

const MachineProfile* nearest_donor(const MachineProfile& p, size_t upto) {
  auto peak_gap = [&](const MachineProfile& m) { return std::abs(std::log(m.compute.peak_fp16_flops / p.compute.peak_fp16_flops)); };
  // another generation is ranked after every machine of the same peaks
  auto gap = [&](const MachineProfile& m) {
    return same_peaks(m, p) ? std::abs(std::log(m.compute.mem_bandwidth_Bps / p.compute.mem_bandwidth_Bps)) : 10 + peak_gap(m);
  };
  const double paper_gap = peak_gap(built_profile("cori-gpu"));  // where paper_profile's transferred fits come from
  const MachineProfile* best = nullptr;
  for (size_t i = 0; i < std::min(upto, mlperf_setup->machines.size()); ++i) {
    const MachineProfile& m = built_profile(mlperf_setup->machines[i].name);
    if ((same_peaks(m, p) || peak_gap(m) < paper_gap) && (!best || gap(m) < gap(*best))) best = &m;
  }
  return best;
}

// A built-in, fitted once; called with calibrated_builtin_profile's lock held (it recurses for the
// profile before the MLPerf logs, and for the machine that lends a GPU's fits).
const MachineProfile& built_profile(const std::string& key) {
  auto& cache = profile_cache();
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const std::string base = key.ends_with(kBeforeMlperf) ? key.substr(0, key.size() - kBeforeMlperf.size()) : key;
  if (const auto names = builtin_profile_names(); std::find(names.begin(), names.end(), base) == names.end())
    builtin_hardware_profile(base);  // an InputError naming the built-ins
  if (const auto doc = prefitted_document(key); !doc.empty())
    return cache.emplace(key, profile_from_yaml_text(doc, "built-in profile " + key)).first->second;
  return cache.emplace(key, key != base ? paper_fitted(base, key) : mlperf_fitted(key)).first->second;
}

}  // namespace

std::string before_mlperf(const std::string& builtin) { return builtin + std::string(kBeforeMlperf); }

void use_mlperf_logs(const std::string& logs_root, const std::string& fits_yaml, const std::string& fits_file, const std::string& leave_out) {
  mlperf_setup = MlperfSetup{logs_root, read_mlperf_fits(fits_yaml, fits_file), {}};
  if (leave_out.empty()) return;
  auto& machines = mlperf_setup->machines;
  const auto out = std::find_if(machines.begin(), machines.end(), [&](const MlperfMachine& m) { return m.name == leave_out; });
  if (out == machines.end()) fail_input(fits_file, leave_out, "no such machine to leave out");
  mlperf_setup->hidden = out->folders;
  machines.erase(out);
}

namespace {

// What the build fits per machine and code at two GPU counts (code_fits), as the last document of
// the prefitted text: one entry per machine and code.
std::string code_fits_yaml() {
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "code_fits" << YAML::Value << YAML::BeginSeq;
  for (const auto& [name, p] : builtin_code_fits()) {
    e << YAML::BeginMap << YAML::Key << "system" << YAML::Value << p.name << YAML::Key << "fitted" << YAML::Value << YAML::BeginSeq;
    for (const auto& f : p.fitted)
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "key" << YAML::Value << f.key << YAML::Key << "value" << YAML::Value << f.value
        << YAML::Key << "std_error" << YAML::Value << f.std_error << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << f.source
        << YAML::EndMap;
    e << YAML::EndSeq << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap;
  return e.c_str();
}

std::vector<std::pair<std::string, MachineProfile>> read_code_fits(const std::string& doc) {
  std::vector<std::pair<std::string, MachineProfile>> out;
  const YamlFields top(parse_yaml_text(doc, "the built-in code fits"), "the built-in code fits", "");
  for (const auto& s : top.list("code_fits")) {
    MachineProfile p;
    p.name = s.text("system");
    for (const auto& f : s.list("fitted")) p.fitted.push_back({f.text("key"), f.number("value"), f.number("std_error"), f.text("source")});
    out.emplace_back(p.name + " (built-in)", std::move(p));
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, MachineProfile>> builtin_code_fits() {
  if (const auto doc = prefitted_document_with(std::string(kCodeFitsHead)); !doc.empty()) return read_code_fits(doc);
  std::vector<std::pair<std::string, MachineProfile>> out;
  if (!mlperf_setup || prefitted) return out;
  for (const auto& m : mlperf_setup->machines)
    for (const auto& [code, fits] : code_fits(calibrated_builtin_profile(m.name), m.folders, mlperf_setup->logs_root)) {
      MachineProfile p;
      p.name = m.name;
      p.fitted = fits;
      out.emplace_back(m.name + " (built-in)", std::move(p));
    }
  return out;
}

std::string prefitted_profiles_yaml() {
  std::string out;
  auto add = [&](const std::string& name) { out += (out.empty() ? "" : "\n---\n") + profile_to_yaml(calibrated_builtin_profile(name)); };
  for (const auto& name : builtin_profile_names()) add(name);
  for (const auto& name : builtin_profile_names()) {  // where the MLPerf logs changed it
    MachineProfile before = calibrated_builtin_profile(name + std::string(kBeforeMlperf));
    before.name = name;
    if (profile_to_yaml(before) != profile_to_yaml(calibrated_builtin_profile(name))) add(name + std::string(kBeforeMlperf));
  }
  if (mlperf_setup) out += "\n---\n" + code_fits_yaml();
  return out;
}

const MachineProfile& calibrated_builtin_profile(const std::string& name) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  return built_profile(name == "cori" ? "cori-gpu" : name);
}

MachineProfile resolve_profile(const std::string& name_or_file) {
  if (names_a_file(name_or_file)) return load_profile_file(name_or_file);
  return calibrated_builtin_profile(name_or_file);
}

}  // namespace mrplan
