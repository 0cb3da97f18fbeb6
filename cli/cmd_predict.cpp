#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "calibrate/code_priors.hpp"
#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "cli/inputs.hpp"
#include "cli/text_table.hpp"
#include "model/errors.hpp"
#include "model/learning_curve.hpp"
#include "model/record.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/simulate.hpp"
#include "sim/sweep.hpp"

namespace mrplan {

namespace {

std::string f2(double v) { return fmt::format("{:.2f}", v); }

void print_record(const Record& r, bool per_epoch) {
  fmt::print("plan {}: {} of {} on {} (target {} {})\n\n", r.plan, to_string(r.method), r.workload, r.machine, r.target_metric,
             r.target_value);
  const bool concurrent = std::any_of(r.stages.begin(), r.stages.end(), [](const StageRecord& s) { return s.models.size() > 1; });
  std::vector<std::string> head{"stage", "res", "gpus", "local", "global", "iters/ep", "epochs", "rule switch", "io_s/ep", "comm_s/ep",
                                "compute_s/ep", "epoch_s", "stage_s", "GB/GPU", "allreduce", "data"};
  if (concurrent) head.insert(head.begin() + 1, "model");
  TextTable t(head);
  for (const auto& s : r.stages)
    for (size_t j = 0; j < s.models.size(); ++j) {
      const auto& m = s.models[j];
      const double n = std::max(m.epochs, 1e-12);
      std::vector<std::string> row{s.name, std::to_string(m.resolution), std::to_string(m.gpus), std::to_string(m.local_batch),
                                   std::to_string(m.gpus * m.local_batch), std::to_string(m.iterations_per_epoch),
                                   fmt::format("{:.4g}", m.epochs), m.switch_epoch ? fmt::format("{:.4g}", *m.switch_epoch) : "-",
                                   f2(m.io_s / n), f2(m.comm_s / n), f2(m.compute_s / n), f2(m.time_s / n),
                                   j == 0 ? f2(s.time_s) : "",
                                   fmt::format("{:.1f}/{:.0f}{}", m.memory_bytes / 1e9, m.memory_capacity_bytes / 1e9, m.memory_fits ? "" : " !"),
                                   m.allreduce_algorithm, m.data_tiers.empty() ? "-" : m.data_tiers};
      if (concurrent) row.insert(row.begin() + 1, s.models.size() == 1 ? "-" : m.name);
      t.add(row);
    }
  fmt::print("{}", t.str());
  for (const auto& s : r.stages)
    if (s.fusion_s > 0) fmt::print("stage {}: fusion (gather both halves, broadcast the fused model) {:.3f} s\n", s.name, s.fusion_s);
  if (per_epoch) {
    for (const auto& s : r.stages)
      for (const auto& m : s.models) {
        fmt::print("\nstage {}{} per epoch:\n", s.name, s.models.size() == 1 ? "" : " model " + m.name);
        TextTable e({"epoch", "io_s", "comm_s", "compute_s", "eval_s", "epoch_s", "loss", "metric"});
        for (const auto& x : m.per_epoch)
          e.add({x.fraction < 1 ? fmt::format("{} ({:.2f})", x.epoch, x.fraction) : std::to_string(x.epoch), f2(x.io_s),
                 f2(x.comm_s), f2(x.compute_s), f2(x.eval_s), f2(x.epoch_s), x.loss ? fmt::format("{:.5g}", *x.loss) : "-",
                 x.metric ? fmt::format("{:.5g}", *x.metric) : "-"});
        fmt::print("{}", e.str());
      }
  }
  const auto& T = r.totals;
  fmt::print("\ntime to target {:.1f} s ({:.2f} h), {:.2f} GPU-hours; exposed I/O {:.1f} s, comm {:.1f} s, compute {:.1f} s{}\n",
             T.time_to_target_s, T.time_to_target_s / 3600, T.gpu_hours, T.io_s, T.comm_s, T.compute_s,
             T.reached_target ? "" : "  (target NOT reached)");
  if (const auto& s = r.spread)
    fmt::print("spread over {} draws (seed {}): time to target P10 {:.1f} / P50 {:.1f} / P90 {:.1f} s, GPU-hours P10 {:.3g} / P50 {:.3g} / "
               "P90 {:.3g}{}\n",  // significant digits: a small plan's 0.0123 GPU-hours is not 0.01
               s->samples, s->seed, s->time_to_target_s.p10, s->time_to_target_s.p50, s->time_to_target_s.p90, s->gpu_hours.p10,
               s->gpu_hours.p50, s->gpu_hours.p90,
               s->reached < s->samples ? fmt::format("; {} of the draws never reach the target", s->samples - s->reached) : "");
  for (const auto& w : r.warnings) fmt::print("warning: {}\n", w);
}

// Which tuning each dense model's epochs took (model/learning_curve measured_tuning): a user sees
// whether the epochs at its batch were measured there, and with which recipe.
void print_tunings(const Record& r, const MachineProfile& m) {
  const auto cv = m.convergence.find(r.workload);
  if (cv == m.convergence.end() || (cv->second.tuned_factor.empty() && cv->second.batch_tuning_cv <= 0)) return;
  std::set<std::pair<int, std::string>> seen;
  for (const auto& s : r.stages)
    for (const auto& mr : s.models) {
      const int batch = mr.gpus * mr.local_batch;
      if (mr.resolution != 1 || !seen.insert({batch, mr.recipe}).second) continue;
      const std::string recipe = mr.recipe.empty() ? "" : fmt::format(" (recipe {})", recipe_id(mr.recipe));
      if (const auto t = measured_tuning(cv->second, batch, mr.recipe))
        fmt::print("epochs at global batch {}{}: x{:.3f}, the tuning {}\n", batch, recipe, t->factor,
                   t->slot.recipe_id.empty() ? "this machine's own runs measured there" : "runs of recipe " + t->slot.recipe_id + " measured there");
      else
        fmt::print("epochs at global batch {}{}: no run measured its tuning there; the machine's factor alone, a tuning drawn in the band "
                   "(batch_tuning_cv {:.0f}%)\n",
                   batch, recipe, 100 * cv->second.batch_tuning_cv);
    }
}

}  // namespace

void register_predict(CLI::App& app) {
  auto* cmd = app.add_subcommand("predict", "Predict one plan: per-stage and per-epoch time breakdown");
  auto plan = std::make_shared<std::string>();
  auto json = std::make_shared<std::string>();
  auto machine = std::make_shared<std::string>();
  auto gpus = std::make_shared<int>(0);
  auto per_epoch = std::make_shared<bool>(false);
  auto keep = std::make_shared<std::string>();
  auto samples = std::make_shared<size_t>(200);
  auto seed = std::make_shared<uint64_t>(1);
  auto edits = std::make_shared<PlanEdits>();
  cmd->add_option("plan", *plan, "plan YAML file, built-in APP@MACHINE (e.g. cosmoflow-mrt@summit) or a Record (.json: the plan it ran)")->required();
  cmd->add_option("--json", *json, "write the predicted Record as JSON here");
  cmd->add_option("--machine", *machine, "override the plan's machine (built-in name or profile YAML)");
  cmd->add_option("--gpus", *gpus, "move every stage to this many GPUs")->check(CLI::Range(1, 1 << 24));
  add_keep_option(cmd, *keep, "with --gpus: keep the 'global' (strong scaling) or the 'local' batch (weak)");
  cmd->add_flag("--epochs", *per_epoch, "also print every epoch");
  cmd->add_option("--samples", *samples, "Monte Carlo draws of the profile's fitted parameters and the seed (0: the point prediction only)")
      ->check(CLI::Range(size_t{0}, kMaxDraws))
      ->capture_default_str();
  cmd->add_option("--seed", *seed, "seed of the draws (the same seed gives the same spread)")->capture_default_str();
  add_plan_edit_options(cmd, *edits);
  cmd->callback([plan, json, machine, gpus, per_epoch, keep, samples, seed, edits] {
    Plan p = with_keep(edited(load_plan(*plan), *edits), *keep);
    if (*gpus > 0) p = plan_at_gpus(p, *gpus);
    const auto m = edited(machine_for(p, *machine), *edits);
    auto r = simulate(p, m);
    if (*samples > 0) add_spread(r, p, m, *samples, *seed);
    print_record(r, *per_epoch);
    for (const auto& h : held_near_priors(m))
      fmt::print("from other machines (one GPU count cannot fit it): {} {:.3g}, near {}\n", h.key, h.value, h.prior);
    print_tunings(r, m);
    if (!json->empty()) write_output(*json, record_to_json(r), "record file");
  });
}

}  // namespace mrplan
