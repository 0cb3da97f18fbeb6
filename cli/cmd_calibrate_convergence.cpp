#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>

#include "calibrate/convergence_fit.hpp"
#include "cli/commands.hpp"
#include "cli/profile_file.hpp"
#include "model/method_rules.hpp"
#include "model/method_table.hpp"
#include "model/learning_curve.hpp"
#include "sim/monte_carlo.hpp"

namespace mrplan {

namespace {

struct ConvergenceArgs {
  std::string profile = "out/local-profile.yaml";
  std::vector<std::string> records;
};

void print_curve(const char* name, const CurveFit& c) {
  fmt::print("  {:<14} floor {:.4g} +- {:.2g}, amplitude {:.4g} +- {:.2g}, scale {:.3g} +- {:.2g} epochs ({} points)\n", name,
             c.curve.floor, c.floor_std_error, c.curve.amplitude, c.amplitude_std_error, c.curve.scale, c.scale_std_error, c.points);
}

void calibrate_convergence(const ConvergenceArgs& a) {
  std::vector<NamedRecord> recs;
  for (const auto& f : a.records) recs.push_back({f, load_record_file(f)});
  const auto fit = fit_convergence(recs);
  fmt::print("convergence of {} to {} from {} baseline, {} MRT, {} MRMF and {} transfer-learning runs\n", fit.workload, fit.target,
             fit.baseline_runs, fit.mrt_runs, fit.mrmf_runs, fit.transfer_runs);
  print_curve("dense metric", fit.dense_metric);
  print_curve("coarse loss", fit.coarse_loss);
  print_curve("coarse metric", fit.coarse_metric);
  fmt::print("  baseline reaches the target after {:.2f} epochs (fitted curve)\n", fit.baseline_epochs_to_target);
  if (fit.transfer_fitted)
    fmt::print("  transfer efficiency {:.3f} +- {:.3f}{}\n", fit.params.transfer_efficiency, fit.transfer_efficiency_std_error,
               std::isinf(fit.transfer_efficiency_std_error)
                   ? " (not identified: no MRT run's dense epochs move with it; runs at more switch points, or a target further from the noise, pin it)"
                   : "");
  fmt::print("{:<40} {:>8} {:>14} {:>14}\n", "MRT run", "switch", "dense_epochs", "model");
  for (const auto& [file, r] : recs)
    if (method_row(r.method).has_switch && !method_row(r.method).splits_gpus &&
        r.stages[1].single().stop_reason == StopReason::target_reached)
      fmt::print("{:<40} {:>8.0f} {:>14.0f} {:>14.2f}\n", file, r.stages[0].epochs, r.stages[1].epochs,
                 std::ceil(dense_epochs_after_transfer(fit.params, fit.baseline_epochs_to_target, r.stages[0].epochs) - 1e-9));
  if (fit.fusion_fitted)
    fmt::print("  fusion efficiency {:.3f} +- {:.3f} (from the MRMF runs' fine-tuning epochs)\n", fit.params.fusion_efficiency,
               fit.fusion_efficiency_std_error);
  else if (fit.mrmf_runs > 0)
    fmt::print("  fusion efficiency not fitted: no MRMF run reached the target\n");
  if (fit.pretrained_fitted)
    fmt::print("  pretrained model's head start {:.3f} +- {:.3f} (from the transfer runs' epochs to target: the baseline's {:.2f} x {:.2f} "
               "left)\n",
               fit.params.pretrained_progress, fit.pretrained_progress_std_error, fit.baseline_epochs_to_target,
               1 - fit.params.pretrained_progress);
  else if (fit.transfer_runs > 0)
    fmt::print("  pretrained model's head start not fitted: no transfer-learning run reached the target\n");
  if (fit.seeds.groups > 0)
    fmt::print("  seed-to-seed spread: epochs to target {:.1f}% +- {:.1f}%, switch epoch {}, from {} plans run with several seeds ({} runs)\n",
               100 * fit.seeds.epochs_cv, 100 * fit.seeds.epochs_cv_std_error,
               fit.seeds.switch_cv > 0 ? fmt::format("{:.1f}% +- {:.1f}%", 100 * fit.seeds.switch_cv, 100 * fit.seeds.switch_cv_std_error) : "-",
               fit.seeds.groups, fit.seeds.runs);
  else
    fmt::print("  seed-to-seed spread unknown: no plan among the records was run with two or more seeds (predictions assume {:.0f}%)\n",
               100 * kDefaultSeedEpochsCv);
  if (fit.seeds.speed_runs > 1)
    fmt::print("  machine speed from run to run: {:.1f}% +- {:.1f}% (the best matmul at the start of {} runs)\n", 100 * fit.seeds.run_speed_cv,
               100 * fit.seeds.run_speed_cv_std_error, fit.seeds.speed_runs);
  for (const auto& k : fit.kept_at_prior) fmt::print("  kept at the profile's value: {}\n", k);
  update_profile(a.profile, 1, [&](MachineProfile& p) { apply_convergence_fit(p, fit); });
}

}  // namespace

void register_calibrate_convergence(CLI::App& cal) {
  auto* c = cal.add_subcommand("convergence", "Fit learning curves, the MRT transfer and the MRMF fusion benefit from measured records (LM)");
  auto a = std::make_shared<ConvergenceArgs>();
  c->add_option("records", a->records, "record.json files: baseline runs, MRT runs at several switch points, MRMF runs")->required();
  c->add_option("--profile", a->profile, "profile YAML to update (created if missing)")->capture_default_str();
  c->callback([a] { calibrate_convergence(*a); });
}

}  // namespace mrplan
