#include "calibrate/spread_coverage.hpp"

#include "model/errors.hpp"
#include "model/plan_yaml.hpp"
#include "sim/monte_carlo.hpp"

namespace mrplan {

std::vector<CoverageRow> spread_coverage(const std::vector<NamedRecord>& measured, const MachineProfile& profile, size_t samples,
                                         uint64_t seed) {
  std::vector<CoverageRow> rows;
  for (const auto& [file, r] : measured) {
    if (!r.totals.reached_target) continue;  // a run that never reached the target has no time to target
    if (r.plan_spec.empty()) fail_input(file, "plan_spec", "the record does not say which plan it ran: its spread cannot be predicted");
    const Plan plan = plan_from_yaml_text(r.plan_spec, file + ": plan_spec");
    const auto s = plan_spread(plan, draw_profiles(profile, r.workload, samples, seed));
    const double t = r.totals.time_to_target_s;
    rows.push_back({file, t, s.time_to_target_s, s.time_to_target_s.p10 <= t && t <= s.time_to_target_s.p90});
  }
  return rows;
}

}  // namespace mrplan
