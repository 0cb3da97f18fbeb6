#pragma once
// `--set KEY=VALUE` (as Hydra users write it): a dotted key into the plan's YAML (stages.0.local_batch=16,
// io.codec=lut) or, under `machine.`, into the profile's (machine.io.host_decode_GBps=3). The
// result goes through the same reader as a file, so every check of that file applies.
#include <string>
#include <utility>
#include <vector>

#include "model/machine_profile.hpp"
#include "model/plan.hpp"

namespace mrplan {

struct Overrides {
  std::vector<std::pair<std::string, std::string>> plan, machine;  // dotted key, YAML value
};

// InputError for an item without '=' or with an empty key.
Overrides parse_overrides(const std::vector<std::string>& sets);

// `text` with each key set (a list index by number, a missing map key added), as YAML text;
// InputError naming `what` and the key where a list is too short or a scalar is in the way.
std::string override_yaml(const std::string& text, const std::vector<std::pair<std::string, std::string>>& sets, const std::string& what);

Plan with_overrides(const Plan& plan, const Overrides& o);
MachineProfile with_overrides(const MachineProfile& profile, const Overrides& o);

}  // namespace mrplan
