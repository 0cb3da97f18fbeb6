// `mrplan study preprocessing-paper`: what the preprocessing paper states beside what mrplan
// predicts, calibration claims marked, the held-out error summarised, the predicted figures drawn.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "calibrate/preprocessing_paper.hpp"
#include "cli/gnuplot.hpp"
#include "cli/output_file.hpp"
#include "cli/scatter_plot.hpp"
#include "cli/studies.hpp"
#include "cli/text_table.hpp"
#include "model/error_summary.hpp"

namespace mrplan {

namespace {

std::string coding_text(const Coding& c) {
  if (c.codec == Codec::raw) return "baseline";
  if (c.codec == Codec::deflate) return "gzip";
  return fmt::format("{} plugin", c.decoder == DecoderPlace::device ? "GPU" : "CPU");
}

std::string run_text(const NodeRun& r) {
  return fmt::format("{} {} b{} {} {}", r.machine, r.dataset == PaperDataset::small ? "small" : "large", r.local_batch,
                     r.staging == Staging::none ? "unstaged" : "staged", coding_text(r.coding));
}

// The claim's numerator at its grid point, and what its denominator changes.
std::string claim_point_text(const PaperClaim& c, const NodeRun& at) {
  if (c.quantity == ClaimQuantity::decode_share) return run_text(at);
  const auto& d = c.denominator;
  const NodeRun num = apply_side(at, c.numerator), den = apply_side(at, d);
  std::string vs;
  if (d.coding || c.numerator.coding) vs += " " + coding_text(den.coding);
  if (d.machine) vs += " " + den.machine;
  if (d.dataset) vs += den.dataset == PaperDataset::small ? " small" : " large";
  if (d.staging) vs += den.staging == Staging::none ? " unstaged" : " staged";
  if (d.local_batch) vs += fmt::format(" b{}", den.local_batch);
  return run_text(num) + " vs" + vs;
}

std::string value_text(const PaperClaim& c, double v) {
  return c.quantity == ClaimQuantity::decode_share ? fmt::format("{:.1f}%", 100 * v) : fmt::format("{:.2f}x", v);
}

std::string stated_text(const PaperClaim& c) {
  const char* bound = c.bound == ClaimBound::up_to ? "up to" : c.bound == ClaimBound::at_least ? "at least" : "about";
  return fmt::format("{} {}", bound, value_text(c, c.stated));
}

std::string rows_csv(const PreprocessingStudy& s) {
  std::string out = "id,app,statement,source,bound,stated,predicted,rel_error,at,used_for_calibration\n";
  for (const auto& r : s.rows)
    out += fmt::format("{},{},\"{}\",\"{}\",{},{:.6g},{:.6g},{:.6g},{},{}\n", r.claim.id, r.claim.app, r.claim.statement, r.claim.source,
                       r.claim.bound == ClaimBound::up_to ? "up_to" : r.claim.bound == ClaimBound::at_least ? "at_least" : "about",
                       r.claim.stated, r.predicted.value, r.rel_error, claim_point_text(r.claim, r.predicted.at), r.claim.fits ? "true" : "false");
  return out;
}

// Fig. 8 and 10 as mrplan predicts them: node throughput against the batch size, a line per
// coding, a panel per machine (unstaged, small set).
void throughput_plot(const std::string& app, const std::vector<Coding>& codings, const PreprocessingStudy& s, const std::string& png) {
  std::string g = fmt::format("set terminal pngcairo size 1400,450 font 'Sans,10' noenhanced\nset output '{}'\n", png);
  const auto& machines = s.profiles.at(app);
  g += fmt::format("set multiplot layout 1,{} title '{}, small set, unstaged: predicted node throughput'\n", machines.size(), app);
  g += "set logscale x 2\nset xlabel 'local batch'\nset ylabel 'samples/s per node'\nset grid\nset key top left\n";
  for (const auto& m : machines) {
    std::string plot;
    for (size_t k = 0; k < codings.size(); ++k) {
      g += fmt::format("$d{} << EOD\n", k);
      for (int b : {1, 2, 4, 8})
        g += fmt::format("{} {}\n", b, node_samples_per_s({app, m.name, PaperDataset::small, b, Staging::none, codings[k]}, m));
      g += "EOD\n";
      plot += fmt::format("{}$d{} using 1:2 with linespoints lw 2 title '{}'", k ? ", " : "", k, coding_text(codings[k]));
    }
    g += fmt::format("set title '{}'\nplot {}\n", m.name, plot);
  }
  g += "unset multiplot\n";
  if (run_gnuplot(g, png)) fmt::print("wrote {}\n", png);
}

void print_inputs_and_fits(const PreprocessingStudy& s) {
  TextTable in({"key", "machines", "value", "source"});
  for (const auto& i : preprocessing_paper_inputs())
    in.add({i.key, fmt::format("{}", fmt::join(i.machines, " ")), fmt::format("{:.3g}", i.value), i.source});
  fmt::print("stated by the paper, put in as given:\n{}", in.str());
  TextTable f({"fitted on", "key", "for", "machines", "value", ""});
  for (const auto& v : s.fits)
    f.add({v.claim, v.fit.key + (v.fit.per_memory_bandwidth ? " (x GPU memory bandwidth)" : ""),
           fit_is_per_application(v.fit) ? v.app : "both apps", fmt::format("{}", fmt::join(v.fit.machines, " ")),
           fmt::format("{:.4g}", v.value), v.reachable ? "" : "out of reach: the nearest bound"});
  fmt::print("\nfitted, one calibration claim each (the rest stays held out):\n{}", f.str());
}

}  // namespace

void run_preprocessing_paper_study(const std::string& csv, const std::string& plots) {
  const auto s = preprocessing_paper_study();
  fmt::print("Preprocessing paper (Ibrahim & Oliker): what its text states beside mrplan's prediction. The figures' values are\n"
             "not available: each claim is a ratio of node throughputs over the runs it spans (machine, set, batch 1-8,\n"
             "staged or not), compared at the grid's largest (up to), smallest (at least) or farthest (about) point.\n\n");
  print_inputs_and_fits(s);
  TextTable t({"id", "app", "claim", "paper", "mrplan", "error", "at", "role"});
  std::vector<double> held_out;
  std::vector<ScatterPoint> pts;
  for (const auto& r : s.rows) {
    t.add({r.claim.id, r.claim.app, r.claim.statement, stated_text(r.claim), value_text(r.claim, r.predicted.value),
           fmt::format("{:+.0f}%", 100 * r.rel_error), claim_point_text(r.claim, r.predicted.at), r.claim.fits ? "calibration" : "held out"});
    if (!r.claim.fits) held_out.push_back(r.rel_error);
    pts.push_back({r.claim.stated, r.predicted.value, r.claim.fits.has_value(), r.claim.quantity == ClaimQuantity::speedup ? "speedup" : "decoder share"});
  }
  fmt::print("\n{}", t.str());
  const auto e = summarize_abs_errors(held_out);
  fmt::print("\nheld-out claims: {}, median |error| {:.0f}%, p90 {:.0f}%\n", e.count, 100 * e.median_abs, 100 * e.p90_abs);
  if (!csv.empty()) write_output(csv, rows_csv(s), "CSV file");
  if (plots.empty()) return;
  std::filesystem::create_directories(plots);
  const auto dir = std::filesystem::path(plots);
  scatter_plot(pts, {"preprocessing paper: stated vs predicted", "paper", "mrplan", "held out", "calibration"},
               (dir / "stated-vs-predicted.png").string());
  throughput_plot("cosmoflow", {{Codec::raw, DecoderPlace::host}, {Codec::deflate, DecoderPlace::host}, {Codec::lut, DecoderPlace::device}}, s,
                  (dir / "cosmoflow-throughput.png").string());
  throughput_plot("deepcam", {{Codec::raw, DecoderPlace::host}, {Codec::diff, DecoderPlace::host}, {Codec::diff, DecoderPlace::device}}, s,
                  (dir / "deepcam-throughput.png").string());
}

}  // namespace mrplan
