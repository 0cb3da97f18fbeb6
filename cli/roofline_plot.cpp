#include "cli/roofline_plot.hpp"

#include <fmt/format.h>

#include <map>

#include "cli/gnuplot.hpp"
#include "model/compute_cost.hpp"

namespace mrplan {

void roofline_plot(const std::vector<OpTimingSample>& samples, const ComputeParams& c, const std::string& png) {
  std::map<std::string, std::string> blocks;
  for (const auto& s : samples) {
    const auto& l = s.layer;
    const double bytes = l.bytes_read + l.bytes_written;
    if (l.fwd_flops <= 0 || bytes <= 0 || s.fwd_s <= 0) continue;
    blocks[layer_family(l)] += fmt::format("{} {}\n", l.fwd_flops / bytes, l.fwd_flops / s.fwd_s / 1e9);
  }
  std::string data, plots;
  int i = 0;
  for (const auto& [fam, rows] : blocks) {
    data += fmt::format("$d{} << EOD\n{}EOD\n", i, rows);
    plots += fmt::format("$d{} using 1:2 with points pt 7 ps 0.7 title '{} (forward)', ", i, fam);
    ++i;
  }
  const std::string script = fmt::format(
      "set terminal pngcairo size 800,600 font 'Sans,11' noenhanced\nset output '{}'\n{}set logscale xy\nset grid\n"
      "set key bottom right\nset title 'roofline: ops timed alone'\nset xlabel 'arithmetic intensity (FLOP/byte)'\n"
      "set ylabel 'achieved GFLOP/s'\nset xrange [0.01:10000]\npeak = {}\nbw = {}\n"
      "plot {}(x * bw < peak ? x * bw : peak) with lines lw 2 lc 'black' title 'roof: largest matmul, largest copy'\n",
      png, data, c.peak_fp32_flops / 1e9, c.mem_bandwidth_Bps / 1e9, plots);
  if (run_gnuplot(script, png)) fmt::print("wrote {}\n", png);
}

}  // namespace mrplan
