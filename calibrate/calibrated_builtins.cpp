#include "calibrate/calibrated_builtins.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "calibrate/builtin_mlperf_fit.hpp"
#include "calibrate/paper_calibration.hpp"
#include "calibrate/preprocessing_paper.hpp"
#include "model/builtin_profiles.hpp"
#include "model/profile_parameters.hpp"
#include "model/profile_yaml.hpp"
#include "model/text_file.hpp"

namespace mrplan {

namespace {

const char* prefitted = nullptr;

// The document of profile `key` in the prefitted text ("---"-separated), empty when absent.
std::string prefitted_document(const std::string& key) {
  if (!prefitted) return "";
  const std::string text = prefitted, head = "name: " + key + "\n";
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find("\n---\n", at), text.size());
    if (text.compare(at, head.size(), head) == 0) return text.substr(at, end - at);
    at = end + 5;
  }
  return "";
}

}  // namespace

void use_prefitted_profiles(const char* yaml_documents) { prefitted = yaml_documents; }

namespace {

struct MlperfSetup {
  std::string logs_root;
  std::map<std::string, std::vector<MlperfFolder>> machines;
};
std::optional<MlperfSetup> mlperf_setup;

// The name under which a machine fitted to its MLPerf logs keeps its profile from before them (its
// paper fits): the prior of a leave-one-system-out check (studies/mlperf-scaling).
constexpr std::string_view kBeforeMlperf = "-paper";

// The same GPU: the same peaks, and HBM within 5% (Cori's A100 profile takes the preprocessing
// paper's 1600 GB/s, Perlmutter's the datasheet's 1555).
bool same_gpu(const MachineProfile& a, const MachineProfile& b) {
  return a.compute.peak_fp32_flops == b.compute.peak_fp32_flops && a.compute.peak_fp16_flops == b.compute.peak_fp16_flops &&
         std::abs(a.compute.mem_bandwidth_Bps / b.compute.mem_bandwidth_Bps - 1) <= 0.05;
}

}  // namespace

void lend_measured_fits(MachineProfile& to, const MachineProfile& from) {
  for (const auto& f : from.fitted) {
    const bool lent = f.key.starts_with("compute.") || f.key == "io.host_decode_GBps" || f.key.starts_with("convergence.");
    if (!lent || !f.source.starts_with("calibrate records")) continue;
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
  if (const auto own = mlperf_setup->machines.find(key); own != mlperf_setup->machines.end()) {
    const auto s = fit_to_mlperf_logs(p, own->second, mlperf_setup->logs_root);
    // only mrplan-fit-builtins sets the logs: this is the build's log
    fmt::print(stderr, "{}: fitted to {} runs of its own; epochs to target with {} runs of other systems\n", key, s.own_runs, s.population_runs);
    for (const auto& why : s.skipped) fmt::print(stderr, "{}: left out of the population: {}\n", key, why);
    return p;
  }
  for (const auto& entry : mlperf_setup->machines)
    if (const MachineProfile& donor = built_profile(entry.first); same_gpu(donor, p)) {
      lend_measured_fits(p, donor);
      break;
    }
  return p;
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

void use_mlperf_logs(const std::string& logs_root, const std::string& fits_yaml, const std::string& fits_file) {
  mlperf_setup = MlperfSetup{logs_root, read_mlperf_fits(fits_yaml, fits_file)};
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
