#pragma once
// What-if sweeps over switch points and GPU counts, spread over threads.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/machine_profile.hpp"
#include "model/method_table.hpp"
#include "model/plan.hpp"
#include "model/plan_scaling.hpp"
#include "model/record.hpp"

namespace mrplan {

struct SweepSpec {
  std::vector<double> switch_epochs;  // MRT: coarse epochs before the switch; MRMF: every fusion stage's
                                      // lower-resolution model's epochs (the stage length)
  std::vector<int> gpus;              // empty: the plan's own GPU count
  std::vector<double> low_fractions;  // MRMF: share of a fusion stage's GPUs on its lower-resolution
                                      // model; empty: the plan's own split
};

// What a sweep point is: the plan the method is compared against, the plan with its own stops (its
// switch rule's choice), or the plan with a switch forced where the sweep puts it.
enum class SweepRole { compared, rule, forced };

struct SweepPoint {
  Method method{};  // the plan's; for SweepRole::compared, the compared plan's (its method row's compared_against)
  SweepRole role = SweepRole::compared;
  int gpus = 0;
  std::optional<double> split;        // MRMF: the fusion stages' low_gpu_fraction, where swept
  std::optional<double> switch_epoch;
  double coarse_epochs = 0, dense_epochs = 0;
  double time_to_target_s = 0, io_s = 0, comm_s = 0, compute_s = 0, gpu_hours = 0;
  bool reached_target = true;
  bool fits_memory = true;
  std::optional<Quantiles> time_spread, gpu_hours_spread;  // with Monte Carlo draws (sim/monte_carlo)
};

// Parses "10:100:5" (from:to:step, inclusive) or "10,20,30".
std::vector<double> parse_range(const std::string& text, const std::string& what);

// The MRMF plan with `low_fraction` of every fusion stage's GPUs on its lower-resolution model.
Plan plan_with_split(const Plan& plan, double low_fraction);

using Progress = std::function<void(size_t done, size_t total)>;
std::vector<SweepPoint> run_sweep(const Plan& plan, const MachineProfile& machine, const SweepSpec& spec,
                                  unsigned threads, const Progress& progress = {});

// The CSV's method column: METHOD, METHOD-rule (the rule's point) or the compared plan's method.
std::string sweep_label(const SweepPoint& p);
std::string sweep_csv(const std::vector<SweepPoint>& points);

}  // namespace mrplan
