#include "cli/sweep_plot.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

namespace mrplan {

namespace {

// One line per GPU count and, for MRMF sweeps over the split, per split.
using LineKey = std::pair<int, double>;
LineKey key_of(const SweepPoint& p) { return {p.gpus, p.split.value_or(0.0)}; }
std::string label_of(const LineKey& k) {
  return k.second > 0 ? fmt::format("{} GPUs, {:.2g} low", k.first, k.second) : fmt::format("{} GPUs", k.first);
}

// The sweep's points by what they are: the compared plan per GPU count, the method's lines and its
// rule's point on each.
struct SweepLines {
  std::set<int> gpus;
  std::map<int, const SweepPoint*> base;  // a sweep over splits repeats it: the first
  std::set<LineKey> lines;
  std::map<LineKey, const SweepPoint*> rule;
  const MethodRow* row = nullptr;  // the method's; none where the plan is its own baseline
  // The rule's point on the first line of GPU count g (the bars and GPU-hours show one per count).
  const SweepPoint* first_rule(int g) const {
    const auto it = lines.lower_bound({g, -1.0});
    return it != lines.end() && it->first == g && rule.count(*it) ? rule.at(*it) : nullptr;
  }
};

SweepLines lines_of(const std::vector<SweepPoint>& pts) {
  SweepLines l;
  for (const auto& p : pts) {
    l.gpus.insert(p.gpus);
    if (p.role == SweepRole::compared) l.base.emplace(p.gpus, &p);
    else l.lines.insert(key_of(p));
    if (p.role == SweepRole::rule) l.rule[key_of(p)] = &p, l.row = &method_row(p.method);
  }
  return l;
}

// 1-2-5 in every decade: a log axis labels only the decades, and GPU counts a decade apart share the panel.
std::string log_time_axis() {
  std::string tics;
  for (double d = 1; d <= 1e7; d *= 10)
    for (double m : {1.0, 2.0, 5.0}) tics += fmt::format("{}{:g}", tics.empty() ? "" : ", ", m * d);
  return fmt::format(
      "set ytics ({})\nset ylabel 'time to target (s)'\nset logscale y\nset autoscale yfix\n"
      "set offsets 0, 0, graph 0.05, graph 0.05\nset key below\nset grid\n",
      tics);
}

// A method with a switch: time to target against the switch point, a line per GPU count (and split),
// the rule's choice a dot, the baseline dashed.
std::string switch_panel(const std::vector<SweepPoint>& pts, const SweepLines& l) {
  std::string s, plot = "plot ";
  int k = 0;
  for (const auto& line : l.lines) {
    s += fmt::format("$run{} << EOD\n", k);
    for (const auto& p : pts)
      if (key_of(p) == line && p.role == SweepRole::forced && p.switch_epoch)
        s += fmt::format("{} {}\n", *p.switch_epoch, p.time_to_target_s);
    s += fmt::format("EOD\n$rule{} << EOD\n", k);
    if (const auto it = l.rule.find(line); it != l.rule.end() && it->second->switch_epoch)
      s += fmt::format("{} {}\n", *it->second->switch_epoch, it->second->time_to_target_s);
    s += "EOD\n";
    plot += fmt::format("$run{0} using 1:2 with lines lw 2 lc {1} title '{2}', $rule{0} using 1:2 with points pt 7 ps 1.8 lc {1} notitle, ",
                        k, k + 1, label_of(line));
    if (l.base.count(line.first)) plot += fmt::format("{} with lines dt 2 lc {} notitle, ", l.base.at(line.first)->time_to_target_s, k + 1);
    ++k;
  }
  plot.resize(plot.size() - 2);
  return s + log_time_axis() +
         fmt::format("set xlabel '{}'\nset title 'dots: the switch rule; dashed: the dense baseline' font ',10'\n{}\n",
                     l.row->splits_gpus ? "epochs of the lower-resolution model of each fusion stage" : "coarse epochs before the switch",
                     plot);
}

// A method without a switch, or a baseline alone: time to target against the GPU count.
std::string gpus_panel(const SweepLines& l) {
  std::string s = "$time << EOD\n";
  for (int g : l.gpus) {
    const auto* r = l.first_rule(g);
    s += fmt::format("{} {} {}\n", g, l.base.count(g) ? l.base.at(g)->time_to_target_s : NAN, r ? r->time_to_target_s : NAN);
  }
  s += "EOD\n" + log_time_axis() + "set xlabel 'GPUs'\nset logscale x 2\nset title 'time to target' font ',10'\n";
  s += "plot $time using 1:2 with linespoints lw 2 pt 7 dt 2 lc rgb '#555555' title 'baseline'";
  if (l.row) s += fmt::format(", '' using 1:3 with linespoints lw 2 pt 7 lc rgb '#1b9e77' title '{}'", l.row->display);
  return s + "\nunset logscale x\n";
}

// Exposed I/O, exposed comm and compute stacked: the baseline, then the rule's point, per GPU count.
std::string bars_panel(const SweepLines& l) {
  std::string s = "$bars << EOD\n";
  auto bar = [&](const SweepPoint& p, const std::string& what) {
    s += fmt::format("\"{}\\n{}\" {} {} {}\n", p.gpus, what, p.io_s, p.comm_s, p.compute_s);
  };
  for (int g : l.gpus) {
    if (l.base.count(g)) bar(*l.base.at(g), "base");
    if (const auto* r = l.first_rule(g)) bar(*r, l.row->display);
  }
  return s +
         "EOD\nunset logscale y\nunset title\nset autoscale y\nset ytics autofreq\nset offsets 0, 0, graph 0.12, 0\n"
         "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\nset boxwidth 0.75\n"
         "set xlabel ''\nset ylabel 'seconds'\nset key inside top right\nset xtics font ',9'\nunset grid\nset grid y\n"
         "plot $bars using 2:xtic(1) title 'exposed I/O' lc rgb '#d95f02', '' using 3 title 'exposed comm' lc rgb '#7570b3', "
         "'' using 4 title 'compute' lc rgb '#1b9e77'\n";
}

// GPU-hours to target against the GPU count: the baseline's and the rule's point's.
std::string gpu_hours_panel(const SweepLines& l) {
  std::string s = "$gpuh << EOD\n";
  for (int g : l.gpus) {
    const auto* r = l.first_rule(g);
    s += fmt::format("{} {} {}\n", g, l.base.count(g) ? l.base.at(g)->gpu_hours : NAN, r ? r->gpu_hours : NAN);
  }
  s += "EOD\nset style data linespoints\nset xlabel 'GPUs'\nset ylabel 'GPU-hours to target'\nset logscale x 2\nset key below\n"
       "set xtics font ',11'\nset grid\nplot $gpuh using 1:2 title 'baseline' lw 2 pt 7 lc rgb '#555555'";
  if (l.row)
    s += fmt::format(", '' using 1:3 title '{}{}' lw 2 pt 7 lc rgb '#1b9e77'", l.row->display, l.row->has_switch ? " (switch rule)" : "");
  return s + "\n";
}

}  // namespace

std::string sweep_plot_script(const std::vector<SweepPoint>& pts, const std::string& title, const std::string& png) {
  const auto l = lines_of(pts);
  return fmt::format(
             "set terminal pngcairo size 1800,640 font 'Sans,11' noenhanced\nset output '{}'\nset bmargin 7\n"
             "set datafile separator whitespace\nset datafile missing NaN\nset multiplot layout 1,3 title '{}'\n",
             png, title) +
         (l.row && l.row->has_switch ? switch_panel(pts, l) : gpus_panel(l)) + bars_panel(l) + gpu_hours_panel(l) + "unset multiplot\n";
}

}  // namespace mrplan
