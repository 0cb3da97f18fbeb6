#include "model/error_summary.hpp"

#include <algorithm>
#include <cmath>

namespace mrplan {

namespace {

// Hyndman & Fan type 7 quantile of sorted values.
double sorted_quantile(const std::vector<double>& e, double f) {
  const double pos = f * static_cast<double>(e.size() - 1);
  const size_t lo = static_cast<size_t>(pos), hi = std::min(e.size() - 1, lo + 1);
  return e[lo] + (e[hi] - e[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return sorted_quantile(v, 0.5);
}

double back_to_back_spread(const std::vector<double>& t) {
  std::vector<double> d;
  for (size_t i = 0; i + 1 < t.size(); i += 2) d.push_back(t[i] - t[i + 1]);
  if (d.size() < 2) return 0;
  double mean_t = 0, mean_d = 0, var_d = 0;
  for (double v : t) mean_t += v / static_cast<double>(t.size());
  for (double v : d) mean_d += v / static_cast<double>(d.size());
  for (double v : d) var_d += (v - mean_d) * (v - mean_d) / static_cast<double>(d.size() - 1);
  return std::sqrt(var_d / 2) / mean_t;  // var(a - b) = 2 var(step) for independent steps
}

ErrorSummary summarize_abs_errors(std::vector<double> e) {
  for (auto& v : e) v = std::abs(v);
  ErrorSummary s;
  s.count = static_cast<int>(e.size());
  if (e.empty()) return s;
  std::sort(e.begin(), e.end());
  s.median_abs = sorted_quantile(e, 0.5);
  s.p90_abs = sorted_quantile(e, 0.9);
  return s;
}

}  // namespace mrplan
