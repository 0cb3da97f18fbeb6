#include "cli/scatter_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cli/gnuplot.hpp"

namespace mrplan {

void scatter_plot(const std::vector<ScatterPoint>& points, const ScatterLabels& l, const std::string& png) {
  std::map<std::string, std::string> blocks;  // per quantity and kind: "q\tcal"
  double lo = 0, hi = 0;
  for (const auto& p : points) {
    if (!(p.reference > 0 && p.predicted > 0)) continue;  // log axes
    blocks[p.quantity + (p.used_for_calibration ? "\t1" : "\t0")] += fmt::format("{} {}\n", p.reference, p.predicted);
    const double a = std::min(p.reference, p.predicted), b = std::max(p.reference, p.predicted);
    lo = lo > 0 ? std::min(lo, a) : a, hi = std::max(hi, b);
  }
  // a colour per quantity from twelve distinct ones (gnuplot's own cycle repeats after eight), the
  // marker says calibration or held out; the key lists each once (not quantity x kind)
  static const char* palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                  "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#ad494a"};
  std::string data, plot, key;
  std::map<std::string, const char*> colour;
  std::map<bool, bool> kinds;
  int k = 0;
  for (const auto& [name, rows] : blocks) {
    const auto tab = name.find('\t');
    const std::string q = name.substr(0, tab);
    const bool cal = name.substr(tab + 1) == "1";
    if (!colour.count(q)) {
      colour[q] = palette[colour.size() % std::size(palette)];
      if (!q.empty()) key += fmt::format("NaN with points pt 5 lc rgb '{}' title '{}', ", colour[q], q);
    }
    kinds[cal] = true;
    data += fmt::format("$b{} << EOD\n{}EOD\n", k, rows);
    plot += fmt::format("$b{} using 1:2 with points pt {} ps 1.3 lc rgb '{}' notitle, ", k, cal ? 6 : 7, colour[q]);
    ++k;
  }
  for (const auto& [cal, _] : kinds)
    key += fmt::format("NaN with points pt {} ps 1.3 lc 'black' title '{}', ", cal ? 6 : 7, cal ? l.calibration : l.held_out);
  plot += key;
  if (blocks.empty()) lo = 1, hi = 10;
  // the same range on both axes, so that the distance from y = x reads alike everywhere
  const std::string script = fmt::format(
      "set terminal pngcairo size 760,760 font 'Sans,11' noenhanced\nset output '{}'\n{}set logscale xy\nset size square\n"
      "set xrange [{}:{}]\nset yrange [{}:{}]\nset grid\nset key outside below horizontal maxcols 4\nset title '{}'\nset xlabel '{}'\nset ylabel '{}'\n"
      "plot {}x with lines dt 2 lc 'gray' title 'y = x'\n",
      png, data, lo / 1.5, hi * 1.5, lo / 1.5, hi * 1.5, l.title, l.x, l.y, plot);
  if (run_gnuplot(script, png)) fmt::print("wrote {}\n", png);
}

}  // namespace mrplan
