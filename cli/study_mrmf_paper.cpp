// `mrplan study mrmf-paper`: what the MRMF paper states beside what mrplan predicts, the fusion
// efficiency calibrated on one application and the other held out.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "calibrate/mrmf_paper.hpp"
#include "calibrate/calibrated_builtins.hpp"
#include "cli/gnuplot.hpp"
#include "cli/output_file.hpp"
#include "cli/studies.hpp"
#include "cli/text_table.hpp"
#include "model/method_table.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {

std::string variant_of(const Record& r, int fusions) {
  const auto& row = method_row(r.method);
  return row.splits_gpus ? fmt::format("{}-{}", row.display, fusions) : row.display;
}

constexpr const char* kBreakdownHeader = "calibrated_on,app,gpus,plan,stage,io_s,comm_s,compute_s,eval_s,fusion_s,time_s\n";

// Every stage of every predicted run (Fig. 3/4's breakdown): its time and where it went.
std::string breakdown_rows(const MrmfStudyPart& part) {
  std::string s;
  for (const auto& runs : part.runs)
    for (const auto& run : runs)
      for (const Record* r : {&run.baseline, &run.mrt, &run.mrmf}) {
        if (run.fusions > 1 && r != &run.mrmf) continue;  // baseline and MRT once per GPU count
        for (const auto& st : r->stages)
          s += fmt::format("{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g}\n", part.calibrated_on, run.app, run.gpus,
                           variant_of(*r, run.fusions), st.name, st.io_s, st.comm_s, st.compute_s, st.eval_s, st.fusion_s, st.time_s);
      }
  return s;
}

// Stacked bars of stage times per GPU count and plan, one panel per application.
void breakdown_plot(const MrmfStudyPart& part, const std::string& png) {
  std::string s = fmt::format("set terminal pngcairo size 1400,550 font 'Sans,10' noenhanced\nset output '{}'\n", png);
  s += fmt::format("set multiplot layout 1,{} title 'predicted training time per stage (fusion efficiency calibrated on {})'\n",
                   part.runs.size(), part.calibrated_on);
  s += "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 border -1\nset boxwidth 0.75\n"
       "set ylabel 'seconds'\nset grid y\nset key top right\nset xtics font ',8'\n";
  for (size_t a = 0; a < part.runs.size(); ++a) {
    s += fmt::format("$b{} << EOD\n", a);
    for (const auto& run : part.runs[a])
      for (const Record* r : {&run.baseline, &run.mrt, &run.mrmf}) {
        if (run.fusions > 1 && r != &run.mrmf) continue;
        double t[3] = {0, 0, 0};  // pre-training stages, then the last one
        for (size_t i = 0; i < r->stages.size(); ++i) t[i + 1 == r->stages.size() ? 2 : std::min<size_t>(i, 1)] += r->stages[i].time_s;
        s += fmt::format("\"{}\\n{}\" {} {} {}\n", run.gpus, variant_of(*r, run.fusions), t[0], t[1], t[2]);
      }
    s += "EOD\n";
    s += fmt::format("set title '{}'\nplot $b{} using 2:xtic(1) title 'first pre-training stage' lc rgb '#7570b3', "
                     "'' using 3 title 'second' lc rgb '#e7298a', '' using 4 title 'last (dense / fine-tuning)' lc rgb '#1b9e77'\n",
                     part.runs[a].front().app, a);
  }
  s += "unset multiplot\n";
  if (run_gnuplot(s, png)) fmt::print("wrote {}\n", png);
}

}  // namespace

void run_mrmf_paper_study(const std::string& csv, const std::string& plots) {
  const auto claims = mrmf_paper_claims();
  // the paper's statements on the profile the paper fits made (before the machine's MLPerf logs)
  MachineProfile machine = calibrated_builtin_profile(before_mlperf(claims.front().machine));
  machine.name = claims.front().machine;
  const auto parts = mrmf_paper_study(machine);
  fmt::print("MRMF paper: what it states (abstract, Fig. 3/4 captions) beside mrplan's prediction on {}.\n"
             "The paper's numbers are only the stated savings; every time, saving and efficiency below is mrplan's.\n",
             machine.name);
  std::string all_csv = kBreakdownHeader;
  for (const auto& part : parts) {
    fmt::print("\nfusion efficiency calibrated on {}: {:.3g}{}\n", part.calibrated_on, part.fit.eta,
               part.fit.reachable ? "" : " (the stated saving is out of reach: the nearest bound)");
    TextTable t({"app", "gpus", "fusions", "baseline_s", "MRT_s", "MRMF_s", "MRMF saving", "role"});
    for (size_t a = 0; a < part.runs.size(); ++a)
      for (const auto& r : part.runs[a])
        t.add({r.app, std::to_string(r.gpus), std::to_string(r.fusions), fmt::format("{:.1f}", r.baseline.totals.time_to_target_s),
               fmt::format("{:.1f}", r.mrt.totals.time_to_target_s), fmt::format("{:.1f}", r.mrmf.totals.time_to_target_s),
               fmt::format("{:.1f}%", 100 * r.saving()), claims[a].app == part.calibrated_on ? "calibration" : "held out"});
    fmt::print("{}", t.str());
    TextTable c({"app", "paper: up to", "mrplan: best run", "difference", "role"});
    for (size_t a = 0; a < part.runs.size(); ++a) {
      const double best = best_saving(part.runs[a]);
      c.add({claims[a].app, fmt::format("{:.0f}%", 100 * claims[a].saving), fmt::format("{:.1f}%", 100 * best),
             fmt::format("{:+.1f} points", 100 * (best - claims[a].saving)), claims[a].app == part.calibrated_on ? "calibration" : "held out"});
    }
    fmt::print("{}", c.str());
    all_csv += breakdown_rows(part);
    if (!plots.empty()) {
      std::filesystem::create_directories(plots);
      breakdown_plot(part, (std::filesystem::path(plots) / fmt::format("mrmf-breakdown-calibrated-on-{}.png", part.calibrated_on)).string());
    }
  }
  if (!csv.empty()) write_output(csv, all_csv, "CSV file");
}

}  // namespace mrplan
