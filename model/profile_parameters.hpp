#pragma once
// The registry of a profile's fitted numbers: every key a fit may record (as the profile's `fitted`
// list spells it), where its value lives in MachineProfile, its unit and the bounds a draw stays in.
// The fitters record through it and the sampler (sim/monte_carlo) draws from it, so neither keeps
// its own list.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/machine_profile.hpp"

namespace mrplan {

struct ParameterSlot {
  std::vector<double*> values;  // in MachineProfile's units; several for a wildcard (convergence.*.x)
  double to_internal = 1;       // the key's unit -> MachineProfile's (us -> s: 1e-6)
  double lower = 0, upper = 0;  // bounds in the key's unit
  std::string unit;             // the key's unit
  // Whether a sampler may draw it on its own: a learning curve's floor, amplitude and scale are
  // fitted together and move together (their covariance is not kept), so drawing each from its own
  // standard error would give curves no data supports; the seed spread stands for them.
  bool independent = true;
};

// The slot of `key` in `m`; nullopt for a key that names no parameter (a provenance note such as
// "hardware"). Map entries (compute.efficiency.conv3d, convergence.W.x) must exist in `m`.
std::optional<ParameterSlot> find_parameter(MachineProfile& m, const std::string& key);

// `key`'s value in `m` in the key's unit, and setting it (every value of a wildcard key);
// std::logic_error for a key that names no parameter of `m` (a caller's key out of step).
double parameter_value(MachineProfile& m, const std::string& key);
void set_parameter(MachineProfile& m, const std::string& key, double value);

// The fit recorded for `key`, or nullptr (a value fitted to 0 is a measurement; one never fitted is missing).
const FittedParameter* fitted_entry(const MachineProfile& m, std::string_view key);
// Records a fit in `m.fitted` (replacing an earlier entry of the same key) after checking that the
// key names a parameter of `m` (std::logic_error otherwise: a fitter's key out of step).
void record_fit(MachineProfile& m, FittedParameter f);
// Records how the fitted `keys` moved together from their covariance (`covariance`, keys.size()^2
// row-major, of the values or, with DrawScale::log, of their logs): keys without a finite, positive
// variance are left out, and so is a block of fewer than two. Call after record_fit of the keys (which
// drops any block they were in). Returns the block made (its keys, in order, those kept), or nullptr.
FitCorrelation* record_correlations(MachineProfile& m, const std::vector<std::string>& keys, const std::vector<double>& covariance,
                                    DrawScale scale = DrawScale::linear);
// Why `c` cannot be a block of `m` (its keys not fitted with a finite error, the matrix not a
// correlation matrix); empty when it can.
std::string correlation_problem(const MachineProfile& m, const FitCorrelation& c);

// The profile YAML's one-number fields, each a registry key in the YAML's units and at its place in
// the YAML (comm.intra_node.bandwidth_GBps is `bandwidth_GBps` of `intra_node` of `comm`): the
// profile reader and writer go through this list, find_parameter says where each value lives.
struct YamlNumber {
  std::string key;
  bool required = false;
  double fallback = 0;    // when not given (the key's unit)
  bool positive = false;  // > 0; otherwise any value (`transfer_efficiency`) or >= 0 (the rest, by the registry's bounds)
  double upper = 0;       // the largest value accepted
  const char* fallback_from = nullptr;  // where the fallback comes from another key (the reader computes it)
};
const std::vector<YamlNumber>& yaml_numbers();

// The keys the registry knows, as patterns ('*': a family, kind or workload name).
std::vector<std::string> parameter_patterns();
// The smallest value the registry accepts for `pattern` (in its unit); nullopt for an unknown pattern.
std::optional<double> parameter_lower_bound(const std::string& pattern);

}  // namespace mrplan
