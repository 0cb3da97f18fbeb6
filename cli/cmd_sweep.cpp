#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "cli/commands.hpp"
#include "cli/gnuplot.hpp"
#include "cli/inputs.hpp"
#include "cli/sweep_plot.hpp"
#include "cli/text_table.hpp"
#include "model/errors.hpp"
#include "sim/sweep.hpp"

namespace mrplan {

namespace {

void print_summary(const std::vector<SweepPoint>& pts) {
  std::map<int, const SweepPoint*> base, rule, best;
  for (const auto& p : pts) {
    if (p.method == "baseline") base[p.gpus] = &p;
    if (p.method == "mrt-rule") rule[p.gpus] = &p;
    if (p.method == "mrt" && p.reached_target && (!best[p.gpus] || p.time_to_target_s < best[p.gpus]->time_to_target_s))
      best[p.gpus] = &p;
  }
  TextTable t({"gpus", "baseline_s", "mrt@rule_s", "rule switch", "speedup", "best switch", "best_s", "GPU-h (rule)", "fits"});
  for (const auto& [g, b] : base) {
    const auto* r = rule.count(g) ? rule[g] : nullptr;
    const auto* x = best.count(g) ? best[g] : nullptr;
    t.add({std::to_string(g), fmt::format("{:.1f}", b->time_to_target_s), r ? fmt::format("{:.1f}", r->time_to_target_s) : "-",
           r && r->switch_epoch ? fmt::format("{:.4g}", *r->switch_epoch) : "-",
           r ? fmt::format("{:.2f}x", b->time_to_target_s / r->time_to_target_s) : "-",
           x ? fmt::format("{:.4g}", *x->switch_epoch) : "-", x ? fmt::format("{:.1f}", x->time_to_target_s) : "-",
           r ? fmt::format("{:.2f}", r->gpu_hours) : fmt::format("{:.2f}", b->gpu_hours),
           (b->fits_memory && (!r || r->fits_memory)) ? "yes" : "NO"});
  }
  fmt::print("{}", t.str());
}

}  // namespace

void register_sweep(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "What-if sweep over switch points and GPU counts (default: cosmoflow-mrt@summit)");
  struct Opts {
    std::string plan = "cosmoflow-mrt@summit", switches = "5:100:5", gpus = "16,32,64,128", csv, plot, keep = "global",
                machine;
    unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("plan", o->plan, "plan YAML file or built-in APP@MACHINE")->capture_default_str();
  cmd->add_option("--switch", o->switches, "coarse epochs before the switch: FROM:TO:STEP or A,B,C")->capture_default_str();
  cmd->add_option("--gpus", o->gpus, "GPU counts, comma separated")->capture_default_str();
  cmd->add_option("--keep", o->keep, "keep the 'global' or the 'local' batch when the GPU count changes")
      ->check(CLI::IsMember({"global", "local"}))
      ->capture_default_str();
  cmd->add_option("--machine", o->machine, "override the plan's machine");
  cmd->add_option("--csv", o->csv, "write every sweep point here");
  cmd->add_option("--plot", o->plot, "write a PNG plot here (gnuplot)");
  cmd->add_option("--threads", o->threads, "worker threads (default: all cores)");
  cmd->callback([o] {
    const Plan plan = load_plan(o->plan);
    const auto machine = machine_for(plan, o->machine);
    SweepSpec spec;
    if (plan.method != Method::baseline) spec.switch_epochs = parse_range(o->switches, "--switch");
    for (double g : parse_range(o->gpus, "--gpus")) {
      if (g != static_cast<int>(g)) fail_input("command line", "--gpus", fmt::format("{} is not a whole number", g));
      spec.gpus.push_back(static_cast<int>(g));
    }
    spec.keep_global_batch = o->keep == "global";
    fmt::print("sweep {} on {}: {} switch points x {} GPU counts, {} threads\n", plan.name, machine.name,
               spec.switch_epochs.size(), spec.gpus.size(), o->threads);
    const auto t0 = std::chrono::steady_clock::now();
    const auto pts = run_sweep(plan, machine, spec, o->threads, [](size_t d, size_t n) {
      fmt::print(stderr, "\rsweep: {}/{} points", d, n);
      if (d == n) fmt::print(stderr, "\n");
    });
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    print_summary(pts);
    fmt::print("{} points in {:.3f} s\n", pts.size(), secs);
    if (!o->csv.empty()) {
      if (auto dir = std::filesystem::path(o->csv).parent_path(); !dir.empty()) std::filesystem::create_directories(dir);
      std::ofstream f(o->csv);
      if (!f) fail_input(o->csv, "", "cannot write the CSV file");
      f << sweep_csv(pts);
      fmt::print("wrote {}\n", o->csv);
    }
    if (!o->plot.empty()) {
      if (auto dir = std::filesystem::path(o->plot).parent_path(); !dir.empty()) std::filesystem::create_directories(dir);
      if (run_gnuplot(sweep_plot_script(pts, plan.name + " on " + machine.name, o->plot), o->plot))
        fmt::print("wrote {}\n", o->plot);
    }
  });
}

}  // namespace mrplan
