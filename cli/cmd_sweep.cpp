#include <CLI/CLI.hpp>

#include <cmath>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <thread>

#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "cli/output_file.hpp"
#include "cli/gnuplot.hpp"
#include "cli/inputs.hpp"
#include "cli/optimize_args.hpp"
#include "cli/sweep_plot.hpp"
#include "cli/text_table.hpp"
#include "model/method_table.hpp"
#include "model/errors.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/simulate.hpp"
#include "sim/sweep.hpp"

namespace mrplan {

namespace {

// Per GPU count (and MRMF split): the baseline, the switch rule's point and the best forced point.
void print_summary(const std::vector<SweepPoint>& pts, Method plan_method) {
  using Key = std::pair<int, double>;
  std::map<int, const SweepPoint*> base;
  std::map<Key, const SweepPoint*> rule, best;
  for (const auto& p : pts) {
    const Key k{p.gpus, p.split.value_or(0.0)};
    if (p.role == SweepRole::compared) base[p.gpus] = &p;
    if (p.role == SweepRole::rule) rule[k] = &p;
    if (p.role == SweepRole::forced && p.reached_target && (!best[k] || p.time_to_target_s < best[k]->time_to_target_s)) best[k] = &p;
  }
  const std::string method = to_string(plan_method);
  const bool splits = std::any_of(pts.begin(), pts.end(), [](const SweepPoint& p) { return p.split.has_value(); });
  std::vector<std::string> head{"gpus", "baseline_s", method + "@rule_s", "P10-P90 (rule)", "rule switch", "speedup", "best switch", "best_s",
                                "GPU-h (rule)", "fits"};
  if (splits) head.insert(head.begin() + 1, "low share");
  TextTable t(head);
  for (const auto& [k, r] : rule) {
    const auto* b = base.count(k.first) ? base[k.first] : nullptr;
    const auto* x = best.count(k) ? best[k] : nullptr;
    std::vector<std::string> row{std::to_string(k.first), b ? fmt::format("{:.1f}", b->time_to_target_s) : "-",
                                 fmt::format("{:.1f}", r->time_to_target_s),
                                 r->time_spread ? fmt::format("{:.0f}-{:.0f}", r->time_spread->p10, r->time_spread->p90) : "-",
                                 r->switch_epoch ? fmt::format("{:.4g}", *r->switch_epoch) : "-",
                                 b ? fmt::format("{:.2f}x", b->time_to_target_s / r->time_to_target_s) : "-",
                                 x ? fmt::format("{:.4g}", *x->switch_epoch) : "-", x ? fmt::format("{:.1f}", x->time_to_target_s) : "-",
                                 fmt::format("{:.2f}", r->gpu_hours), (r->fits_memory && (!b || b->fits_memory)) ? "yes" : "NO"};
    if (splits) row.insert(row.begin() + 1, fmt::format("{:.2g}", k.second));
    t.add(row);
  }
  if (rule.empty())  // a baseline plan: no switch to sweep
    for (const auto& [g, b] : base)
      t.add({std::to_string(g), fmt::format("{:.1f}", b->time_to_target_s), "-",
             b->time_spread ? fmt::format("{:.0f}-{:.0f}", b->time_spread->p10, b->time_spread->p90) : "-", "-", "-", "-", "-",
             fmt::format("{:.2f}", b->gpu_hours),
             b->fits_memory ? "yes" : "NO"});
  fmt::print("{}", t.str());
}

struct SweepOpts {
  std::string plan = "cosmoflow-mrt@summit", switches = "5:100:5", gpus = "16,32,64,128", csv, plot, keep, machine, splits;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  size_t samples = 50;
  uint64_t seed = 1;
  PlanEdits edits;
};

// The axes the command line names: switch points where the plan's method has a switch, splits where
// it has fusion stages, GPU counts as optimize reads them.
SweepSpec spec_from(const SweepOpts& o, const Plan& plan) {
  SweepSpec spec;
  if (method_row(plan.method).has_switch) spec.switch_epochs = parse_range(o.switches, "--switch");
  if (!o.splits.empty()) {
    if (!has_fusion_stage(plan)) fail_input("command line", "--split", "only an mrmf plan has fusion stages to split");
    spec.low_fractions = parse_range(o.splits, "--split");
  }
  spec.gpus = parse_int_axis(o.gpus, "--gpus", true);
  return spec;
}

void sweep(const SweepOpts& o) {
  const Plan plan = with_keep(edited(load_plan(o.plan), o.edits), o.keep);
  const auto machine = edited(machine_for(plan, o.machine), o.edits);
  const SweepSpec spec = spec_from(o, plan);
  fmt::print("sweep {} on {}: {} switch points x {} GPU counts{}, {} threads\n", plan.name, machine.name, spec.switch_epochs.size(),
             spec.gpus.size(), spec.low_fractions.empty() ? "" : fmt::format(" x {} splits", spec.low_fractions.size()), o.threads);
  const auto t0 = std::chrono::steady_clock::now();
  auto pts = run_sweep(plan, machine, spec, o.threads, [](size_t d, size_t n) { print_progress("sweep", d, n, "points"); });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<std::string> notes;
  if (o.samples > 0) {
    const auto draws = draw_profiles(machine, plan_network(plan).name, o.samples, o.seed);
    add_sweep_spread(pts, plan, draws, spec, o.threads);
    notes = draws.notes;
  }
  print_summary(pts, plan.method);
  for (const auto& n : notes) fmt::print("note: {}\n", n);
  for (int g : spec.gpus)  // where the prediction is out of its depth, at each GPU count swept
    for (const auto& w : simulate(plan_at_gpus(plan, g), machine).warnings) fmt::print("warning ({} GPUs): {}\n", g, w);
  fmt::print("{} points in {:.3f} s\n", pts.size(), secs);
  if (!o.csv.empty()) write_output(o.csv, sweep_csv(pts), "CSV file");
  if (o.plot.empty()) return;
  if (auto dir = std::filesystem::path(o.plot).parent_path(); !dir.empty()) std::filesystem::create_directories(dir);
  if (run_gnuplot(sweep_plot_script(pts, plan.name + " on " + machine.name, o.plot), o.plot)) fmt::print("wrote {}\n", o.plot);
}

}  // namespace

void register_sweep(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "What-if sweep over switch points and GPU counts (default: cosmoflow-mrt@summit)");
  auto o = std::make_shared<SweepOpts>();
  cmd->add_option("plan", o->plan, "plan YAML file, built-in APP@MACHINE or a Record (.json)")->capture_default_str();
  cmd->add_option("--switch", o->switches,
                  "MRT: coarse epochs before the switch; MRMF: epochs of each fusion stage's lower-resolution model (FROM:TO:STEP or A,B,C)")
      ->capture_default_str();
  cmd->add_option("--split", o->splits, "MRMF: shares of a fusion stage's GPUs on its lower-resolution model, e.g. 0.25,0.5,0.75");
  cmd->add_option("--gpus", o->gpus, "GPU counts: A:B doubling from A, A:B:STEP or A,B,C")->capture_default_str();
  add_keep_option(cmd, o->keep, "keep the 'global' (strong scaling) or the 'local' batch (weak) when the GPU count changes");
  cmd->add_option("--machine", o->machine, "override the plan's machine");
  cmd->add_option("--csv", o->csv, "write every sweep point here");
  cmd->add_option("--plot", o->plot, "write a PNG plot here (gnuplot)");
  cmd->add_option("--threads", o->threads, "worker threads (default: all cores)")->check(CLI::Range(1, 4096));
  cmd->add_option("--samples", o->samples, "Monte Carlo draws: P10/P50/P90 of every point (0: point predictions only)")
      ->check(CLI::Range(size_t{0}, kMaxDraws))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the draws")->capture_default_str();
  add_plan_edit_options(cmd, o->edits);
  cmd->callback([o] { sweep(*o); });
}

}  // namespace mrplan
