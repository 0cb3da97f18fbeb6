#include "sim/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <sstream>

#include "model/errors.hpp"
#include "model/method_rules.hpp"
#include "model/plan_scaling.hpp"
#include "sim/parallel_for.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

std::vector<double> parse_range(const std::string& text, const std::string& what) {
  std::vector<double> out;
  auto num = [&](const std::string& s) {
    try {
      size_t used = 0;
      const double v = std::stod(s, &used);
      if (used != s.size() || !std::isfinite(v)) throw std::invalid_argument(s);
      return v;
    } catch (const std::exception&) {
      fail_input("command line", what, fmt::format("'{}' is not a number (expected FROM:TO:STEP or A,B,C)", s));
    }
  };
  if (text.find(':') != std::string::npos) {
    std::vector<std::string> parts;
    std::stringstream ss(text);
    for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
    if (parts.size() != 3) fail_input("command line", what, fmt::format("'{}': expected FROM:TO:STEP", text));
    const double a = num(parts[0]), b = num(parts[1]), step = num(parts[2]);
    if (step <= 0 || b < a) fail_input("command line", what, fmt::format("'{}': need FROM <= TO and STEP > 0", text));
    constexpr double kMaxValues = 100000;  // a sweep axis is read into memory: a typo must not take it all
    if ((b - a) / step + 1 > kMaxValues)
      fail_input("command line", what, fmt::format("'{}' gives {:.0f} values (at most {:.0f}): use a larger STEP", text, (b - a) / step + 1, kMaxValues));
    for (double v = a; v <= b + 1e-9 * step; v += step) out.push_back(v);
  } else {
    std::stringstream ss(text);
    for (std::string p; std::getline(ss, p, ',');) out.push_back(num(p));
  }
  if (out.empty()) fail_input("command line", what, "no values given");
  for (double v : out)
    if (v <= 0) fail_input("command line", what, fmt::format("values must be positive, got {}", v));
  return out;
}

namespace {

SweepPoint point_from(const PreparedPlan& pp, const std::vector<ModelEpochs>& ep, SweepRole role, int gpus) {
  const auto t = totals(pp, ep);
  SweepPoint s;
  s.method = pp.plan.method, s.role = role;
  s.gpus = gpus;
  s.dense_epochs = ep.back().epochs;  // every method ends with one model at its target
  if (method_row(pp.plan.method).has_switch) {
    s.coarse_epochs = ep[0].epochs;
    s.switch_epoch = ep[0].epochs;
  }
  s.time_to_target_s = t.time_s;
  s.io_s = t.io_s, s.comm_s = t.comm_s, s.compute_s = t.compute_s, s.gpu_hours = t.gpu_hours;
  s.reached_target = t.reached_target;
  for (const auto& st : pp.stages)
    for (const auto& m : st.models) s.fits_memory = s.fits_memory && m.memory.fits;
  return s;
}

}  // namespace

Plan plan_with_split(const Plan& plan, double low_fraction) {
  if (!(low_fraction > 0 && low_fraction < 1))
    fail_input("command line", "--split", fmt::format("{} is not a fraction between 0 and 1", low_fraction));
  Plan p = plan;
  for (auto& st : p.stages) {
    if (st.handoff.kind != Handoff::Kind::fuse) continue;
    const int total = st.gpus();
    const size_t low = model_index(st, st.handoff.bottom_from);
    const int low_gpus = static_cast<int>(std::lround(low_fraction * total));
    if (low_gpus < 1 || low_gpus >= total)
      fail_input("command line", "--split",
                 fmt::format("{} of stage '{}''s {} GPUs leaves a model without a GPU", low_fraction, st.name, total));
    for (size_t j = 0; j < st.models.size(); ++j) st.models[j].gpus = j == low ? low_gpus : total - low_gpus;
  }
  return p;
}

std::vector<SweepPoint> run_sweep(const Plan& plan, const MachineProfile& machine, const SweepSpec& spec,
                                  unsigned threads, const Progress& progress) {
  std::vector<int> gpus = spec.gpus;
  if (gpus.empty()) gpus = {plan.stages.front().gpus()};
  const bool staged = method_row(plan.method).has_switch;
  // a method beside its baseline (transfer learning: no switch, but a baseline to set it beside)
  const bool compared = staged || plan.method != method_row(plan.method).compared_against;
  // MRMF: the fusion stages' GPU split is an axis too (the plan's own when none is given)
  std::vector<std::optional<double>> splits{std::nullopt};
  if (has_fusion_stage(plan) && !spec.low_fractions.empty()) splits.assign(spec.low_fractions.begin(), spec.low_fractions.end());
  // one task per configuration (GPU count, split) and switch point; each configuration is prepared once
  struct Config {
    int gpus;
    std::optional<double> split;
  };
  std::vector<Config> configs;
  for (int g : gpus)
    for (const auto& f : splits) configs.push_back({g, f});
  std::vector<PreparedPlan> prepared(configs.size()), baselines(configs.size());
  for (size_t c = 0; c < configs.size(); ++c) {
    const Plan moved = plan_at_gpus(plan, configs[c].gpus);
    prepared[c] = prepare(configs[c].split ? plan_with_split(moved, *configs[c].split) : moved, machine);
    if (compared) baselines[c] = prepare(baseline_of(moved), machine);
  }
  const size_t per_config = staged ? spec.switch_epochs.size() + 2 : compared ? 2 : 1;
  const size_t total = configs.size() * per_config;
  std::vector<SweepPoint> out(total);
  std::atomic<size_t> done{0};
  parallel_for(total, threads, [&](size_t k, unsigned) {
    const size_t c = k / per_config, j = k % per_config;
    const auto& pp = prepared[c];
    const int g = configs[c].gpus;
    if (!compared) {
      out[k] = point_from(pp, model_epochs(pp), SweepRole::compared, g);
    } else if (j == 0) {
      out[k] = point_from(baselines[c], model_epochs(baselines[c]), SweepRole::compared, g);
    } else if (j == 1) {
      out[k] = point_from(pp, model_epochs(pp), SweepRole::rule, g);
    } else {
      out[k] = point_from(pp, model_epochs(pp, spec.switch_epochs[j - 2]), SweepRole::forced, g);
    }
    out[k].split = configs[c].split;
    const size_t d = ++done;
    if (progress && (d % 256 == 0 || d == total)) progress(d, total);
  });
  return out;
}

std::string sweep_label(const SweepPoint& p) {
  return p.role == SweepRole::rule ? fmt::format("{}-rule", to_string(p.method)) : to_string(p.method);
}

std::string sweep_csv(const std::vector<SweepPoint>& pts) {
  std::string s =
      "method,gpus,switch_epoch,coarse_epochs,dense_epochs,time_to_target_s,io_s,comm_s,compute_s,gpu_hours,"
      "reached_target,fits_memory,low_gpu_fraction,time_p10_s,time_p50_s,time_p90_s,gpu_hours_p10,gpu_hours_p50,gpu_hours_p90\n";
  auto q = [](const std::optional<Quantiles>& x) {
    return x ? fmt::format("{:.6g},{:.6g},{:.6g}", x->p10, x->p50, x->p90) : std::string(",,");
  };
  for (const auto& p : pts)
    s += fmt::format("{},{},{},{:.4g},{:.4g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{},{},{},{},{}\n", sweep_label(p), p.gpus,
                     p.switch_epoch ? fmt::format("{:.4g}", *p.switch_epoch) : "", p.coarse_epochs, p.dense_epochs, p.time_to_target_s,
                     p.io_s, p.comm_s, p.compute_s, p.gpu_hours, p.reached_target, p.fits_memory,
                     p.split ? fmt::format("{:.4g}", *p.split) : "", q(p.time_spread), q(p.gpu_hours_spread));
  return s;
}

}  // namespace mrplan
