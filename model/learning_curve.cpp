#include "model/learning_curve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace mrplan {

double curve_value(const LearningCurve& c, double e) {
  if (c.form == CurveForm::power) return c.floor + c.amplitude * std::pow(1.0 + e, -c.scale);
  return c.floor + c.amplitude * std::exp(-e / c.scale);
}

std::optional<double> crossing_epoch(const LearningCurve& c, double target) {
  if (c.amplitude == 0) return std::nullopt;
  const double ratio = (target - c.floor) / c.amplitude;
  if (ratio >= 1) return 0.0;
  if (ratio <= 0) return std::nullopt;
  return c.form == CurveForm::power ? std::pow(ratio, -1.0 / c.scale) - 1.0 : -c.scale * std::log(ratio);
}

std::optional<int> epochs_to_reach(const LearningCurve& c, double target, int max_epochs) {
  const bool falling = c.amplitude >= 0;
  auto reached = [&](double e) {
    const double v = curve_value(c, e);
    return falling ? v <= target : v >= target;
  };
  // both forms are monotone: invert them in closed form, then settle the rounding by evaluation
  const double ratio = (target - c.floor) / c.amplitude;
  if (c.amplitude != 0 && ratio > 0 && ratio < 1) {
    const double exact = c.form == CurveForm::power ? std::pow(ratio, -1.0 / c.scale) - 1.0 : -c.scale * std::log(ratio);
    int e = std::max(1, static_cast<int>(std::ceil(exact)));
    while (e > 1 && reached(e - 1)) --e;
    while (e <= max_epochs && !reached(e)) ++e;
    if (e <= max_epochs) return e;
    return std::nullopt;
  }
  if (ratio <= 0) return reached(1) ? std::optional<int>(1) : std::nullopt;
  for (int e = 1; e <= max_epochs; ++e) {
    const double v = curve_value(c, e);
    if (falling ? v <= target : v >= target) return e;
  }
  return std::nullopt;
}

std::optional<int> switch_epoch(const std::vector<double>& loss, const SwitchRule& rule) {
  if (rule.patience < 1) throw std::invalid_argument("switch rule patience must be >= 1");
  std::vector<double> running_min(loss.size());
  for (size_t i = 0; i < loss.size(); ++i) running_min[i] = i == 0 ? loss[0] : std::min(running_min[i - 1], loss[i]);
  for (size_t e = rule.patience + 1; e <= loss.size(); ++e) {
    const double before = running_min[e - 1 - rule.patience];
    const double now = running_min[e - 1];
    if (before - now < rule.epsilon) return static_cast<int>(e);
  }
  return std::nullopt;
}

std::optional<double> predicted_switch_epoch(const LearningCurve& loss, const SwitchRule& rule,
                                             double window_epochs, double max_epochs, double start) {
  if (window_epochs <= 0) throw std::invalid_argument("switch rule window must be positive");
  const int n = static_cast<int>(std::floor(max_epochs / window_epochs));
  if (rule.patience < 1) throw std::invalid_argument("switch rule patience must be >= 1");
  if (loss.amplitude >= 0) {
    // A falling curve is its own running minimum and its reduction over the last T samples,
    // c(i-T) - c(i), only shrinks with i (both forms): the first i where it drops below epsilon
    // is found by bisection — the same answer as the scan below, in log(n) evaluations.
    auto below = [&](int i) {
      return curve_value(loss, start + (i - rule.patience) * window_epochs) - curve_value(loss, start + i * window_epochs) < rule.epsilon;
    };
    int lo = rule.patience + 1, hi = n;
    if (lo > n || !below(hi)) return std::nullopt;
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (below(mid)) hi = mid;
      else lo = mid + 1;
    }
    return lo * window_epochs;
  }
  std::vector<double> samples;
  samples.reserve(n);
  for (int i = 1; i <= n; ++i) samples.push_back(curve_value(loss, start + i * window_epochs));
  auto w = switch_epoch(samples, rule);
  if (!w) return std::nullopt;
  return *w * window_epochs;
}

double coarse_progress(const LearningCurve& loss, double s) {
  const double start = curve_value(loss, 0), end = loss.floor;
  if (start == end) return 1.0;
  if (end > 0 && start > end)  // orders of magnitude of loss reduction made, of those attainable
    return std::clamp(std::log(start / curve_value(loss, s)) / std::log(start / end), 0.0, 1.0);
  return std::clamp((start - curve_value(loss, s)) / (start - end), 0.0, 1.0);
}

bool pretrained_measured(const ConvergenceParams& p) { return p.pretrained_progress != ConvergenceParams::kUnmeasured; }

double pretrained_start(const ConvergenceParams& p) { return pretrained_measured(p) ? p.pretrained_progress : p.transfer_efficiency; }

double dense_epochs_after_transfer(const ConvergenceParams& p, double e0, double s) {
  return dense_epochs_after_transfer(p, e0, s, coarse_progress(p.coarse_loss, s));
}

double dense_epochs_after_transfer(const ConvergenceParams& p, double e0, double s, double k) {
  return std::max(1.0, e0 * (1.0 - p.transfer_efficiency * k)) + p.overtrain_penalty * std::max(0.0, s - p.overtrain_epochs);
}

double resolution_progress(const ConvergenceParams& p, int resolution, double e0, double epochs) {
  if (epochs <= 0) return 0.0;
  if (resolution == 1) return e0 > 0 ? std::min(1.0, epochs / e0) : 1.0;
  return coarse_progress(p.coarse_loss, epochs);
}

double epochs_for_progress(const ConvergenceParams& p, int resolution, double e0, double k) {
  if (k <= 0) return 0.0;
  if (resolution == 1) return std::min(1.0, k) * e0;
  // the loss at which coarse_progress is k, then where the curve crosses it (both in closed form:
  // sweeps evaluate this for every point)
  const auto& c = p.coarse_loss;
  const double start = curve_value(c, 0), end = c.floor;
  if (start == end) return 0.0;
  constexpr double never = 1e7;  // the curve only approaches its floor
  if (k >= 1) return never;
  const double loss = end > 0 && start > end ? start * std::pow(start / end, -k) : start - k * (start - end);
  return crossing_epoch(c, loss).value_or(never);
}

double progress_after(const ConvergenceParams& p, int resolution, double e0, double k0, double epochs) {
  return resolution_progress(p, resolution, e0, epochs_for_progress(p, resolution, e0, k0) + epochs);
}

double fused_progress(const ConvergenceParams& p, double bottom, double top) {
  // below 0 a fusion set the model back (its layers do not fit each other): more epochs than from scratch
  return std::clamp(p.transfer_efficiency * bottom + p.fusion_efficiency * top, -1.0, 1.0);
}

double dense_epochs_after_progress(double e0, double k) { return std::max(1.0, e0 * (1.0 - k)); }

std::optional<MeasuredTuning> measured_tuning(const ConvergenceParams& p, int global_batch, const std::string& recipe) {
  if (!recipe.empty())
    if (const auto it = p.tuned_factor.find(TuningSlot{global_batch, recipe_id(recipe)}); it != p.tuned_factor.end())
      return MeasuredTuning{it->first, it->second};
  const auto first = p.tuned_factor.lower_bound(TuningSlot{global_batch, ""});
  const auto last = p.tuned_factor.lower_bound(TuningSlot{global_batch + 1, ""});
  if (first != last && (first->first.recipe_id.empty() || (recipe.empty() && std::next(first) == last)))
    return MeasuredTuning{first->first, first->second};
  return std::nullopt;
}

double epoch_scale_for_batch(const ConvergenceParams& p, double global_batch, const std::string& recipe) {
  const int batch = static_cast<int>(std::lround(global_batch));
  const auto tuned = std::abs(global_batch - batch) < 1e-9 ? measured_tuning(p, batch, recipe) : std::nullopt;
  const double factor = p.epoch_factor * (tuned ? tuned->factor : p.tuning_draw);
  if (p.critical_batch <= 0) return factor;
  return factor * (1.0 + global_batch / p.critical_batch) / (1.0 + p.reference_global_batch / p.critical_batch);
}

// A seed's draw shortens a run to no less than a tenth (a draw far below 1 read at few epochs).
constexpr double kMinSeedFactor = 0.1;

double seed_factor_at(const ConvergenceParams& p, double epochs) {
  if (p.seed_epochs_ref <= 0 || epochs <= 0) return p.seed_epoch_factor;
  return std::max(kMinSeedFactor, 1.0 + (p.seed_epoch_factor - 1.0) * std::sqrt(p.seed_epochs_ref / epochs));
}

double seeded_epochs(const ConvergenceParams& p, double epochs) { return epochs * seed_factor_at(p, epochs); }

double unseeded_epochs(const ConvergenceParams& p, double epochs) {
  if (epochs <= 0) return epochs;
  if (p.seed_epochs_ref <= 0) return epochs / p.seed_epoch_factor;
  // u + c sqrt(u) = epochs, c = (f - 1) sqrt(ref): a quadratic in sqrt(u); at the floor, u f_min = epochs
  const double c = (p.seed_epoch_factor - 1.0) * std::sqrt(p.seed_epochs_ref);
  const double root = 0.5 * (std::sqrt(c * c + 4.0 * epochs) - c);
  const double u = root * root;
  return seed_factor_at(p, u) > kMinSeedFactor ? u : epochs / kMinSeedFactor;
}

std::string recipe_id(const std::string& recipe) {
  if (recipe.empty()) return "";
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64-bit offset basis and prime
  for (unsigned char c : recipe) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{:08x}", static_cast<uint32_t>(h ^ (h >> 32)));
}

std::string to_string(const TuningSlot& s) {
  return s.recipe_id.empty() ? std::to_string(s.global_batch) : fmt::format("{}/{}", s.global_batch, s.recipe_id);
}

std::optional<TuningSlot> tuning_slot_from_string(std::string_view text) {
  const auto slash = text.find('/');
  const auto b = text.substr(0, slash);
  TuningSlot s;
  if (std::from_chars(b.data(), b.data() + b.size(), s.global_batch).ptr != b.data() + b.size() || s.global_batch <= 0) return std::nullopt;
  if (slash == std::string_view::npos) return s;
  s.recipe_id = std::string(text.substr(slash + 1));
  const bool hex = s.recipe_id.size() == 8 && s.recipe_id.find_first_not_of("0123456789abcdef") == std::string::npos;
  return hex ? std::optional(s) : std::nullopt;
}

}  // namespace mrplan
