#pragma once
// Predicted-vs-reference scatter on log axes with the y = x line, calibration points apart.
#include <string>
#include <vector>

namespace mrplan {

struct ScatterPoint {
  double reference = 0, predicted = 0;
  bool used_for_calibration = false;
};

struct ScatterLabels {
  std::string title, x, y, held_out, calibration;
};

// Writes the PNG with gnuplot (a warning, not an error, when gnuplot is missing).
void scatter_plot(const std::vector<ScatterPoint>& points, const ScatterLabels& labels, const std::string& png);

}  // namespace mrplan
