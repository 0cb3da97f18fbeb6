#pragma once
// Alpha-beta fit of measured allreduce timings (from `mrplan calibrate allreduce`) and its entry
// into a machine profile.
#include <string>
#include <vector>

#include "model/machine_profile.hpp"

namespace mrplan {

struct AllreduceTiming {
  double bytes = 0;
  int ranks = 2;
  double seconds = 0;  // median over repeats
};

struct AllreduceFit {
  LinkLevel link;                 // alpha_s and bandwidth_Bps of the ring model
  double alpha_std_error_s = 0;
  double bandwidth_std_error_Bps = 0;
  double r2 = 0;                  // on log time, so every message size counts alike
  std::vector<double> relative_residuals;  // (model - measured) / measured, per timing
};

// Ring allreduce time 2(p-1)alpha + 2(p-1)/p * n/B (Thakur et al. 2005, as model/allreduce_cost),
// linear in (alpha, 1/B): weighted least squares with weights 1/t^2, so every size counts by its
// relative error. Throws InputError with fewer than two sizes or fewer than two ranks.
AllreduceFit fit_ring_alpha_beta(const std::vector<AllreduceTiming>& timings);

// Sets the profile's intra-node link from the fit (efficiency 1, no per-call overhead: the fit
// measured the achieved numbers) and records both parameters with their standard errors.
void apply_allreduce_fit(MachineProfile& profile, const AllreduceFit& fit, const std::string& source);

}  // namespace mrplan
