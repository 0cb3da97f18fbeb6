#include "cli/sweep_plot.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

namespace mrplan {

std::string sweep_plot_script(const std::vector<SweepPoint>& pts, const std::string& title, const std::string& png) {
  std::set<int> gpus;
  for (const auto& p : pts) gpus.insert(p.gpus);
  std::string s = fmt::format(
      "set terminal pngcairo size 1500,600 font 'Sans,11' noenhanced\nset output '{}'\nset bmargin 4\nset datafile separator whitespace\n", png);
  // one data block per GPU count: switch epoch vs time; then the rule's choice and the baseline
  int k = 0;
  std::map<int, double> base;
  std::map<int, const SweepPoint*> rule;
  for (const auto& p : pts) {
    if (p.method == "baseline") base[p.gpus] = p.time_to_target_s;
    if (p.method == "mrt-rule") rule[p.gpus] = &p;
  }
  for (int g : gpus) {
    s += fmt::format("$mrt{} << EOD\n", k);
    for (const auto& p : pts)
      if (p.gpus == g && p.method == "mrt" && p.switch_epoch) s += fmt::format("{} {}\n", *p.switch_epoch, p.time_to_target_s);
    s += "EOD\n";
    s += fmt::format("$rule{} << EOD\n", k);
    if (rule.count(g) && rule[g]->switch_epoch) s += fmt::format("{} {}\n", *rule[g]->switch_epoch, rule[g]->time_to_target_s);
    s += "EOD\n";
    ++k;
  }
  s += "$bars << EOD\n";
  for (int g : gpus) {
    for (const auto& p : pts)
      if (p.gpus == g && (p.method == "baseline" || p.method == "mrt-rule"))
        s += fmt::format("\"{}\\n{}\" {} {} {}\n", g, p.method == "baseline" ? "base" : "MRT", p.io_s, p.comm_s, p.compute_s);
  }
  s += "EOD\n";
  s += fmt::format("set multiplot layout 1,2 title '{}'\n", title);
  s += "set xlabel 'coarse epochs before the switch'\nset ylabel 'time to target (s)'\nset key top left\nset grid\n";
  std::string plot = "plot ";
  k = 0;
  for (int g : gpus) {
    const int color = k + 1;
    plot += fmt::format("$mrt{} using 1:2 with lines lw 2 lc {} title '{} GPUs', ", k, color, g);
    plot += fmt::format("$rule{} using 1:2 with points pt 7 ps 1.8 lc {} notitle, ", k, color);
    if (base.count(g)) plot += fmt::format("{} with lines dt 2 lc {} notitle, ", base[g], color);
    ++k;
  }
  plot.resize(plot.size() - 2);
  s += "set label 1 'dots: switch rule; dashed: dense baseline' at graph 0.02, graph 0.04\n";
  s += plot + "\n";
  s += "unset label 1\nset style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n"
       "set boxwidth 0.75\nset xlabel ''\nset ylabel 'seconds'\nset key top right\nset xtics font ',9'\nunset grid\nset grid y\n";
  s += "plot $bars using 2:xtic(1) title 'exposed I/O' lc rgb '#d95f02', '' using 3 title 'exposed comm' lc rgb '#7570b3', "
       "'' using 4 title 'compute' lc rgb '#1b9e77'\n";
  s += "unset multiplot\n";
  return s;
}

}  // namespace mrplan
