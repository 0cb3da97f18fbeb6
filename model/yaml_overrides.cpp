#include "model/yaml_overrides.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "model/errors.hpp"
#include "model/plan_yaml.hpp"
#include "model/profile_yaml.hpp"
#include "model/yaml_fields.hpp"

namespace mrplan {

namespace {

std::vector<std::string> parts_of(const std::string& key) {
  std::vector<std::string> parts;
  for (size_t at = 0;;) {
    const auto dot = key.find('.', at);
    parts.push_back(key.substr(at, dot - at));
    if (dot == std::string::npos) return parts;
    at = dot + 1;
  }
}

// Sets parts[i..] below `node` (a handle into the tree: never assigned another node, only indexed).
void set_below(YAML::Node node, const std::vector<std::string>& parts, size_t i, const YAML::Node& value, const std::string& where) {
  const auto& part = parts[i];
  const bool last = i + 1 == parts.size();
  if (node.IsSequence()) {
    size_t idx = 0;
    try {
      idx = std::stoul(part);
    } catch (const std::exception&) {
      fail_input("--set", where, fmt::format("'{}' is a list here: expected an index", part));
    }
    if (idx >= node.size()) fail_input("--set", where, fmt::format("index {} is past the list's {} entries", idx, node.size()));
    if (last) node[idx] = value;
    else set_below(node[idx], parts, i + 1, value, where);
    return;
  }
  if (node.IsScalar()) fail_input("--set", where, fmt::format("'{}' is below a single value", part));
  if (last) node[part] = value;
  else set_below(node[part], parts, i + 1, value, where);
}

}  // namespace

Overrides parse_overrides(const std::vector<std::string>& sets) {
  Overrides o;
  for (const auto& s : sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) fail_input("--set", s, "expected KEY=VALUE (e.g. stages.0.local_batch=16, machine.io.host_decode_GBps=3)");
    auto key = s.substr(0, eq);
    const auto value = s.substr(eq + 1);
    if (key.rfind("machine.", 0) == 0) o.machine.emplace_back(key.substr(8), value);
    else o.plan.emplace_back(key, value);
  }
  return o;
}

std::string override_yaml(const std::string& text, const std::vector<std::pair<std::string, std::string>>& sets, const std::string& what) {
  YAML::Node root = parse_yaml_text(text, what);
  for (const auto& [key, value] : sets) {
    const auto parts = parts_of(key);
    for (const auto& p : parts)
      if (p.empty()) fail_input("--set", key, "a dotted key without empty parts");
    YAML::Node parsed = parse_yaml_text(value, "--set " + key);
    set_below(root, parts, 0, parsed, what + ": " + key);
  }
  YAML::Emitter e;
  e << root;
  return e.c_str();
}

Plan with_overrides(const Plan& plan, const Overrides& o) {
  if (o.plan.empty()) return plan;
  Plan p = plan_from_yaml_text(override_yaml(plan_to_yaml(plan), o.plan, "plan"), "plan with --set");
  p.source_file = plan.source_file;  // a relative data folder still resolves next to the file
  return p;
}

MachineProfile with_overrides(const MachineProfile& profile, const Overrides& o) {
  if (o.machine.empty()) return profile;
  return profile_from_yaml_text(override_yaml(profile_to_yaml(profile), o.machine, "machine"), "profile with --set");
}

}  // namespace mrplan
