#include "model/profile_yaml.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "model/errors.hpp"
#include "model/learning_curve.hpp"
#include "model/profile_parameters.hpp"
#include "model/yaml_fields.hpp"

namespace mrplan {

namespace {

const char* to_string(Collectives c) { return c == Collectives::nccl ? "nccl" : "alpha_beta"; }

std::optional<Collectives> collectives_from_string(const std::string& name) {
  for (auto c : {Collectives::alpha_beta, Collectives::nccl})
    if (name == to_string(c)) return c;
  return std::nullopt;
}

LearningCurve read_curve(const YamlFields& f) {
  f.only({"form", "floor", "amplitude", "scale"});
  LearningCurve c;
  const auto form = f.text("form", "exp");
  if (form != "exp" && form != "power") fail_input(f.file(), f.key_path("form"), "expected exp or power");
  c.form = form == "power" ? CurveForm::power : CurveForm::exp;
  c.floor = f.number("floor");
  c.amplitude = f.number("amplitude");
  c.scale = f.positive("scale");
  return c;
}

// `key` with its '*' standing for `name`.
std::string named(std::string key, const std::string& name) {
  if (const auto star = key.find('*'); star != std::string::npos) key.replace(star, 1, name);
  return key;
}

// The names the registry's YAML numbers take right under `prefix` (a field, or the group holding one),
// then `manual`: what a section of the profile may hold.
std::vector<std::string> keys_under(const std::string& prefix, std::vector<std::string> manual) {
  for (const auto& y : yaml_numbers())
    if (y.key.starts_with(prefix)) {
      auto first = y.key.substr(prefix.size());
      first = first.substr(0, first.find('.'));
      if (std::find(manual.begin(), manual.end(), first) == manual.end()) manual.push_back(first);
    }
  return manual;
}

// Checked as the key's kind says: > 0, >= 0 (the registry's lower bound) or any number, and at most its upper bound.
double read_number(const YamlFields& at, const std::string& leaf, const YamlNumber& y, double lower) {
  const char* k = leaf.c_str();
  const bool capped = std::isfinite(y.upper);
  if (y.positive) return capped ? at.positive_at_most(k, y.fallback, y.upper) : at.positive(k);
  if (lower >= 0) return capped ? at.non_negative_at_most(k, y.fallback, y.upper) : at.non_negative(k, y.fallback);
  const double v = at.number(k);
  if (v < lower) fail_input(at.file(), at.key_path(leaf), fmt::format("expected a number >= {}, got {}", lower, v));
  return v;
}

// The registry's YAML numbers under `prefix` (a group one level below read from `f`'s child of that
// name) into `m`; `name`: what '*' stands for. What is not given takes its fallback.
void read_numbers(const YamlFields& f, const std::string& prefix, const std::string& name, MachineProfile& m) {
  for (const auto& y : yaml_numbers()) {
    if (!y.key.starts_with(prefix)) continue;
    std::string leaf = y.key.substr(prefix.size());
    if (name.empty() && leaf.find('*') != std::string::npos) continue;  // a map's entries (io.codecs.*.x): read per entry
    // where the number sits: `f`, or groups below it (none: an optional group that is not there);
    // emplaced, never assigned: assigning a YAML::Node writes into the tree it refers to
    std::optional<YamlFields> at;
    at.emplace(f);
    for (auto dot = leaf.find('.'); at && dot != std::string::npos; dot = leaf.find('.')) {
      const auto g = leaf.substr(0, dot);
      std::optional<YamlFields> below;
      if (at->has(g.c_str()) || y.required) below.emplace(at->child(g.c_str()));
      at.reset();
      if (below) at.emplace(*below);
      leaf = leaf.substr(dot + 1);
    }
    const auto slot = find_parameter(m, named(y.key, name));
    if (!slot) throw std::logic_error("profile number '" + y.key + "' is not in the registry");
    double v = y.fallback;
    if (at && (at->has(leaf.c_str()) || y.required)) v = read_number(*at, leaf, y, slot->lower);
    for (double* x : slot->values) *x = v * slot->to_internal;
  }
}

// compute's per-kind maps: fractions of a measured peak
void read_compute_maps(const YamlFields& c, MachineProfile& m) {
  const auto& file = c.file();
  // above 1 where an op beats the largest matmul or copy (caches)
  auto read_map = [&](const char* key, std::map<std::string, double>& out, double max, bool zero = false) {
    if (!c.has(key)) return;
    out.clear();
    for (const auto& kv : c.node()[key]) {
      const auto k = kv.first.as<std::string>();
      double v = 0;
      try {
        v = kv.second.as<double>();
      } catch (const YAML::Exception&) {
        fail_input(file, fmt::format("compute.{}.{}", key, k), "expected a number");
      }
      if (!((zero ? v >= 0 : v > 0) && v <= max))
        fail_input(file, fmt::format("compute.{}.{}", key, k), fmt::format("expected 0 {} value <= {}, got {}", zero ? "<=" : "<", max, v));
      out[k] = v;
    }
  };
  read_map("efficiency", m.compute.efficiency, 10);
  read_map("mem_efficiency_by_kind", m.compute.mem_efficiency_by_kind, 10);
  // a CPU's max-pool backward (scatter into a zeroed gradient) can beat its forward tenfold
  read_map("backward_efficiency", m.compute.backward_efficiency, 100);
  read_map("warmup_s", m.compute.warmup_s, std::numeric_limits<double>::infinity(), true);
  if (c.has("half_work_GFLOP_by_family"))
    for (const auto& kv : c.node()["half_work_GFLOP_by_family"]) {
      const auto k = kv.first.as<std::string>();
      const double v = kv.second.as<double>(-1);
      if (!(v >= 0)) fail_input(file, "compute.half_work_GFLOP_by_family." + k, "expected a number >= 0");
      m.compute.half_work_flops_by_family[k] = v * 1e9;
    }
}

void read_compute(const YamlFields& f, MachineProfile& m) {
  const auto& file = f.file();
  auto c = f.child("compute");
  for (const auto& [old_key, new_key] : {std::pair{"node_sharing_slowdown", "slowdown"}, std::pair{"comm_steal_fraction", "comm_steal_fraction"}})
    if (c.has(old_key))
      fail_input(file, fmt::format("compute.{}", old_key),
                 fmt::format("this parameter now lives in its own section: move it to node_sharing.{} (or rerun calibrate sharing)", new_key));
  c.only(keys_under("compute.", {"efficiency", "half_work_GFLOP_by_family", "mem_efficiency_by_kind", "backward_efficiency", "step_forward",
                                 "step_backward", "step_factor", "step_bytes_per_param", "first_touch", "warmup_s"}));
  read_numbers(c, "compute.", "", m);
  if (m.compute.peak_fp16_flops <= 0) m.compute.peak_fp16_flops = m.compute.peak_fp32_flops;  // no tensor cores
  read_compute_maps(c, m);
  // profiles fitted before the phases were split: one factor for both, the sweep counted with backward
  m.compute.step_forward.factor = m.compute.step_backward.factor = c.positive_at_most("step_factor", 1.0, 10);
  m.compute.step_backward.bytes_per_param = c.non_negative("step_bytes_per_param", 0.0);
  for (auto [key, phase] : {std::pair{"step_forward", &m.compute.step_forward}, std::pair{"step_backward", &m.compute.step_backward}}) {
    if (!c.has(key)) continue;
    if (c.has("step_factor") || c.has("step_bytes_per_param"))
      fail_input(file, fmt::format("compute.{}", key), "give either step_factor/step_bytes_per_param or step_forward/step_backward, not both");
    auto s = c.child(key);
    s.only({"factor", "bytes_per_param", "per_op_us"});
    phase->factor = s.positive_at_most("factor", 1.0, 10);
    phase->bytes_per_param = s.non_negative("bytes_per_param", 0.0);
    phase->per_op_s = s.number("per_op_us", 0.0) * 1e-6;  // signed: a whole step overlaps what an op alone waits for
  }
  if (c.has("first_touch")) {
    auto t = c.child("first_touch");
    t.only({"activation_factor", "param_factor", "bandwidth_GBps"});
    m.compute.first_touch.activation_factor = t.non_negative("activation_factor", 0.0);
    m.compute.first_touch.param_factor = t.non_negative("param_factor", 0.0);
    m.compute.first_touch.bandwidth_Bps = t.positive("bandwidth_GBps") * 1e9;
  }
}

void read_comm(const YamlFields& f, MachineProfile& m) {
  const auto& file = f.file();
  if (f.has("node_sharing")) {
    auto ns = f.child("node_sharing");
    ns.only(keys_under("node_sharing.", {}));
    read_numbers(ns, "node_sharing.", "", m);
  }

  auto cm = f.child("comm");
  cm.only(keys_under("comm.", {"collectives"}));
  for (const char* level : {"intra_node", "inter_node"}) cm.child(level).only(keys_under(fmt::format("comm.{}.", level), {}));
  read_numbers(cm, "comm.", "", m);
  const auto collectives = collectives_from_string(cm.text("collectives", to_string(Collectives::alpha_beta)));
  if (!collectives)
    fail_input(file, "comm.collectives", fmt::format("unknown '{}' (expected alpha_beta or nccl)", cm.text("collectives", "")));
  m.comm.collectives = *collectives;
}

void read_io(const YamlFields& f, MachineProfile& m) {
  const auto& file = f.file();
  auto io = f.child("io");
  for (const auto& [old_key, new_key] : {std::pair{"pfs", "tiers.pfs"}, std::pair{"nvme_bandwidth_GBps", "tiers.nvme.per_node_bandwidth_GBps"},
                                         std::pair{"nvme_capacity_GB", "tiers.nvme.capacity_per_node_GB"},
                                         std::pair{"host_memcpy_GBps", "tiers.host_memory.per_node_bandwidth_GBps"},
                                         std::pair{"page_cache_fraction", "tiers.host_memory.capacity_per_node_GB"}})
    if (io.has(old_key))
      fail_input(file, fmt::format("io.{}", old_key),
                 fmt::format("the storage tiers now have their own list: move it to io.{} (docs/profile-format.md)", new_key));
  io.only(keys_under("io.", {"prefetch_depth", "staging_workloads"}));
  auto tiers = io.child("tiers");
  tiers.only(keys_under("io.tiers.", {}));
  for (const char* t : {"pfs", "nvme", "host_memory"})
    if (tiers.has(t)) tiers.child(t).only(keys_under(fmt::format("io.tiers.{}.", t), {}));
  read_numbers(io, "io.", "", m);
  if (!(tiers.has("host_memory") && tiers.child("host_memory").has("capacity_per_node_GB")))
    m.io.host_memory.capacity_per_node_bytes = default_page_cache_bytes(m.host_memory_bytes);
  m.io.prefetch_depth = io.int32("prefetch_depth", 2);
  if (io.has("staging_workloads")) m.io.staging_workloads = io.texts("staging_workloads");
  if (m.io.prefetch_depth < 0) fail_input(file, "io.prefetch_depth", fmt::format("must be >= 0, got {}", m.io.prefetch_depth));
  if (io.has("codecs")) {
    for (const auto& kv : io.node()["codecs"]) {
      const auto c = kv.first.as<std::string>();
      codec_from_name(c, fmt::format("{}: io.codecs.{}", file, c));
      YamlFields cf(kv.second, file, "io.codecs." + c);
      cf.only(keys_under("io.codecs.*.", {}));
      m.io.codecs[c] = CodecRates{};
      read_numbers(cf, "io.codecs.*.", c, m);
    }
  }
}

// tuned_factor: {slot: factor}, a global batch and perhaps a recipe's id (model/learning_curve)
std::map<TuningSlot, double> read_tuned_factors(const YamlFields& cv) {
  std::map<TuningSlot, double> out;
  if (!cv.has("tuned_factor")) return out;
  const YamlFields t = cv.child("tuned_factor");
  for (const auto& kv : t.node()) {
    const auto b = kv.first.as<std::string>();
    const auto slot = tuning_slot_from_string(b);
    if (!slot) fail_input(cv.file(), t.key_path(b), "expected a global batch (a positive integer), or one and a recipe's id (2048/1a2b3c4d), as the key");
    out[*slot] = t.positive(b.c_str());
  }
  return out;
}

void read_convergence(const YamlFields& f, MachineProfile& m) {
  const auto& file = f.file();
  if (f.has("convergence")) {
    for (const auto& kv : f.node()["convergence"]) {
      const auto w = kv.first.as<std::string>();
      if (w.empty() || w.find_first_of(". *") != std::string::npos)  // it becomes part of dotted parameter keys
        fail_input(file, "convergence." + w, "a workload name without '.', '*' or spaces");
      YamlFields cv(kv.second, file, "convergence." + w);
      cv.only(keys_under("convergence.*.", {"dense_metric", "coarse_loss", "coarse_metric", "coarse_resolution", "tuned_factor"}));
      ConvergenceParams p;
      p.dense_metric = read_curve(cv.child("dense_metric"));
      p.coarse_loss = read_curve(cv.child("coarse_loss"));
      if (cv.has("coarse_metric")) p.coarse_metric = read_curve(cv.child("coarse_metric"));
      p.coarse_resolution = cv.int32("coarse_resolution", 2);
      if (p.coarse_resolution < 2) fail_input(file, "convergence." + w + ".coarse_resolution", "expected a coarsening factor >= 2");
      p.tuned_factor = read_tuned_factors(cv);
      m.convergence[w] = p;
      read_numbers(cv, "convergence.*.", w, m);
    }
  }
}

void read_fitted(const YamlFields& f, MachineProfile& m) {
  const auto& file = f.file();
  if (f.has("fitted")) {
    for (const auto& e : f.list("fitted")) {
      e.only({"key", "value", "std_error", "source"});
      FittedParameter p{e.text("key"), e.number("value", 0), e.non_negative_or_infinite("std_error", 0), e.text("source", "")};
      // a key the registry does not know would be left out of every draw: only notes (a key with a
      // space, or "hardware") may name no parameter
      const bool note = p.key == "hardware" || p.key.find(' ') != std::string::npos;
      if (!note && !find_parameter(m, p.key))
        fail_input(file, e.key_path("key"),
                   fmt::format("'{}' names no parameter of this profile (a map entry or workload it names is missing, or the key is "
                               "misspelt; `mrplan profile summit` shows the keys fits record)",
                               p.key));
      m.fitted.push_back(std::move(p));
    }
  }
}

void read_correlations(const YamlFields& f, MachineProfile& m) {
  const auto& file = f.file();
  if (f.has("correlations")) {
    const auto blocks = f.list("correlations");
    for (const auto& b : blocks) {
      b.only({"keys", "matrix", "draws", "scale"});
      const auto scale = b.text("scale", "linear");
      if (scale != "linear" && scale != "log")
        fail_input(file, b.key_path("scale"), fmt::format("expected linear or log, got '{}'", scale));
      m.correlations.push_back({b.texts("keys"), b.numbers("matrix"),
                                b.has("draws") ? b.number_rows("draws") : std::vector<std::vector<double>>{},
                                scale == "log" ? DrawScale::log : DrawScale::linear});
    }
    for (size_t i = 0; i < m.correlations.size(); ++i)
      if (const auto why = correlation_problem(m, m.correlations[i]); !why.empty()) fail_input(file, blocks[i].key_path("keys"), why);
  }
}

MachineProfile read_profile(const YAML::Node& root, const std::string& file) {
  YamlFields f(root, file, "");
  f.only({"name", "description", "gpus_per_node", "whole_nodes", "gpu_memory_GB", "host_memory_GB", "compute", "node_sharing",
          "comm", "io", "convergence", "fitted", "correlations"});
  MachineProfile m;
  m.name = f.text("name");
  m.description = f.text("description", "");
  m.gpus_per_node = f.int32("gpus_per_node");
  if (m.gpus_per_node < 1) fail_input(file, "gpus_per_node", "must be >= 1");
  m.whole_nodes = f.boolean("whole_nodes", false);
  m.gpu_memory_bytes = f.positive("gpu_memory_GB") * 1e9;
  m.host_memory_bytes = f.positive("host_memory_GB") * 1e9;

  read_compute(f, m);
  read_comm(f, m);
  read_io(f, m);
  read_convergence(f, m);
  read_fitted(f, m);
  read_correlations(f, m);
  return m;
}

// The registry's YAML numbers right under `prefix` (not those of a group below it), in the YAML's
// units; an optional one left out where it is 0 and that is its fallback (not one computed from another key).
void write_numbers(YAML::Emitter& e, const std::string& prefix, const std::string& name, MachineProfile& m) {
  for (const auto& y : yaml_numbers()) {
    if (!y.key.starts_with(prefix) || y.key.find('.', prefix.size()) != std::string::npos) continue;
    const auto slot = find_parameter(m, named(y.key, name));
    if (!slot) continue;
    const double v = *slot->values.front() / slot->to_internal;
    // an optional number at its fallback of 0, or at a negative one (the mark of "not measured"), is left out
    if (!y.required && !y.fallback_from && v == y.fallback && (v == 0 || v < 0)) continue;
    e << YAML::Key << y.key.substr(prefix.size()) << YAML::Value << v;
  }
}

void curve_out(YAML::Emitter& e, const char* key, const LearningCurve& c) {
  e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "form" << YAML::Value << (c.form == CurveForm::power ? "power" : "exp")
    << YAML::Key << "floor" << YAML::Value << c.floor << YAML::Key << "amplitude" << YAML::Value << c.amplitude
    << YAML::Key << "scale" << YAML::Value << c.scale << YAML::EndMap;
}

template <class V>
void kv(YAML::Emitter& e, const char* k, const V& v) {
  e << YAML::Key << k << YAML::Value << v;
}

void write_compute(YAML::Emitter& e, MachineProfile& m) {
  e << YAML::Key << "compute" << YAML::Value << YAML::BeginMap;
  write_numbers(e, "compute.", "", m);
  auto write_map = [&](const char* key, const std::map<std::string, double>& values) {
    e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [k, v] : values) kv(e, k.c_str(), v);
    e << YAML::EndMap;
  };
  write_map("efficiency", m.compute.efficiency);
  if (!m.compute.half_work_flops_by_family.empty()) {
    std::map<std::string, double> gflop;
    for (const auto& [k, v] : m.compute.half_work_flops_by_family) gflop[k] = v / 1e9;
    write_map("half_work_GFLOP_by_family", gflop);
  }
  if (!m.compute.mem_efficiency_by_kind.empty()) write_map("mem_efficiency_by_kind", m.compute.mem_efficiency_by_kind);
  if (!m.compute.backward_efficiency.empty()) write_map("backward_efficiency", m.compute.backward_efficiency);
  if (!m.compute.warmup_s.empty()) write_map("warmup_s", m.compute.warmup_s);
  for (auto [key, phase] : {std::pair{"step_forward", &m.compute.step_forward}, std::pair{"step_backward", &m.compute.step_backward}})
    if (phase->factor != 1.0 || phase->bytes_per_param != 0 || phase->per_op_s != 0) {
      e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
      kv(e, "factor", phase->factor);
      kv(e, "bytes_per_param", phase->bytes_per_param);
      if (phase->per_op_s != 0) kv(e, "per_op_us", phase->per_op_s * 1e6);
      e << YAML::EndMap;
    }
  if (m.compute.first_touch.bandwidth_Bps > 0) {
    e << YAML::Key << "first_touch" << YAML::Value << YAML::Flow << YAML::BeginMap;
    kv(e, "activation_factor", m.compute.first_touch.activation_factor);
    kv(e, "param_factor", m.compute.first_touch.param_factor);
    kv(e, "bandwidth_GBps", m.compute.first_touch.bandwidth_Bps / 1e9);
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
}

void write_comm(YAML::Emitter& e, MachineProfile& m) {
  if (m.node_sharing.slowdown != 1 || m.node_sharing.comm_steal_fraction != 0 || m.node_sharing.step_time_cv != 0) {
    e << YAML::Key << "node_sharing" << YAML::Value << YAML::Flow << YAML::BeginMap;
    write_numbers(e, "node_sharing.", "", m);
    e << YAML::EndMap;
  }
  e << YAML::Key << "comm" << YAML::Value << YAML::BeginMap;
  for (const std::string level : {"intra_node", "inter_node"}) {
    e << YAML::Key << level << YAML::Value << YAML::Flow << YAML::BeginMap;
    write_numbers(e, "comm." + level + ".", "", m);
    e << YAML::EndMap;
  }
  write_numbers(e, "comm.", "", m);
  if (m.comm.collectives != Collectives::alpha_beta) e << YAML::Key << "collectives" << YAML::Value << to_string(m.comm.collectives);
  e << YAML::EndMap;
}

void write_io(YAML::Emitter& e, MachineProfile& m) {
  e << YAML::Key << "io" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "tiers" << YAML::Value << YAML::BeginMap;
  for (const std::string tier : {"pfs", "nvme", "host_memory"}) {
    e << YAML::Key << tier << YAML::Value << YAML::Flow << YAML::BeginMap;
    write_numbers(e, "io.tiers." + tier + ".", "", m);
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
  write_numbers(e, "io.", "", m);
  kv(e, "prefetch_depth", m.io.prefetch_depth);
  if (!m.io.staging_workloads.empty())
    e << YAML::Key << "staging_workloads" << YAML::Value << YAML::Flow << m.io.staging_workloads;
  if (!m.io.codecs.empty()) {
    e << YAML::Key << "codecs" << YAML::Value << YAML::BeginMap;
    for (const auto& [c, rates] : m.io.codecs) {
      e << YAML::Key << c << YAML::Value << YAML::Flow << YAML::BeginMap;
      write_numbers(e, "io.codecs.*.", c, m);
      e << YAML::EndMap;
    }
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
}

void write_convergence(YAML::Emitter& e, MachineProfile& m) {
  if (!m.convergence.empty()) {
    e << YAML::Key << "convergence" << YAML::Value << YAML::BeginMap;
    for (const auto& [w, p] : m.convergence) {
      e << YAML::Key << w << YAML::Value << YAML::BeginMap;
      curve_out(e, "dense_metric", p.dense_metric);
      curve_out(e, "coarse_loss", p.coarse_loss);
      curve_out(e, "coarse_metric", p.coarse_metric);
      write_numbers(e, "convergence.*.", w, m);
      if (!p.tuned_factor.empty()) {
        e << YAML::Key << "tuned_factor" << YAML::Value << YAML::Flow << YAML::BeginMap;
        for (const auto& [slot, f] : p.tuned_factor) e << YAML::Key << to_string(slot) << YAML::Value << f;
        e << YAML::EndMap;
      }
      kv(e, "coarse_resolution", p.coarse_resolution);
      e << YAML::EndMap;
    }
    e << YAML::EndMap;
  }
}

// every fitted value with its source, and how each fit's values moved together
void write_fits(YAML::Emitter& e, MachineProfile& m) {
  e << YAML::Key << "fitted" << YAML::Value << YAML::BeginSeq;
  for (const auto& p : m.fitted) {
    e << YAML::Flow << YAML::BeginMap;
    kv(e, "key", p.key);
    kv(e, "value", p.value);
    kv(e, "std_error", p.std_error);
    kv(e, "source", p.source);
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;
  if (!m.correlations.empty()) {  // how each fit's parameters moved together (sim/monte_carlo draws them so)
    e << YAML::Key << "correlations" << YAML::Value << YAML::BeginSeq;
    for (const auto& c : m.correlations) {
      e << YAML::BeginMap << YAML::Key << "keys" << YAML::Value << YAML::Flow << c.keys;
      if (c.scale == DrawScale::log) kv(e, "scale", "log");
      e << YAML::Key << "matrix" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (const double r : c.matrix) e << r;
      e << YAML::EndSeq;
      if (!c.draws.empty()) {  // the fit's posterior, one row a draw (model/machine_profile FitCorrelation)
        e << YAML::Key << "draws" << YAML::Value << YAML::BeginSeq;
        for (const auto& row : c.draws) e << YAML::Flow << row;
        e << YAML::EndSeq;
      }
      e << YAML::EndMap;
    }
    e << YAML::EndSeq;
  }
}

}  // namespace

MachineProfile profile_from_yaml_text(const std::string& text, const std::string& file) {
  return read_profile(parse_yaml_text(text, file), file);
}

MachineProfile load_profile_file(const std::string& path) { return read_profile(load_yaml_file(path), path); }

std::string profile_to_yaml(const MachineProfile& profile) {
  MachineProfile m = profile;  // the registry hands out writable places
  YAML::Emitter e;
  e.SetDoublePrecision(8);
  e << YAML::BeginMap;
  kv(e, "name", m.name);
  kv(e, "description", m.description);
  kv(e, "gpus_per_node", m.gpus_per_node);
  kv(e, "whole_nodes", m.whole_nodes);
  kv(e, "gpu_memory_GB", m.gpu_memory_bytes / 1e9);
  kv(e, "host_memory_GB", m.host_memory_bytes / 1e9);
  write_compute(e, m);
  write_comm(e, m);
  write_io(e, m);
  write_convergence(e, m);
  write_fits(e, m);
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace mrplan
