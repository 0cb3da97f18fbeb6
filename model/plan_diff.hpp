#pragma once
// What differs between two plans as written (model/plan_yaml): the fields a resume checks against
// its checkpoint, and the ones --force lets change.
#include <string>
#include <vector>

namespace mrplan {

struct PlanChange {
  std::string path;  // e.g. "stages[1].learning_rate"
  std::string was, now;  // flow-style YAML; "(absent)" where a side lacks the field
};

std::vector<PlanChange> plan_changes(const std::string& was_yaml, const std::string& now_yaml);

// The changes no entry of `allowed` covers; an entry covers its path and everything under it.
std::vector<PlanChange> changes_not_allowed(const std::vector<PlanChange>& changes, const std::vector<std::string>& allowed);

}  // namespace mrplan
