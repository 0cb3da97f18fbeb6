#pragma once
// A small checker of the MLPerf HPC logging rules (tests/support/mlperf_hpc_rules.json restates
// MLCommons' compliance rules as data): what a log breaks, one line each; empty when it complies.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace mrplan::testing {

inline std::vector<std::string> mllog_rule_violations(const std::string& log, const std::string& rules_path) {
  using nlohmann::json;
  std::ifstream rf(rules_path);
  const json rules = json::parse(rf);
  auto listed = [&](const char* list, const std::string& key) {
    const auto& l = rules[list];
    return std::find(l.begin(), l.end(), key) != l.end();
  };
  std::vector<std::string> bad;
  std::map<std::string, int> count, first_line;
  std::istringstream in(log);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const auto at = line.find(":::MLLOG ");
    if (at == std::string::npos) continue;
    json e;
    try {
      e = json::parse(line.substr(at + 9));
    } catch (const json::exception&) {
      bad.push_back(fmt::format("line {}: not valid JSON", n));
      continue;
    }
    const std::string key = e.value("key", "");
    const json meta = e.value("metadata", json::object()), value = e.value("value", json());
    if (!first_line.count(key)) first_line[key] = n;
    ++count[key];
    if (listed("needs_epoch_num", key) && !meta.contains("epoch_num"))
      bad.push_back(fmt::format("line {}: {} without metadata.epoch_num", n, key));
    if (rules["allowed_values"].contains(key)) {
      const auto& ok = rules["allowed_values"][key];
      if (std::find(ok.begin(), ok.end(), value) == ok.end()) bad.push_back(fmt::format("line {}: {} is {}", n, key, value.dump()));
    }
    if (listed("positive", key) && !(value.is_number() && value.get<double>() > 0))
      bad.push_back(fmt::format("line {}: {} must be > 0", n, key));
    if (listed("non_negative", key) && !(value.is_number() && value.get<double>() >= 0))
      bad.push_back(fmt::format("line {}: {} must be >= 0", n, key));
    if (key == "run_stop") {
      const auto& ok = rules["run_stop_status"];
      if (!meta.contains("status") || std::find(ok.begin(), ok.end(), meta["status"]) == ok.end())
        bad.push_back(fmt::format("line {}: run_stop's status must be success or aborted", n));
    }
    if (listed("after_run_start", key) && !count.count("run_start")) bad.push_back(fmt::format("line {}: {} before run_start", n, key));
  }
  for (const auto& k : rules["exactly_one"])
    if (count[k.get<std::string>()] != 1)
      bad.push_back(fmt::format("{} appears {} times, not exactly once", k.get<std::string>(), count[k.get<std::string>()]));
  for (const auto& k : rules["at_least_one"])
    if (count[k.get<std::string>()] < 1) bad.push_back(fmt::format("{} is missing", k.get<std::string>()));
  const auto& order = rules["in_order"];
  for (size_t i = 1; i < order.size(); ++i) {
    const std::string a = order[i - 1], b = order[i];
    if (first_line.count(a) && first_line.count(b) && first_line[a] > first_line[b]) bad.push_back(fmt::format("{} comes after {}", a, b));
  }
  return bad;
}

}  // namespace mrplan::testing
