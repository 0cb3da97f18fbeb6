#pragma once
// Median and 90th percentile of absolute relative errors: what `study` and `validate` report;
// and the plain median that every microbenchmark keeps of its repeats.
#include <vector>

namespace mrplan {

struct ErrorSummary {
  int count = 0;
  double median_abs = 0;
  double p90_abs = 0;
};

// The median (mean of the two middle values when the count is even); 0 for none.
double median(std::vector<double> values);

// Quantiles by linear interpolation between order statistics of |e| (Hyndman & Fan type 7).
ErrorSummary summarize_abs_errors(std::vector<double> relative_errors);

}  // namespace mrplan
