#include "exec/run_eta.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "model/plan_network.hpp"

namespace mrplan {

namespace {

double model_epoch_work(const Plan& plan, const NetworkSpec& spec, const ModelRun& run) {
  const auto t = model_run_table(plan, spec, run);
  const double iterations = static_cast<double>(plan.train_samples) / (static_cast<double>(run.gpus) * run.local_batch);
  return (t.total_fwd_flops() + t.total_bwd_flops()) * iterations;
}

// Epochs the stop allows, and whether that is a bound rather than the count.
std::pair<double, bool> planned_epochs(const Plan& plan, const ModelRun& run) {
  const auto& s = run.stop;
  if (s.kind == StopRule::Kind::epochs) return {s.epochs, false};
  if (s.kind == StopRule::Kind::iterations)
    return {static_cast<double>(s.iterations) * run.gpus * run.local_batch / static_cast<double>(plan.train_samples), false};
  return {static_cast<double>(s.max_epochs), true};
}

}  // namespace

EpochWork epoch_work(const Plan& plan, const NetworkSpec& spec) {
  EpochWork out;
  for (const auto& st : plan.stages) {
    out.emplace_back();
    for (const auto& m : st.models) out.back().push_back(model_epoch_work(plan, spec, m));
  }
  return out;
}

Eta time_left(const Plan& plan, const EpochWork& work, size_t stage, size_t model, double epochs_done, double mean_epoch_s) {
  const auto& here = plan.stages[stage].models[model];
  const double s_per_work = mean_epoch_s / std::max(1.0, work.at(stage).at(model));
  Eta eta;
  auto [epochs, bound] = planned_epochs(plan, here);
  eta.seconds = std::max(0.0, epochs - epochs_done) * mean_epoch_s;
  eta.upper_bound = bound;
  for (size_t i = stage + 1; i < plan.stages.size(); ++i) {
    double slowest_s = 0;  // concurrent models (MRMF): the stage lasts as long as its slowest
    for (size_t j = 0; j < plan.stages[i].models.size(); ++j) {
      const auto [e, b] = planned_epochs(plan, plan.stages[i].models[j]);
      slowest_s = std::max(slowest_s, e * work.at(i).at(j) * s_per_work);
      eta.upper_bound = eta.upper_bound || b;
    }
    eta.seconds += slowest_s;
  }
  return eta;
}

std::string eta_text(const Eta& eta) {
  const char* le = eta.upper_bound ? "<= " : "";
  if (eta.seconds < 10) return fmt::format("ETA {}{:.1f} s", le, eta.seconds);
  if (eta.seconds < 120) return fmt::format("ETA {}{:.0f} s", le, eta.seconds);
  if (eta.seconds < 7200) return fmt::format("ETA {}{:.1f} min", le, eta.seconds / 60);
  return fmt::format("ETA {}{:.1f} h", le, eta.seconds / 3600);
}

}  // namespace mrplan
