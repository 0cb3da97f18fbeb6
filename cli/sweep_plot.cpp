#include "cli/sweep_plot.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

namespace mrplan {

namespace {

bool rule_point(const SweepPoint& p) { return p.method.ends_with("-rule"); }
bool forced_point(const SweepPoint& p) { return p.method != "baseline" && !rule_point(p); }

// One line per GPU count and, for MRMF sweeps over the split, per split.
using LineKey = std::pair<int, double>;
LineKey key_of(const SweepPoint& p) { return {p.gpus, p.split.value_or(0.0)}; }
std::string label_of(const LineKey& k) {
  return k.second > 0 ? fmt::format("{} GPUs, {:.2g} low", k.first, k.second) : fmt::format("{} GPUs", k.first);
}

}  // namespace

std::string sweep_plot_script(const std::vector<SweepPoint>& pts, const std::string& title, const std::string& png) {
  std::set<LineKey> lines;
  for (const auto& p : pts)
    if (p.method != "baseline") lines.insert(key_of(p));
  std::string s = fmt::format(
      "set terminal pngcairo size 1800,640 font 'Sans,11' noenhanced\nset output '{}'\nset bmargin 7\nset datafile separator whitespace\n", png);
  // one data block per line: switch epoch vs time; then the rule's choice and the baseline
  std::map<int, double> base;
  std::map<LineKey, const SweepPoint*> rule;
  std::string method = "MRT";
  for (const auto& p : pts) {
    if (p.method == "baseline") base[p.gpus] = p.time_to_target_s;
    if (rule_point(p)) rule[key_of(p)] = &p, method = p.method.starts_with("mrmf") ? "MRMF" : "MRT";
  }
  int k = 0;
  for (const auto& line : lines) {
    s += fmt::format("$run{} << EOD\n", k);
    for (const auto& p : pts)
      if (key_of(p) == line && forced_point(p) && p.switch_epoch) s += fmt::format("{} {}\n", *p.switch_epoch, p.time_to_target_s);
    s += "EOD\n";
    s += fmt::format("$rule{} << EOD\n", k);
    if (rule.count(line) && rule[line]->switch_epoch) s += fmt::format("{} {}\n", *rule[line]->switch_epoch, rule[line]->time_to_target_s);
    s += "EOD\n";
    ++k;
  }
  s += "$bars << EOD\n";
  std::set<int> gpus;
  for (const auto& p : pts) gpus.insert(p.gpus);
  auto bar = [&](const SweepPoint& p, const std::string& what) {
    s += fmt::format("\"{}\\n{}\" {} {} {}\n", p.gpus, what, p.io_s, p.comm_s, p.compute_s);
  };
  for (int g : gpus) {  // the baseline, then the rule's point of the GPU count's first line
    for (const auto& p : pts)
      if (p.gpus == g && p.method == "baseline") {
        bar(p, "base");
        break;  // a sweep over splits repeats it
      }
    if (auto it = lines.lower_bound({g, -1.0}); it != lines.end() && it->first == g && rule.count(*it)) bar(*rule[*it], method);
  }
  s += "EOD\n";
  s += "$gpuh << EOD\n";  // GPU count, baseline and the rule's GPU-hours (the first line of each count)
  for (int g : gpus) {
    double b = 0, r = 0;
    for (const auto& p : pts)
      if (p.gpus == g && p.method == "baseline") b = p.gpu_hours;
    if (auto it = lines.lower_bound({g, -1.0}); it != lines.end() && it->first == g && rule.count(*it)) r = rule[*it]->gpu_hours;
    s += fmt::format("{} {} {}\n", g, b, r);
  }
  s += "EOD\n";
  s += fmt::format("set multiplot layout 1,3 title '{}'\n", title);
  // a log time axis: GPU counts a decade apart share the panel; the key below, clear of the curves
  std::string tics;  // 1-2-5 in every decade: a log axis labels only the decades
  for (double d = 1; d <= 1e7; d *= 10)
    for (double m : {1.0, 2.0, 5.0}) tics += fmt::format("{}{:g}", tics.empty() ? "" : ", ", m * d);
  s += fmt::format("set ytics ({})\n", tics);
  s += fmt::format("set xlabel '{}'\nset ylabel 'time to target (s)'\nset logscale y\nset autoscale yfix\nset offsets 0, 0, graph 0.05, graph 0.05\nset key below\nset grid\n"
                   "set title 'dots: the switch rule; dashed: the dense baseline' font ',10'\n",
                   method == "MRMF" ? "epochs of the lower-resolution model of each fusion stage" : "coarse epochs before the switch");
  std::string plot = "plot ";
  k = 0;
  for (const auto& line : lines) {
    const int color = k + 1;
    plot += fmt::format("$run{} using 1:2 with lines lw 2 lc {} title '{}', ", k, color, label_of(line));
    plot += fmt::format("$rule{} using 1:2 with points pt 7 ps 1.8 lc {} notitle, ", k, color);
    if (base.count(line.first)) plot += fmt::format("{} with lines dt 2 lc {} notitle, ", base[line.first], color);
    ++k;
  }
  plot.resize(plot.size() - 2);
  s += plot + "\n";
  s += "unset logscale y\nunset title\nset autoscale y\nset ytics autofreq\nset offsets 0, 0, graph 0.12, 0\nset style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n"
       "set boxwidth 0.75\nset xlabel ''\nset ylabel 'seconds'\nset key inside top right\nset xtics font ',9'\nunset grid\nset grid y\n";
  s += "plot $bars using 2:xtic(1) title 'exposed I/O' lc rgb '#d95f02', '' using 3 title 'exposed comm' lc rgb '#7570b3', "
       "'' using 4 title 'compute' lc rgb '#1b9e77'\n";
  s += fmt::format("set style data linespoints\nset xlabel 'GPUs'\nset ylabel 'GPU-hours to target'\nset logscale x 2\nset key below\n"
                   "set xtics font ',11'\nset grid\nplot $gpuh using 1:2 title 'baseline' lw 2 pt 7 lc rgb '#555555', "
                   "'' using 1:3 title '{} (switch rule)' lw 2 pt 7 lc rgb '#1b9e77'\n",
                   method);
  s += "unset multiplot\n";
  return s;
}

}  // namespace mrplan
