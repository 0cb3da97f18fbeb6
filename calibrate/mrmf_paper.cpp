#include "calibrate/mrmf_paper.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "model/errors.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

std::vector<MrmfClaim> mrmf_paper_claims() {
  const std::string src = "MRMF paper, abstract and Fig. 3/4 captions (arXiv 2510.25170)";
  return {{"cosmoflow", "cosmoflow-mrt", "perlmutter", 0.47, {32, 64}, {1, 2}, src},
          {"neuron-inverter", "neuron-inverter", "perlmutter", 0.44, {16, 32}, {1, 2}, src}};
}

namespace {

std::string plan_name(const MrmfClaim& c, const std::string& variant) { return fmt::format("{}-{}@{}", c.app, variant, c.machine); }

// The claim's runs, prepared once: a fit then moves only the convergence parameters.
struct PreparedRun {
  int gpus = 0, fusions = 0;
  PreparedPlan baseline, mrmf;
};

std::vector<PreparedRun> prepare_runs(const MrmfClaim& c, const MachineProfile& m) {
  std::vector<PreparedRun> runs;
  for (int g : c.gpus)
    for (int f : c.fusions)
      runs.push_back({g, f, prepare(builtin_plan(plan_name(c, "baseline"), g), m),
                      prepare(builtin_plan(plan_name(c, f == 1 ? "mrmf" : "mrmf2"), g), m)});
  return runs;
}

void set_eta(PreparedPlan& p, double eta) {
  if (!p.convergence) fail_input(p.plan.source_file, "convergence", fmt::format("no convergence parameters for '{}'", p.spec.name));
  p.convergence->fusion_efficiency = eta;
}

double best_prepared_saving(std::vector<PreparedRun>& runs, double eta) {
  double best = -1e300;
  for (auto& r : runs) {
    set_eta(r.mrmf, eta);
    const double base = totals(r.baseline, model_epochs(r.baseline)).time_s;
    best = std::max(best, 1.0 - totals(r.mrmf, model_epochs(r.mrmf)).time_s / base);
  }
  return best;
}

}  // namespace

std::vector<MrmfRun> predict_claim(const MrmfClaim& c, const MachineProfile& m, double eta) {
  MachineProfile with = m;
  if (auto it = with.convergence.find(c.workload); it != with.convergence.end()) it->second.fusion_efficiency = eta;
  std::vector<MrmfRun> out;
  for (int g : c.gpus)
    for (int f : c.fusions)
      out.push_back({c.app, g, f, simulate(builtin_plan(plan_name(c, "baseline"), g), with),
                     simulate(builtin_plan(plan_name(c, "mrt"), g), with),
                     simulate(builtin_plan(plan_name(c, f == 1 ? "mrmf" : "mrmf2"), g), with)});
  return out;
}

double best_saving(const std::vector<MrmfRun>& runs) {
  double best = -1e300;
  for (const auto& r : runs) best = std::max(best, r.saving());
  return best;
}

FusionEfficiencyFit fit_fusion_efficiency(const MrmfClaim& c, const MachineProfile& m) {
  auto runs = prepare_runs(c, m);
  if (best_prepared_saving(runs, kMaxFusionEfficiency) < c.saving) return {kMaxFusionEfficiency, false};
  if (best_prepared_saving(runs, 0.0) > c.saving) return {0.0, false};
  double lo = 0, hi = kMaxFusionEfficiency;
  for (int i = 0; i < 50; ++i) {
    const double mid = 0.5 * (lo + hi);
    (best_prepared_saving(runs, mid) < c.saving ? lo : hi) = mid;
  }
  return {hi, true};  // the least efficiency that saves what the paper states
}

std::vector<MrmfStudyPart> mrmf_paper_study(const MachineProfile& m) {
  const auto claims = mrmf_paper_claims();
  std::vector<MrmfStudyPart> parts;
  for (const auto& on : claims) {
    MrmfStudyPart part;
    part.calibrated_on = on.app;
    part.fit = fit_fusion_efficiency(on, m);
    for (const auto& c : claims) part.runs.push_back(predict_claim(c, m, part.fit.eta));
    parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace mrplan
