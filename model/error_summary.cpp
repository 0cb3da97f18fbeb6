#include "model/error_summary.hpp"

#include <algorithm>
#include <cmath>

namespace mrplan {

ErrorSummary summarize_abs_errors(std::vector<double> e) {
  for (auto& v : e) v = std::abs(v);
  ErrorSummary s;
  s.count = static_cast<int>(e.size());
  if (e.empty()) return s;
  std::sort(e.begin(), e.end());
  auto q = [&](double f) {
    const double pos = f * static_cast<double>(e.size() - 1);
    const size_t lo = static_cast<size_t>(pos), hi = std::min(e.size() - 1, lo + 1);
    return e[lo] + (e[hi] - e[lo]) * (pos - static_cast<double>(lo));
  };
  s.median_abs = q(0.5);
  s.p90_abs = q(0.9);
  return s;
}

}  // namespace mrplan
