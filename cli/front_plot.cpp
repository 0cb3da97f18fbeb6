#include "cli/front_plot.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace mrplan {

std::string front_plot_script(const std::vector<Candidate>& front, const std::vector<std::string>& names, const Candidate* chosen,
                              const Constraints& limits, const std::string& title, const std::string& png) {
  std::string s = fmt::format("set terminal pngcairo size 1000,700 font 'Sans,11' noenhanced\nset output '{}'\n", png);
  s += fmt::format("set title '{}'\nset xlabel 'time to target (h)'\nset ylabel 'GPU-hours'\nset grid\nset key bottom right\nset logscale xy\n", title);
  std::string plot = "plot ";
  for (size_t t = 0; t < names.size(); ++t) {
    std::string points;
    for (const auto& c : front)
      if (c.template_index == t) points += fmt::format("{} {}\n", c.time_s / 3600, c.gpu_hours);
    if (points.empty()) continue;  // none of its plans is on the front
    s += fmt::format("$t{} << EOD\n{}EOD\n", t, points);
    plot += fmt::format("$t{} using 1:2 with points pt 7 ps 1.2 lc {} title '{}', ", t, t + 1, names[t]);
  }
  if (chosen) {
    s += fmt::format("$chosen << EOD\n{} {}\nEOD\n", chosen->time_s / 3600, chosen->gpu_hours);
    plot += "$chosen using 1:2 with points pt 6 ps 3.5 lw 2 lc rgb 'black' title 'chosen', ";
  }
  double longest_h = 0;
  for (const auto& c : front) longest_h = std::max(longest_h, c.time_s / 3600);
  if (limits.deadline_s) s += fmt::format("set xrange [*:{}]\n", 1.3 * std::max(longest_h, *limits.deadline_s / 3600));
  if (limits.deadline_s) s += fmt::format("set arrow from {0},graph 0 to {0},graph 1 nohead dt 2 lc rgb 'red'\n", *limits.deadline_s / 3600);
  if (limits.budget_gpu_hours)
    s += fmt::format("set arrow from graph 0,first {0} to graph 1,first {0} nohead dt 2 lc rgb 'red'\n", *limits.budget_gpu_hours);
  s += "set label 1 'front: no other plan is both faster and cheaper; dashed: deadline, budget' at graph 0.02, graph 0.04\n";
  plot.resize(plot.size() - 2);
  return s + plot + "\n";
}

}  // namespace mrplan
