#pragma once
// Predicted-vs-reference scatter on equal log axes with the y = x line: a colour per quantity,
// calibration points hollow.
#include <string>
#include <vector>

namespace mrplan {

struct ScatterPoint {
  double reference = 0, predicted = 0;
  bool used_for_calibration = false;
  std::string quantity;  // one colour each (epoch_s, comm_s, ...)
};

struct ScatterLabels {
  std::string title, x, y, held_out, calibration;
};

// Writes the PNG with gnuplot (a warning, not an error, when gnuplot is missing).
void scatter_plot(const std::vector<ScatterPoint>& points, const ScatterLabels& labels, const std::string& png);

}  // namespace mrplan
