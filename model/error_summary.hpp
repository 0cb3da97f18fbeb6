#pragma once
// Median and 90th percentile of absolute relative errors: what `study` and `validate` report;
// and the plain median that every microbenchmark keeps of its repeats, and the step-to-step spread.
#include <vector>

namespace mrplan {

struct ErrorSummary {
  int count = 0;
  double median_abs = 0;
  double p90_abs = 0;
};

// The median (mean of the two middle values when the count is even); 0 for none.
double median(std::vector<double> values);

// The relative standard deviation of one step from the next, from back-to-back pairs
// (t[0], t[1]), (t[2], t[3]), ...: sqrt(var(a - b) / 2) / mean(t), the differences taken around
// their mean (the first of a pair may find colder caches), so drift between pairs stays out. 0 for
// fewer than two pairs.
double back_to_back_spread(const std::vector<double>& t);

// Quantiles by linear interpolation between order statistics of |e| (Hyndman & Fan type 7).
ErrorSummary summarize_abs_errors(std::vector<double> relative_errors);

}  // namespace mrplan
