#include "cli/roofline_plot.hpp"

#include <fmt/format.h>

#include <map>

#include "cli/gnuplot.hpp"
#include "model/compute_cost.hpp"

namespace mrplan {

// Measured points per family, forward filled and backward hollow, and the fitted model's own
// rate for each timed op (model/compute_cost: kernel_time_s) as crosses of the same colour.
void roofline_plot(const std::vector<OpTimingSample>& samples, const ComputeParams& c, const std::string& png) {
  struct Blocks {
    std::string fwd, bwd, model;
  };
  std::map<std::string, Blocks> blocks;
  for (const auto& s : samples) {
    const auto& l = s.layer;
    const double bytes = l.bytes_read + l.bytes_written;
    if (l.fwd_flops <= 0 || bytes <= 0 || s.fwd_s <= 0) continue;
    const auto fam = layer_family(l);
    auto& b = blocks[fam];
    b.fwd += fmt::format("{} {}\n", l.fwd_flops / bytes, l.fwd_flops / s.fwd_s / 1e9);
    if (l.bwd_flops > 0 && s.bwd_s > 0) b.bwd += fmt::format("{} {}\n", l.bwd_flops / bytes, l.bwd_flops / s.bwd_s / 1e9);
    b.model += fmt::format("{} {}\n", l.fwd_flops / bytes, l.fwd_flops / kernel_time_s(c, fam, l.fwd_flops, bytes, false) / 1e9);
  }
  std::string data, plots;
  int i = 0;
  for (const auto& [fam, b] : blocks) {
    const int lc = i + 1;
    data += fmt::format("$f{0} << EOD\n{1}EOD\n$b{0} << EOD\n{2}EOD\n$m{0} << EOD\n{3}EOD\n", i, b.fwd, b.bwd, b.model);
    plots += fmt::format("$f{0} using 1:2 with points pt 7 ps 0.7 lc {1} title '{2} forward', ", i, lc, fam);
    if (!b.bwd.empty()) plots += fmt::format("$b{0} using 1:2 with points pt 6 ps 0.7 lc {1} title '{2} backward', ", i, lc, fam);
    plots += fmt::format("$m{0} using 1:2 with points pt 2 ps 0.6 lc {1} title '{2} fitted model (forward)', ", i, lc, fam);
    ++i;
  }
  const std::string script = fmt::format(
      "set terminal pngcairo size 900,700 font 'Sans,11' noenhanced\nset output '{}'\n{}set logscale xy\nset grid\n"
      "set key outside below\nset title 'roofline: ops timed alone, and the fitted model'\nset xlabel 'arithmetic intensity (FLOP/byte)'\n"
      "set ylabel 'achieved GFLOP/s'\nset xrange [0.01:10000]\npeak = {}\nbw = {}\n"
      "plot {}(x * bw < peak ? x * bw : peak) with lines lw 2 lc 'black' title 'roof: largest matmul, largest copy'\n",
      png, data, c.peak_fp32_flops / 1e9, c.mem_bandwidth_Bps / 1e9, plots);
  if (run_gnuplot(script, png)) fmt::print("wrote {}\n", png);
}

}  // namespace mrplan
