#include "cli/scatter_plot.hpp"

#include <fmt/format.h>

#include "cli/gnuplot.hpp"

namespace mrplan {

void scatter_plot(const std::vector<ScatterPoint>& points, const ScatterLabels& l, const std::string& png) {
  std::string cal = "$cal << EOD\n", held = "$held << EOD\n";
  for (const auto& p : points)
    if (p.reference > 0 && p.predicted > 0)  // log axes
      (p.used_for_calibration ? cal : held) += fmt::format("{} {}\n", p.reference, p.predicted);
  cal += "EOD\n", held += "EOD\n";
  const std::string script = fmt::format(
      "set terminal pngcairo size 700,650 font 'Sans,11' noenhanced\nset output '{}'\n{}{}set logscale xy\nset grid\n"
      "set key top left\nset title '{}'\nset xlabel '{}'\nset ylabel '{}'\n"
      "plot $held using 1:2 with points pt 7 title '{}', $cal using 1:2 with points pt 6 title '{}', "
      "x with lines dt 2 lc 'gray' title 'y = x'\n",
      png, cal, held, l.title, l.x, l.y, l.held_out, l.calibration);
  if (run_gnuplot(script, png)) fmt::print("wrote {}\n", png);
}

}  // namespace mrplan
