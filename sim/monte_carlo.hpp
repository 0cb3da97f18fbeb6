#pragma once
// Monte Carlo over a profile: its fitted parameters drawn from their standard errors (through the
// registry, model/profile_parameters) and each draw one seed of training (the seed-to-seed spread of
// epochs to target), so that a prediction is a distribution, not a point.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/machine_profile.hpp"
#include "model/plan.hpp"
#include "model/record.hpp"
#include "sim/sweep.hpp"

namespace mrplan {

// Where the seed-to-seed spread of a workload is not measured: a wide default, flagged in the output.
constexpr double kDefaultSeedEpochsCv = 0.2;

struct ProfileDraws {
  std::vector<MachineProfile> profiles;
  std::vector<std::string> notes;  // what the draws leave out or assume (said with the prediction)
  uint64_t seed = 0;
};

// What a draw varies: the fitted parameters within their errors, a seed's epochs to target, the
// machine's run-to-run speed, the tuning of a global batch the system's runs did not train at. All by
// default; one alone says how much of a band it makes.
struct DrawSources {
  bool fitted = true, seeds = true, run_speed = true, tuning = true;
  std::vector<std::string> only;  // with `fitted`: these keys alone (a block drawn whole where one of its keys is named)
  std::vector<std::string> kept;  // with `fitted`: these keys stay at their values, their blocks' others drawn (what a block owes them)
};
// The fitted parameters alone: `only` these keys (all where empty), `kept` at their values.
inline DrawSources fitted_alone(std::vector<std::string> only = {}, std::vector<std::string> kept = {}) {
  return {true, false, false, false, std::move(only), std::move(kept)};
}
// One source alone, named by its flag (`drawn_alone(&DrawSources::seeds)`).
inline DrawSources drawn_alone(bool DrawSources::*source) {
  DrawSources from{false, false, false, false, {}, {}};
  from.*source = true;
  return from;
}

// `n` profiles around `m`, reproducible from `seed`: every fitted parameter with a finite standard
// error drawn from a normal truncated to its bounds, jointly with the others of its fit where the
// profile keeps their correlation (`correlations`), else alone (and then not a learning curve's
// shape: ParameterSlot::independent); and every workload's epochs scaled by a seed factor drawn from
// N(1, seed_epochs_cv) (at seed_epochs_ref: model/learning_curve seeded_epochs), and by a batch tuning
// from N(1, batch_tuning_cv) where the plan's batch is not one of tuned_factor's (epoch_scale_for_batch).
// Notes name `workload`'s unmeasured seed spread and the parameters no fit identified.
ProfileDraws draw_profiles(const MachineProfile& m, const std::string& workload, size_t n, uint64_t seed, DrawSources from = {});

// P10, P50, P90 by linear interpolation between order statistics.
Quantiles quantiles_of(std::vector<double> values);

struct Spread {
  Quantiles time_to_target_s, gpu_hours;
  size_t samples = 0, reached = 0;  // draws, and how many of them reach the target
  std::vector<double> time_s, gpu_hour;  // every draw's, sorted (any quantile)
};
// The q-quantile (0..1) of sorted values, by linear interpolation.
double quantile(const std::vector<double>& sorted, double q);
// The plan under every draw; `forced`: a search's switch point (sim/simulate model_epochs).
Spread plan_spread(const Plan& plan, const ProfileDraws& draws, std::optional<double> forced = {});

// Every sweep point's spread: the sweep run again under each draw (points in the same order).
void add_sweep_spread(std::vector<SweepPoint>& points, const Plan& plan, const ProfileDraws& draws, const SweepSpec& spec, unsigned threads);

// The most draws a spread takes: P10/P90 settle within a percent long before, and each draw keeps a
// record, so a mistyped count (4294967296, -1) is refused rather than filling memory (issue 44).
inline constexpr size_t kMaxDraws = 100000;

// The record's spread over `samples` draws from `seed`; what the draws assume goes to its warnings,
// with the band's width (P90/P10) that each source gives alone, naming the widest and, where that
// one is assumed rather than measured, the command that measures it.
void add_spread(Record& record, const Plan& plan, const MachineProfile& machine, size_t samples, uint64_t seed);
// That one line for `plan` whose spread over those draws is `all` (empty with fewer than 10 draws):
// what optimize says of its chosen plan.
std::string spread_by_source(const Plan& plan, const MachineProfile& machine, const std::string& workload, size_t samples, uint64_t seed,
                             const Spread& all);

}  // namespace mrplan
