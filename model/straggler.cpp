#include "model/straggler.hpp"

#include <cmath>
#include <unordered_map>

namespace mrplan {

double expected_max_std_normal(int n) {
  if (n <= 1) return 0;
  // remembered per n: a fit's posterior chain asks for the same few counts thousands of times
  thread_local std::unordered_map<int, double> known;
  if (const auto it = known.find(n); it != known.end()) return it->second;
  // integral of x * n * phi(x) * Phi(x)^(n-1) over x (Simpson's rule; the integrand is smooth and
  // negligible beyond [-9, 9] for any n a cluster has)
  const int steps = 720;
  const double a = -9, b = 9, h = (b - a) / steps;
  auto f = [n](double x) {
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    return x * n * phi * std::pow(cdf, n - 1);
  };
  double sum = f(a) + f(b);
  for (int i = 1; i < steps; ++i) sum += (i % 2 ? 4 : 2) * f(a + i * h);
  return known[n] = sum * h / 3;
}

double straggler_wait_s(double step_s, double cv, int ranks) {
  if (ranks <= 1 || cv <= 0) return 0;
  return step_s * cv * expected_max_std_normal(ranks);
}

}  // namespace mrplan
