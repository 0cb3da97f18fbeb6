#include "sim/monte_carlo.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <random>

#include <Eigen/Dense>

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

// One fit's correlated parameters, ready to draw: z = L n with L L' their correlation matrix (from its
// eigen-decomposition, which a singular matrix has too), each value mean + sd z (its fit's scale: of a
// log-space fit, mean exp(sd/mean z)) held in its bounds, as a parameter drawn alone is. (The records'
// fits, whose parameters the records only bound, reached 20x their value drawn log-normal and widened
// the study's bands from 4.0 to 12.7: they keep their posterior's rows, `draws`.)
struct Block {
  std::vector<std::string> keys;
  std::vector<double> sd;
  Eigen::MatrixXd L;
  DrawScale scale = DrawScale::linear;
  const std::vector<std::vector<double>>* draws = nullptr;  // the fit's posterior, where the profile keeps it: a row drawn whole
};

std::vector<Block> blocks_of(const MachineProfile& m) {
  std::vector<Block> out;
  for (const auto& c : m.correlations) {
    Block b{c.keys, {}, {}, c.scale, c.draws.empty() ? nullptr : &c.draws};
    for (const auto& k : c.keys)
      for (const auto& f : m.fitted)
        if (f.key == k) b.sd.push_back(f.std_error);
    const auto n = static_cast<Eigen::Index>(c.keys.size());
    if (static_cast<Eigen::Index>(b.sd.size()) != n) continue;  // the reader refuses such a block; a caller's profile may not
    const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> r(c.matrix.data(), n, n);
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(r);
    b.L = eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).cwiseSqrt().asDiagonal();
    out.push_back(std::move(b));
  }
  return out;
}

// A block's draw: one of its posterior rows, or from its normal, redrawn whole while a value leaves its
// bounds (a few tries, then each at the nearest).
void draw_block(std::mt19937_64& rng, const Block& b, MachineProfile& p) {
  std::vector<ParameterSlot> slots;
  for (const auto& k : b.keys)
    if (auto s = find_parameter(p, k)) slots.push_back(*s);
  if (slots.size() != b.keys.size()) return;
  if (b.draws) {
    const auto& row = (*b.draws)[std::uniform_int_distribution<size_t>(0, b.draws->size() - 1)(rng)];
    for (size_t i = 0; i < slots.size(); ++i)
      for (double* x : slots[i].values) *x = std::clamp(row[i], slots[i].lower, slots[i].upper) * slots[i].to_internal;
    return;
  }
  std::normal_distribution<double> unit(0.0, 1.0);
  std::vector<double> mean, v(slots.size());
  for (const auto& s : slots) mean.push_back(*s.values.front() / s.to_internal);
  // a log-space fit's normal: each value its mean times exp(log sd z), the log sd its relative error
  const bool in_logs = b.scale == DrawScale::log && std::all_of(mean.begin(), mean.end(), [](double x) { return x > 0; });
  for (int tries = 0;; ++tries) {
    Eigen::VectorXd n(static_cast<Eigen::Index>(slots.size()));
    for (auto& x : n) x = unit(rng);
    const Eigen::VectorXd z = b.L * n;
    bool inside = true;
    for (size_t i = 0; i < slots.size(); ++i) {
      const double zi = z[static_cast<Eigen::Index>(i)];
      v[i] = in_logs ? mean[i] * std::exp(b.sd[i] / mean[i] * zi) : mean[i] + b.sd[i] * zi;
      inside = inside && v[i] >= slots[i].lower && v[i] <= slots[i].upper;
    }
    if (inside) break;
    if (tries == 63) {
      for (size_t i = 0; i < slots.size(); ++i) v[i] = std::clamp(mean[i], slots[i].lower, slots[i].upper);
      break;
    }
  }
  for (size_t i = 0; i < slots.size(); ++i)
    for (double* x : slots[i].values) *x = v[i] * slots[i].to_internal;
}

bool in_a_block(const std::vector<Block>& blocks, const std::string& key) {
  return std::any_of(blocks.begin(), blocks.end(), [&](const Block& b) { return std::find(b.keys.begin(), b.keys.end(), key) != b.keys.end(); });
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
  const auto blocks = blocks_of(m);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; ++i) {
    MachineProfile p = m;
    auto chosen = [&](const std::vector<std::string>& keys) {
      return from.only.empty() || std::any_of(keys.begin(), keys.end(), [&](const std::string& k) {
               return std::find(from.only.begin(), from.only.end(), k) != from.only.end();
             });
    };
    for (const auto& b : blocks)
      if (from.fitted && chosen(b.keys)) draw_block(rng, b, p);
    for (const auto& k : from.kept)  // at their values, their blocks' others as drawn
      if (auto at = find_parameter(probe, k), to = find_parameter(p, k); at && to)
        for (double* x : to->values) *x = *at->values.front();
    for (const auto& f : m.fitted) {
      if (!from.fitted || !(f.std_error > 0) || std::isinf(f.std_error) || in_a_block(blocks, f.key) || !chosen({f.key}) ||
          std::find(from.kept.begin(), from.kept.end(), f.key) != from.kept.end())
        continue;
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
    for (auto& [w, cv] : p.convergence)
      if (from.seeds) cv.seed_epoch_factor = truncated_normal(rng, 1.0, cv.seed_epochs_cv > 0 ? cv.seed_epochs_cv : kDefaultSeedEpochsCv, 0.1, 10.0);
    for (auto& [w, cv] : p.convergence)
      if (from.tuning && cv.batch_tuning_cv > 0) cv.tuning_draw = truncated_normal(rng, 1.0, cv.batch_tuning_cv, 0.1, 10.0);
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

// The fits that widen the band most, each drawn alone (a correlated block as one, block_label), those above 1.05, widest first, three at
// most; and the widest one's keys that one GPU count held near other machines' fits (their spread, not its runs'), where they make most of
// its width.
struct WidestFits {
  std::string text;  // " (most: a+b 2.1, c 1.3)"
  std::vector<std::string> held;
};
// Whether the plan's time to target moves with `key` (doubled, or 1 where it is 0).
bool plan_reads(const Plan& plan, const MachineProfile& m, const std::string& key, double time_s) {
  MachineProfile moved = m;
  const double v = parameter_value(moved, key);
  set_parameter(moved, key, v != 0 ? 2 * v : 1.0);
  return std::abs(simulate(plan, moved).totals.time_to_target_s - time_s) > 1e-9 * std::max(1.0, time_s);
}

// A correlated block's name: its two keys joined by '+', or the first of its keys the plan reads and
// how many more (a block fitted to several workloads' runs holds keys the plan never reads: another
// workload's warm-up, another family's efficiency).
// `time_s`: the plan's time to target on `m`.
std::string block_label(const Plan& plan, const MachineProfile& m, double time_s, const std::vector<std::string>& keys) {
  if (keys.size() <= 2) return fmt::format("{}", fmt::join(keys, "+"));
  const auto named = std::find_if(keys.begin(), keys.end(), [&](const std::string& k) { return plan_reads(plan, m, k, time_s); });
  return fmt::format("{} and the {} fitted with it", named == keys.end() ? keys.front() : *named, keys.size() - 1);
}

WidestFits widest_fits(const Plan& plan, const MachineProfile& m, const std::string& workload, size_t n, uint64_t seed) {
  std::vector<std::vector<std::string>> units;
  for (const auto& c : m.correlations) units.push_back(c.keys);
  for (const auto& f : m.fitted)
    if (f.std_error > 0 && std::isfinite(f.std_error) &&
        std::none_of(units.begin(), units.end(), [&](const auto& u) { return std::find(u.begin(), u.end(), f.key) != u.end(); }))
      units.push_back({f.key});
  std::vector<std::pair<double, size_t>> w;
  for (size_t i = 0; i < units.size(); ++i)
    if (const double x = width(plan_spread(plan, draw_profiles(m, workload, n, seed, fitted_alone(units[i]))).time_to_target_s); x > 1.05)
      w.emplace_back(x, i);
  std::sort(w.rbegin(), w.rend());
  if (w.size() > 3) w.resize(3);
  WidestFits out;
  std::vector<std::string> parts;
  const double time_s = w.empty() ? 0 : simulate(plan, m).totals.time_to_target_s;
  for (const auto& [x, i] : w) parts.push_back(fmt::format("{} {:.2f}", block_label(plan, m, time_s, units[i]), x));
  if (!w.empty()) {
    const auto& top = units[w.front().second];
    std::vector<std::string> held;
    for (const auto& f : m.fitted)
      if (is_held_near_priors(f) && std::find(top.begin(), top.end(), f.key) != top.end()) held.push_back(f.key);
    // named where they make most of it: kept at their values, the block's width shrinks by over half (in logs)
    if (!held.empty()) {
      const double kept_width = width(plan_spread(plan, draw_profiles(m, workload, n, seed, fitted_alone(top, held))).time_to_target_s);
      if (std::log(std::max(1.0, kept_width)) < 0.5 * std::log(w.front().first)) out.held = held;
    }
  }
  out.text = parts.empty() ? "" : fmt::format(" (most: {})", fmt::join(parts, ", "));
  return out;
}

}  // namespace

// "P90/P10 3.7: from the fitted parameters alone 1.3, seeds alone 3.5, run speed alone 1.0 (the
// widest: seeds, assumed ...)": each source drawn alone with the same seed.
std::string spread_by_source(const Plan& plan, const MachineProfile& m, const std::string& workload, size_t n, uint64_t seed,
                             const Spread& all) {
  if (n < 10 || width(all.time_to_target_s) <= 0) return "";
  struct Source {
    const char* name;
    DrawSources from;
    std::string assumed;  // what measures it, where the draws assume it
  };
  const auto cv = m.convergence.find(workload);
  const bool seeds_assumed = cv != m.convergence.end() && cv->second.seed_epochs_cv <= 0;
  const auto fits = widest_fits(plan, m, workload, n, seed);
  const std::string seeds_why =
      seeds_assumed
          ? fmt::format("{:.0f}% assumed: calibrate convergence with records of several seeds measures it", kDefaultSeedEpochsCv * 100)
          : "";
  std::string fits_why;  // most of the widest fit's spread is what one GPU count could not fit: other machines', not the runs'
  if (!fits.held.empty()) {
    const char* them = fits.held.size() > 1 ? "them" : "it";
    fits_why = fmt::format(
        "most from {}, held near other machines' fits since one GPU count cannot fit {}: calibrate records with runs "
        "at a second GPU count measures {}",
        fmt::join(fits.held, " and "), them, them);
  }
  std::vector<Source> sources = {{"fitted parameters", fitted_alone(), fits_why},
                                 {"seeds", drawn_alone(&DrawSources::seeds), seeds_why},
                                 {"run speed", drawn_alone(&DrawSources::run_speed), ""}};
  if (cv != m.convergence.end() && cv->second.batch_tuning_cv > 0)
    sources.push_back({"batch tuning", drawn_alone(&DrawSources::tuning), ""});
  std::vector<std::string> parts;
  double widest = 0;
  const Source* top = nullptr;
  for (const auto& src : sources) {
    const double w = width(plan_spread(plan, draw_profiles(m, workload, n, seed, src.from)).time_to_target_s);
    parts.push_back(fmt::format("{} alone {:.2f}", src.name, w) + (src.from.fitted ? fits.text : ""));
    if (w > widest) widest = w, top = &src;
  }
  return fmt::format("P10-P90 width (P90/P10) {:.2f}: {}; the widest: {}{}", width(all.time_to_target_s), fmt::join(parts, ", "), top->name,
                     top->assumed.empty() ? "" : " (" + top->assumed + ")");
}

void add_spread(Record& record, const Plan& plan, const MachineProfile& machine, size_t samples, uint64_t seed) {
  const auto draws = draw_profiles(machine, record.workload, samples, seed);
  const auto s = plan_spread(plan, draws);
  record.spread = RecordSpread{s.time_to_target_s, s.gpu_hours, static_cast<int>(s.samples), static_cast<int>(s.reached), seed};
  for (const auto& n : draws.notes) record.warnings.push_back("spread: " + n);
  if (const auto why = spread_by_source(plan, machine, record.workload, samples, seed, s); !why.empty()) record.warnings.push_back("spread: " + why);
}

}  // namespace mrplan
