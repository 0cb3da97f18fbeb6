#pragma once
// `calibrate compute`'s start-up fit: from fresh networks' first two steps on a released heap, how
// many bytes a step touches for the first time and how fast first touch runs (model/startup_cost).
#include <string>
#include <vector>

#include "calibrate/compute_fit.hpp"

namespace mrplan {

struct FirstTouchFit {
  ComputeParams::FirstTouch params;  // bandwidth 0: too few timings with page faults to fit
  double activation_factor_std_error = 0, param_factor_std_error = 0, bandwidth_std_error_Bps = 0;
  int timings = 0;
  std::vector<double> startup_s, modelled_startup_s;  // per timing used: first two steps - two typical ones
};

// Weighted least squares (relative error) of the first-touched bytes on activation and parameter
// bytes (a term that comes out negative is dropped), then of the start-up time on the first-touched
// bytes through the origin. Uses the steps with first_touch_bytes > 0 (CPU runs); needs three.
FirstTouchFit fit_first_touch(const std::vector<WholeStepTiming>& steps);

// Sets compute.first_touch and its fitted entries (after apply_compute_fit, which replaces compute);
// an unmeasured fit leaves the start-up at 0.
void apply_first_touch_fit(MachineProfile& profile, const FirstTouchFit& fit, const std::string& source);

}  // namespace mrplan
