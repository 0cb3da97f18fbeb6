#pragma once
// `calibrate convergence`: learning curves and the MRT transfer benefit fitted from measured
// Records (baseline runs, and MRT runs at several switch points) by Levenberg-Marquardt.
#include <map>
#include <string>
#include <vector>

#include "calibrate/validation.hpp"
#include "model/machine_profile.hpp"

namespace mrplan {

struct CurveFit {
  LearningCurve curve;
  double floor_std_error = 0, amplitude_std_error = 0, scale_std_error = 0;
  int points = 0;
  double rss = 0;  // sum of squared residuals
};

// exp form m(e) = floor + amplitude exp(-e / scale) through (epoch, value) points (epoch 1-based).
CurveFit fit_learning_curve(const std::vector<std::pair<double, double>>& points, const std::string& what,
                            CurveForm form = CurveForm::exp);
// Both forms fitted; the one with the smaller residuals kept (a long tail suits the power form).
CurveFit fit_learning_curve_either(const std::vector<std::pair<double, double>>& points, const std::string& what);

// Seed-to-seed spread: from records of one plan (the same plan_spec) run with several seeds, the
// pooled relative standard deviation of the epochs to target (the last stage's) and of the switch
// epoch (the first stage's, where its switch rule fired); 0 with no such group.
struct SeedSpread {
  double epochs_cv = 0, epochs_cv_std_error = 0;
  double switch_cv = 0, switch_cv_std_error = 0;
  int groups = 0, runs = 0;  // plans seen with two or more seeds that reached the target, and their runs
  // The machine's speed from run to run: relative standard deviation of the runs' best matmul at their
  // start (Record::device_matmul_flops_per_s) over their mean; 0 with fewer than two such runs.
  double run_speed_cv = 0, run_speed_cv_std_error = 0;
  int speed_runs = 0;
};
SeedSpread fit_seed_spread(const std::vector<NamedRecord>& records);

// Relative standard deviation pooled over groups of repeats: sum of (n-1) s^2 / mean^2 over sum of (n-1).
struct PooledSpread {
  double sum = 0;
  int dof = 0;
  void add(const std::vector<double>& group);  // a group of fewer than two, or of mean <= 0, adds nothing
  double cv() const;
  double std_error() const;  // cv / sqrt(2 dof)
};

struct ConvergenceFit {
  std::string workload;
  double target = 0;
  ConvergenceParams params;
  CurveFit dense_metric, coarse_loss, coarse_metric;
  double transfer_efficiency_std_error = 0;
  double fusion_efficiency_std_error = 0;
  bool fusion_fitted = false;            // MRMF records that reached the target were given
  double pretrained_progress_std_error = 0;
  bool pretrained_fitted = false;        // transfer-learning records that reached the target were given
  double baseline_epochs_to_target = 0;  // where the fitted dense curve crosses the target
  std::vector<std::string> files;        // the records the fit used
  int baseline_runs = 0, mrt_runs = 0, mrmf_runs = 0, transfer_runs = 0;
  SeedSpread seeds;
  bool transfer_fitted = false;  // an MRT run reached the target
  // parts the records do not identify (no run to fit them; a standard error as large as the value):
  // apply_convergence_fit keeps the profile's values for them, and each line says why
  std::vector<std::string> kept_at_prior;
};

// Baseline records (one dense stage) give the dense metric curve; MRT records (coarse stage,
// then dense with transfer) give the coarse curves and, from their dense epochs after switching
// at different points, the transfer efficiency of model/learning_curve's E(s); MRMF records
// (fusion stages, then fine-tuning; their plan_spec says what each model started from) give the
// fusion efficiency, from the fine-tuning epochs after the progress their fusions handed on;
// transfer-learning records (one dense stage from a pretrained model) give the pretrained model's
// head start, from their epochs to target against the baseline's.
// Records that did not reach the target still give curve points but no epochs to target (censored:
// they bound the curves, not the transfer or fusion benefit); with no MRT run at the target, the
// transfer benefit is not fitted.
ConvergenceFit fit_convergence(const std::vector<NamedRecord>& records);

// Writes the fit into `profile`, keeping the profile's own values for what fit.kept_at_prior names.
void apply_convergence_fit(MachineProfile& profile, const ConvergenceFit& fit);

}  // namespace mrplan
