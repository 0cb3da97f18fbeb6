#include "sim/monte_carlo.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "model/profile_parameters.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

namespace {

// A normal draw held within [lower, upper] by redrawing (a few tries, then the nearest bound).
double truncated_normal(std::mt19937_64& rng, double mean, double sd, double lower, double upper) {
  std::normal_distribution<double> n(mean, sd);
  for (int i = 0; i < 64; ++i)
    if (const double v = n(rng); v >= lower && v <= upper) return v;
  return std::clamp(mean, lower, upper);
}

}  // namespace

ProfileDraws draw_profiles(const MachineProfile& m, const std::string& workload, size_t n, uint64_t seed, DrawSources from) {
  ProfileDraws d;
  d.seed = seed;
  std::vector<std::string> unidentified;
  MachineProfile probe = m;
  for (const auto& f : m.fitted)
    if (std::isinf(f.std_error) && find_parameter(probe, f.key)) unidentified.push_back(f.key);
  if (!unidentified.empty())
    d.notes.push_back(fmt::format("not identified by its fit, held at its value: {}", fmt::join(unidentified, ", ")));
  if (m.compute.run_speed_cv <= 0)
    d.notes.push_back("run-to-run speed of the machine not measured: not drawn (records with the runs' matmul at their start measure it)");
  if (auto it = m.convergence.find(workload); it != m.convergence.end() && it->second.seed_epochs_cv <= 0)
    d.notes.push_back(fmt::format("seed-to-seed spread of {} not measured: {:.0f}% assumed (measure it: calibrate convergence with "
                                  "records of several seeds)", workload, kDefaultSeedEpochsCv * 100));
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; ++i) {
    MachineProfile p = m;
    for (const auto& f : m.fitted) {
      if (!from.fitted || !(f.std_error > 0) || std::isinf(f.std_error)) continue;
      auto slot = find_parameter(p, f.key);
      if (!slot || !slot->independent) continue;
      const double mean = *slot->values.front() / slot->to_internal;
      const double v = truncated_normal(rng, mean, f.std_error, slot->lower, slot->upper) * slot->to_internal;
      for (double* x : slot->values) *x = v;
    }
    if (from.run_speed && m.compute.run_speed_cv > 0) {  // this run's machine, faster or slower than the calibration's
      const double f = truncated_normal(rng, 1.0, m.compute.run_speed_cv, 0.1, 10.0);
      p.compute.peak_fp32_flops *= f, p.compute.peak_fp16_flops *= f, p.compute.mem_bandwidth_Bps *= f;
    }
    for (auto& [w, cv] : p.convergence) {
      if (!from.seeds) break;
      const double spread = cv.seed_epochs_cv > 0 ? cv.seed_epochs_cv : kDefaultSeedEpochsCv;
      cv.seed_epoch_factor = truncated_normal(rng, 1.0, spread, 0.1, 10.0);
    }
    d.profiles.push_back(std::move(p));
  }
  return d;
}

double quantile(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const double x = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(x));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (x - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

Quantiles quantiles_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {quantile(v, 0.1), quantile(v, 0.5), quantile(v, 0.9)};
}

Spread plan_spread(const Plan& plan, const ProfileDraws& draws, std::optional<double> forced) {
  std::vector<double> time_s, gpu_hours;
  Spread s;
  for (const auto& profile : draws.profiles) {
    const auto pp = prepare(plan, profile);
    const auto t = totals(pp, model_epochs(pp, forced));
    time_s.push_back(t.time_s);
    gpu_hours.push_back(t.gpu_hours);
    s.reached += t.reached_target ? 1 : 0;
  }
  s.samples = draws.profiles.size();
  std::sort(time_s.begin(), time_s.end());
  std::sort(gpu_hours.begin(), gpu_hours.end());
  s.time_to_target_s = quantiles_of(time_s);
  s.gpu_hours = quantiles_of(gpu_hours);
  s.time_s = std::move(time_s);
  s.gpu_hour = std::move(gpu_hours);
  return s;
}

void add_sweep_spread(std::vector<SweepPoint>& points, const Plan& plan, const ProfileDraws& draws, const SweepSpec& spec, unsigned threads) {
  std::vector<std::vector<double>> time_s(points.size()), gpu_hours(points.size());
  for (const auto& profile : draws.profiles) {
    const auto again = run_sweep(plan, profile, spec, threads);
    for (size_t i = 0; i < points.size(); ++i) time_s[i].push_back(again[i].time_to_target_s), gpu_hours[i].push_back(again[i].gpu_hours);
  }
  for (size_t i = 0; i < points.size(); ++i) {
    points[i].time_spread = quantiles_of(std::move(time_s[i]));
    points[i].gpu_hours_spread = quantiles_of(std::move(gpu_hours[i]));
  }
}

namespace {

double width(const Quantiles& q) { return q.p10 > 0 ? q.p90 / q.p10 : 0; }

// "P90/P10 3.7: from the fitted parameters alone 1.3, seeds alone 3.5, run speed alone 1.0 (the
// widest: seeds, assumed ...)": each source drawn alone with the same seed.
std::string width_by_source(const Plan& plan, const MachineProfile& m, const std::string& workload, size_t n, uint64_t seed, const Spread& all) {
  if (n < 10 || width(all.time_to_target_s) <= 0) return "";
  struct Source {
    const char* name;
    DrawSources from;
    std::string assumed;  // what measures it, where the draws assume it
  };
  const auto cv = m.convergence.find(workload);
  const bool seeds_assumed = cv != m.convergence.end() && cv->second.seed_epochs_cv <= 0;
  const std::vector<Source> sources = {
      {"fitted parameters", {true, false, false}, ""},
      {"seeds", {false, true, false},
       seeds_assumed ? fmt::format("{:.0f}% assumed: calibrate convergence with records of several seeds measures it", kDefaultSeedEpochsCv * 100) : ""},
      {"run speed", {false, false, true}, ""}};
  std::vector<std::string> parts;
  double widest = 0;
  const Source* top = nullptr;
  for (const auto& src : sources) {
    const double w = width(plan_spread(plan, draw_profiles(m, workload, n, seed, src.from)).time_to_target_s);
    parts.push_back(fmt::format("{} alone {:.2f}", src.name, w));
    if (w > widest) widest = w, top = &src;
  }
  return fmt::format("P10-P90 width (P90/P10) {:.2f}: {}; the widest: {}{}", width(all.time_to_target_s), fmt::join(parts, ", "), top->name,
                     top->assumed.empty() ? "" : " (" + top->assumed + ")");
}

}  // namespace

void add_spread(Record& record, const Plan& plan, const MachineProfile& machine, size_t samples, uint64_t seed) {
  const auto draws = draw_profiles(machine, record.workload, samples, seed);
  const auto s = plan_spread(plan, draws);
  record.spread = RecordSpread{s.time_to_target_s, s.gpu_hours, static_cast<int>(s.samples), static_cast<int>(s.reached), seed};
  for (const auto& n : draws.notes) record.warnings.push_back("spread: " + n);
  if (const auto why = width_by_source(plan, machine, record.workload, samples, seed, s); !why.empty()) record.warnings.push_back("spread: " + why);
}

}  // namespace mrplan
