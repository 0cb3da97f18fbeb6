#include "model/plan_diff.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

namespace mrplan {

namespace {

std::string flow(const YAML::Node& n) {
  if (!n) return "(absent)";
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

void diff(const YAML::Node& a, const YAML::Node& b, const std::string& path, std::vector<PlanChange>& out) {
  if (a && b && a.IsMap() && b.IsMap()) {
    std::set<std::string> keys;
    for (const auto& kv : a) keys.insert(kv.first.as<std::string>());
    for (const auto& kv : b) keys.insert(kv.first.as<std::string>());
    for (const auto& k : keys) diff(a[k], b[k], path.empty() ? k : path + "." + k, out);
    return;
  }
  if (a && b && a.IsSequence() && b.IsSequence() && a.size() == b.size()) {
    for (size_t i = 0; i < a.size(); ++i) diff(a[i], b[i], fmt::format("{}[{}]", path, i), out);
    return;
  }
  const auto was = flow(a), now = flow(b);
  if (was != now) out.push_back({path, was, now});
}

bool covers(const std::string& allowed, const std::string& path) {
  if (path.rfind(allowed, 0) != 0) return false;
  return path.size() == allowed.size() || path[allowed.size()] == '.' || path[allowed.size()] == '[';
}

}  // namespace

std::vector<PlanChange> plan_changes(const std::string& was_yaml, const std::string& now_yaml) {
  std::vector<PlanChange> out;
  diff(YAML::Load(was_yaml), YAML::Load(now_yaml), "", out);
  return out;
}

std::vector<PlanChange> changes_not_allowed(const std::vector<PlanChange>& changes, const std::vector<std::string>& allowed) {
  std::vector<PlanChange> out;
  for (const auto& c : changes)
    if (std::none_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return covers(a, c.path); })) out.push_back(c);
  return out;
}

}  // namespace mrplan
