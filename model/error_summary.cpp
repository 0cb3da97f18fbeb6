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
