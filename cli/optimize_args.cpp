#include "cli/optimize_args.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>

#include "cli/inputs.hpp"
#include "model/text_file.hpp"
#include "model/errors.hpp"
#include "model/method_table.hpp"
#include "model/plan_yaml.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/search_space.hpp"
#include "sim/sweep.hpp"

namespace mrplan {

namespace {

double number(const std::string& s, const std::string& option) {
  try {
    size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  fail_input("command line", option, fmt::format("'{}' is not a number", s));
}

}  // namespace

std::vector<Method> parse_methods(const std::string& text) {
  std::vector<Method> out;
  std::stringstream ss(text);
  for (std::string m; std::getline(ss, m, ',');) {
    const auto method = method_from_string(m);
    if (!method) fail_input("command line", "--methods", fmt::format("unknown method '{}' (expected {})", m, method_names()));
    out.push_back(*method);
  }
  if (out.empty()) fail_input("command line", "--methods", "no method given");
  return out;
}

namespace {

std::vector<std::string> items(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string s; std::getline(ss, s, ',');) out.push_back(s);
  return out;
}

}  // namespace

std::vector<Plan> with_data_paths(const std::vector<Plan>& templates, const std::string& staging, const std::string& codecs) {
  std::vector<std::optional<Staging>> stagings{std::nullopt};
  if (!staging.empty()) stagings.clear();
  for (const auto& s : items(staging)) {
    const auto v = staging_from_string(s);
    if (!v) fail_input("command line", "--staging", fmt::format("unknown staging '{}' (expected none, nvme, host_memory, device_memory or nearest)", s));
    stagings.push_back(v);
  }
  std::vector<std::optional<std::pair<Codec, DecoderPlace>>> paths{std::nullopt};
  if (!codecs.empty()) paths.clear();
  for (const auto& c : items(codecs)) {
    const auto colon = c.find(':');
    paths.push_back(std::pair{codec_from_name(c.substr(0, colon), "command line: --codecs"),
                              colon == std::string::npos ? DecoderPlace::host : decoder_place_from_name(c.substr(colon + 1), "command line: --codecs")});
  }
  std::vector<Plan> out;
  std::optional<InputError> first_refusal;
  for (const auto& t : templates)
    for (const auto& s : stagings)
      for (const auto& c : paths) {
        Plan p = t;
        std::vector<std::string> label;
        if (s) p.staging = *s, label.push_back(fmt::format("staging {}", to_string(*s)));
        if (c) p.codec = c->first, p.codec_named = true, p.decoder = c->second, label.push_back(fmt::format("{}:{}", codec_name(c->first), decoder_place_name(c->second)));
        try {
          check_data_path(p, "command line");
        } catch (const InputError& e) {
          if (!first_refusal) first_refusal = e;
          continue;
        }
        if (!label.empty()) p.name += fmt::format(" [{}]", fmt::join(label, ", "));
        out.push_back(std::move(p));
      }
  if (out.empty()) throw *first_refusal;
  return out;
}

std::vector<Plan> search_templates(const std::string& arg, const std::vector<Method>& methods, const std::string& pretrained_arg) {
  if (!pretrained_arg.empty() && !std::filesystem::is_regular_file(pretrained_arg))
    fail_input("command line", "--pretrained", fmt::format("{}: no such file (expected an earlier run's model.pt)", pretrained_arg));
  // absolute: the plan written (--out) runs from a job's folder
  const std::string pretrained = pretrained_arg.empty() ? "" : std::filesystem::absolute(pretrained_arg).lexically_normal().string();
  if (!names_a_file(arg)) {
    const auto at = arg.find('@');
    if (at == std::string::npos)
      fail_input("command line", "PLAN", fmt::format("'{}' is neither a plan file nor APP@MACHINE (e.g. cosmoflow@perlmutter)", arg));
    std::string app = arg.substr(0, at);
    std::vector<std::string> suffixes{"-coarse"};  // the built-in coarse-only baselines
    for (const auto& r : method_table()) suffixes.insert(suffixes.end(), r.plan_suffixes.begin(), r.plan_suffixes.end());
    std::sort(suffixes.begin(), suffixes.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });  // -mrmf2 before -mrmf
    for (const auto& v : suffixes)
      if (app.ends_with(v)) {
        app.resize(app.size() - v.size());
        break;
      }
    return builtin_templates(app, arg.substr(at + 1), methods, pretrained);
  }
  Plan plan = load_plan(arg);
  if (!pretrained.empty()) start_from(plan, pretrained);
  std::vector<Plan> out;
  const auto& row = method_row(plan.method);
  const auto asked = methods.empty() ? std::vector<Method>{row.compared_against, plan.method} : methods;
  for (Method m : asked) {
    if (m == plan.method && !out.empty() && out.back().method == m) continue;  // a baseline plan is its own baseline
    if (m == plan.method) out.push_back(plan);
    else if (m == row.compared_against) {
      out.push_back(baseline_of(plan));
      out.back().name = plan.name + " (its baseline)";
    }
    else
      fail_input("command line", "--methods",
                 fmt::format("the plan file {} is {} {} plan: it gives its own method and its baseline; for {} give APP@MACHINE or {} {} plan file",
                             arg, row.article, to_string(plan.method), to_string(m), method_row(m).article, to_string(m)));
  }
  return out;
}

std::vector<int> parse_int_axis(const std::string& text, const std::string& option, bool doubling) {
  std::vector<int> out;
  auto whole = [&](double v) {
    if (v != std::floor(v) || v < 1) fail_input("command line", option, fmt::format("{} is not a whole number >= 1", v));
    if (v > 1e7) fail_input("command line", option, fmt::format("{} is out of range (at most 10000000)", v));
    return static_cast<int>(v);
  };
  const auto colons = std::count(text.begin(), text.end(), ':');
  if (colons == 1) {
    const auto c = text.find(':');
    const int a = whole(number(text.substr(0, c), option)), b = whole(number(text.substr(c + 1), option));
    if (b < a) fail_input("command line", option, fmt::format("'{}': need FROM <= TO", text));
    if (doubling) return doubling_values(a, b);
    for (int v = a; v <= b; ++v) out.push_back(v);
    return out;
  }
  for (double v : parse_range(text, option)) out.push_back(whole(v));
  return out;
}

double parse_duration_s(const std::string& text, const std::string& option) {
  // "2h", "90m", "3600", "1h30m", "2 hours", "45min": numbers, each with an optional unit
  static const std::pair<const char*, double> units[] = {{"hours", 3600}, {"hour", 3600}, {"hrs", 3600}, {"hr", 3600}, {"h", 3600},
                                                         {"minutes", 60}, {"minute", 60}, {"mins", 60}, {"min", 60}, {"m", 60},
                                                         {"seconds", 1}, {"second", 1}, {"secs", 1}, {"sec", 1}, {"s", 1}};
  const auto refuse = [&] {
    fail_input("command line", option, fmt::format("'{}': expected a positive duration (e.g. 2h, 90m, 1h30m, 3600s, 2hours)", text));
  };
  double total = 0;
  size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && text[at] == ' ') ++at;
    const size_t start = at;
    while (at < text.size() && (std::isdigit(static_cast<unsigned char>(text[at])) || text[at] == '.')) ++at;
    if (at == start) refuse();
    const double v = number(text.substr(start, at - start), option);
    while (at < text.size() && text[at] == ' ') ++at;
    double scale = 1;
    for (const auto& [u, s] : units)
      if (text.compare(at, std::string(u).size(), u) == 0) {
        scale = s, at += std::string(u).size();
        break;
      }
    total += v * scale;
  }
  if (!(total > 0) || !std::isfinite(total)) refuse();
  return total;
}

void parse_budget(const std::string& text, Constraints& limits) {
  for (const auto& [suffix, node] : {std::pair{"gpu-h", false}, std::pair{"node-h", true}})
    if (text.ends_with(suffix)) {
      const double v = number(text.substr(0, text.size() - std::string(suffix).size()), "--budget");
      if (!(v > 0)) fail_input("command line", "--budget", fmt::format("'{}': expected a positive budget", text));
      (node ? limits.budget_node_hours : limits.budget_gpu_hours) = v;
      return;
    }
  fail_input("command line", "--budget", fmt::format("'{}': expected GPU-hours or node-hours, e.g. 500gpu-h or 40node-h", text));
}

}  // namespace mrplan
