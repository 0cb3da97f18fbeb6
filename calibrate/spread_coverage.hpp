#pragma once
// Whether measured runs fall inside their predicted P10-P90: the Monte Carlo spread (sim/monte_carlo)
// checked against measurement, record by record.
#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/validation.hpp"
#include "model/machine_profile.hpp"

namespace mrplan {

struct CoverageRow {
  std::string record;
  double measured_s = 0;
  Quantiles predicted_s;
  bool inside = false;  // P10 <= measured <= P90
};

// Every measured record that reached its target, its plan_spec re-predicted under `samples` draws of
// `profile` (records without a plan_spec are refused, naming the file).
std::vector<CoverageRow> spread_coverage(const std::vector<NamedRecord>& measured, const MachineProfile& profile, size_t samples,
                                         uint64_t seed);

}  // namespace mrplan
