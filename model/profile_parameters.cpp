#include "model/profile_parameters.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "model/learning_curve.hpp"

namespace mrplan {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A pattern's slot: '*' in the pattern matches one dot-free name, passed to `at`.
struct Entry {
  std::string pattern;
  std::string unit;
  double to_internal, lower, upper;
  std::function<double*(MachineProfile&, const std::string& name)> at;
  bool independent = true;
};

double* in_map(std::map<std::string, double>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? nullptr : &it->second;
}

ConvergenceParams* workload(MachineProfile& m, const std::string& w) {
  auto it = m.convergence.find(w);
  return it == m.convergence.end() ? nullptr : &it->second;
}

LearningCurve* curve(ConvergenceParams& p, const std::string& name) {
  if (name == "dense_metric") return &p.dense_metric;
  if (name == "coarse_loss") return &p.coarse_loss;
  if (name == "coarse_metric") return &p.coarse_metric;
  return nullptr;
}

template <class F>
Entry field(std::string pattern, std::string unit, double scale, double lo, double hi, F f) {
  return {std::move(pattern), std::move(unit), scale, lo, hi, [f](MachineProfile& m, const std::string&) { return f(m); }};
}

// Older fitters spell a key in MachineProfile's units (_s, _Bps, _flops), the paper calibration in
// the YAML's (_us, _ms, _GBps, _GFLOP): both name the same number.
const std::vector<Entry>& entries() {
  static const std::vector<Entry> table = [] {
    std::vector<Entry> t;
    auto both = [&](const std::string& base, const std::string& unit, const std::string& yaml_unit, double yaml_scale, double hi,
                    std::function<double*(MachineProfile&)> f) {
      t.push_back(field(base + "_" + unit, unit, 1, 0, hi, f));
      t.push_back(field(base + "_" + yaml_unit, yaml_unit, yaml_scale, 0, hi / yaml_scale, f));
    };
    both("compute.peak_fp32", "flops", "TFLOPS", 1e12, kInf, [](MachineProfile& m) { return &m.compute.peak_fp32_flops; });
    both("compute.peak_fp16", "flops", "TFLOPS", 1e12, kInf, [](MachineProfile& m) { return &m.compute.peak_fp16_flops; });
    both("compute.mem_bandwidth", "Bps", "GBps", 1e9, kInf, [](MachineProfile& m) { return &m.compute.mem_bandwidth_Bps; });
    t.push_back({"compute.efficiency.*", "", 1, 0, 10, [](MachineProfile& m, const std::string& k) { return in_map(m.compute.efficiency, k); }});
    t.push_back({"compute.mem_efficiency_by_kind.*", "", 1, 0, 10,
                 [](MachineProfile& m, const std::string& k) { return in_map(m.compute.mem_efficiency_by_kind, k); }});
    t.push_back({"compute.backward_efficiency.*", "", 1, 0, 100,
                 [](MachineProfile& m, const std::string& k) { return in_map(m.compute.backward_efficiency, k); }});
    t.push_back({"compute.half_work_flops_by_family.*", "flops", 1, 0, kInf,
                 [](MachineProfile& m, const std::string& k) { return in_map(m.compute.half_work_flops_by_family, k); }});
    both("compute.half_work", "flops", "GFLOP", 1e9, kInf, [](MachineProfile& m) { return &m.compute.half_work_flops; });
    t.push_back(field("compute.mem_efficiency", "", 1, 0, 10, [](MachineProfile& m) { return &m.compute.mem_efficiency; }));
    both("compute.kernel_overhead", "s", "us", 1e-6, kInf, [](MachineProfile& m) { return &m.compute.kernel_overhead_s; });
    both("compute.optimizer_tensor", "s", "us", 1e-6, kInf, [](MachineProfile& m) { return &m.compute.optimizer_tensor_s; });
    both("compute.captured_kernel_gap", "s", "us", 1e-6, kInf, [](MachineProfile& m) { return &m.compute.captured_kernel_gap_s; });
    for (auto [name, phase] : {std::pair{"step_forward", &ComputeParams::step_forward}, std::pair{"step_backward", &ComputeParams::step_backward}}) {
      t.push_back(field(fmt::format("compute.{}.factor", name), "", 1, 0, 10, [phase = phase](MachineProfile& m) { return &(m.compute.*phase).factor; }));
      t.push_back(field(fmt::format("compute.{}.bytes_per_param", name), "bytes", 1, 0, kInf,
                        [phase = phase](MachineProfile& m) { return &(m.compute.*phase).bytes_per_param; }));
      t.push_back(field(fmt::format("compute.{}.per_op_s", name), "s", 1, -1, 1,
                        [phase = phase](MachineProfile& m) { return &(m.compute.*phase).per_op_s; }));
    }
    t.push_back(field("compute.step_time_cv", "", 1, 0, 1, [](MachineProfile& m) { return &m.compute.step_time_cv; }));
    t.push_back(field("compute.inference_factor", "", 1, 0, 10, [](MachineProfile& m) { return &m.compute.inference_factor; }));
    both("compute.eval_pass", "s", "ms", 1e-3, kInf, [](MachineProfile& m) { return &m.compute.eval_pass_s; });
    t.push_back({"compute.warmup_s.*", "s", 1, 0, kInf, [](MachineProfile& m, const std::string& k) { return in_map(m.compute.warmup_s, k); }});
    t.push_back(field("compute.run_speed_cv", "", 1, 0, 1, [](MachineProfile& m) { return &m.compute.run_speed_cv; }));
    t.push_back(field("compute.first_touch.activation_factor", "", 1, 0, kInf, [](MachineProfile& m) { return &m.compute.first_touch.activation_factor; }));
    t.push_back(field("compute.first_touch.param_factor", "", 1, 0, kInf, [](MachineProfile& m) { return &m.compute.first_touch.param_factor; }));
    both("compute.first_touch.bandwidth", "Bps", "GBps", 1e9, kInf, [](MachineProfile& m) { return &m.compute.first_touch.bandwidth_Bps; });
    t.push_back(field("node_sharing.slowdown", "", 1, 0, 10, [](MachineProfile& m) { return &m.node_sharing.slowdown; }));
    t.push_back(field("node_sharing.comm_steal_fraction", "", 1, 0, 10, [](MachineProfile& m) { return &m.node_sharing.comm_steal_fraction; }));
    t.push_back(field("node_sharing.step_time_cv", "", 1, 0, 1, [](MachineProfile& m) { return &m.node_sharing.step_time_cv; }));
    for (auto [name, level] : {std::pair{"intra_node", &CommParams::intra_node}, std::pair{"inter_node", &CommParams::inter_node}}) {
      t.push_back(field(fmt::format("comm.{}.alpha_s", name), "s", 1, 0, kInf, [level = level](MachineProfile& m) { return &(m.comm.*level).alpha_s; }));
      both(fmt::format("comm.{}.bandwidth", name), "Bps", "GBps", 1e9, kInf, [level = level](MachineProfile& m) { return &(m.comm.*level).bandwidth_Bps; });
    }
    t.push_back(field("comm.bandwidth_efficiency", "", 1, 0, 1, [](MachineProfile& m) { return &m.comm.bandwidth_efficiency; }));
    both("comm.call_overhead", "s", "us", 1e-6, kInf, [](MachineProfile& m) { return &m.comm.call_overhead_s; });
    both("comm.horovod_call_overhead", "s", "us", 1e-6, kInf, [](MachineProfile& m) { return &m.comm.horovod_call_overhead_s; });
    both("comm.sync_batchnorm_call", "s", "us", 1e-6, kInf, [](MachineProfile& m) { return &m.comm.sync_batchnorm_call_s; });
    // io.tiers.T.*: the storage tiers a profile describes (model/storage_tier.hpp)
    for (auto [name, tier] : {std::pair{"pfs", &IoParams::pfs}, std::pair{"nvme", &IoParams::nvme}, std::pair{"host_memory", &IoParams::host_memory}}) {
      const std::string base = fmt::format("io.tiers.{}.", name);
      both(base + "per_node_bandwidth", "Bps", "GBps", 1e9, kInf, [tier = tier](MachineProfile& m) { return &(m.io.*tier).per_node_bandwidth_Bps; });
      both(base + "aggregate_bandwidth", "Bps", "GBps", 1e9, kInf, [tier = tier](MachineProfile& m) { return &(m.io.*tier).aggregate_bandwidth_Bps; });
      both(base + "capacity_per_node", "bytes", "GB", 1e9, kInf, [tier = tier](MachineProfile& m) { return &(m.io.*tier).capacity_per_node_bytes; });
      both(base + "per_file_latency", "s", "ms", 1e-3, kInf, [tier = tier](MachineProfile& m) { return &(m.io.*tier).per_file_latency_s; });
    }
    both("io.host_decode", "Bps", "GBps", 1e9, kInf, [](MachineProfile& m) { return &m.io.host_decode_Bps; });
    both("io.host_to_device", "Bps", "GBps", 1e9, kInf, [](MachineProfile& m) { return &m.io.host_to_device_Bps; });
    t.push_back(field("io.host_to_device_efficiency", "", 1, 0, 1, [](MachineProfile& m) { return &m.io.host_to_device_efficiency; }));
    both("io.worker_start", "s", "ms", 1e-3, kInf, [](MachineProfile& m) { return &m.io.worker_start_s; });
    both("io.staging_node", "Bps", "GBps", 1e9, kInf, [](MachineProfile& m) { return &m.io.staging_node_Bps; });
    t.push_back(field("io.staging_fixed_s", "s", 1, 0, kInf, [](MachineProfile& m) { return &m.io.staging_fixed_s; }));
    // io.codecs.C.*: per codec (model/codec.hpp)
    for (auto [name, member, unit, scale, lo] :
         {std::tuple{"ratio", &CodecRates::ratio, "", 1.0, 0.0}, std::tuple{"host_decode_GBps", &CodecRates::host_decode_Bps, "GBps", 1e9, 0.0},
          std::tuple{"device_decode_GBps", &CodecRates::device_decode_Bps, "GBps", 1e9, 0.0},
          std::tuple{"output_bytes_per_value", &CodecRates::output_bytes_per_value, "bytes", 1.0, 0.0}})
      t.push_back({fmt::format("io.codecs.*.{}", name), unit, scale, lo, kInf, [member = member](MachineProfile& m, const std::string& c) -> double* {
                     auto it = m.io.codecs.find(c);
                     return it == m.io.codecs.end() ? nullptr : &(it->second.*member);
                   }});
    // convergence.W.*: per workload; the learning curves' floor and amplitude may be negative
    for (const char* c : {"dense_metric", "coarse_loss", "coarse_metric"})
      for (const char* part : {"floor", "amplitude", "scale"}) {
        const std::string which = c, what = part;
        const double lo = what == "scale" ? 0 : -kInf;
        t.push_back({fmt::format("convergence.*.{}.{}", c, part), what == "scale" ? "epochs" : "", 1, lo, kInf,
                     [which, what](MachineProfile& m, const std::string& w) -> double* {
                       auto* p = workload(m, w);
                       if (!p) return nullptr;
                       auto* cv = curve(*p, which);
                       return what == "floor" ? &cv->floor : what == "amplitude" ? &cv->amplitude : &cv->scale;
                     },
                     false});
      }
    for (auto [name, member, lo, hi] : {std::tuple{"transfer_efficiency", &ConvergenceParams::transfer_efficiency, -1.0, kInf},
                                        std::tuple{"fusion_efficiency", &ConvergenceParams::fusion_efficiency, -1.0, kInf},
                                        std::tuple{"pretrained_progress", &ConvergenceParams::pretrained_progress, -2.0, 1.0},
                                        std::tuple{"overtrain_epochs", &ConvergenceParams::overtrain_epochs, 0.0, kInf},
                                        std::tuple{"overtrain_penalty", &ConvergenceParams::overtrain_penalty, 0.0, kInf},
                                        std::tuple{"critical_batch", &ConvergenceParams::critical_batch, 0.0, kInf},
                                        std::tuple{"epoch_factor", &ConvergenceParams::epoch_factor, 0.0, kInf},
                                        std::tuple{"reference_global_batch", &ConvergenceParams::reference_global_batch, 0.0, kInf},
                                        std::tuple{"seed_epochs_cv", &ConvergenceParams::seed_epochs_cv, 0.0, 1.0},
                                        std::tuple{"seed_epochs_ref", &ConvergenceParams::seed_epochs_ref, 0.0, kInf},
                                        std::tuple{"seed_switch_cv", &ConvergenceParams::seed_switch_cv, 0.0, 1.0},
                                        std::tuple{"batch_tuning_cv", &ConvergenceParams::batch_tuning_cv, 0.0, 1.0}})
      t.push_back({fmt::format("convergence.*.{}", name), "", 1, lo, hi, [member = member](MachineProfile& m, const std::string& w) -> double* {
                     auto* p = workload(m, w);
                     return p ? &(p->*member) : nullptr;
                   }});
    // convergence.W.tuned_factor.SLOT: the tuning at a global batch, perhaps of a recipe (two names: "W.SLOT")
    t.push_back({"convergence.*.tuned_factor.*", "", 1, 0, kInf, [](MachineProfile& m, const std::string& ws) -> double* {
                   const auto dot = ws.find('.');
                   auto* p = workload(m, ws.substr(0, dot));
                   if (!p || dot == std::string::npos) return nullptr;
                   const auto slot = tuning_slot_from_string(ws.substr(dot + 1));
                   if (!slot) return nullptr;
                   auto it = p->tuned_factor.find(*slot);
                   return it == p->tuned_factor.end() ? nullptr : &it->second;
                 }});
    return t;
  }();
  return table;
}

// `key` against `pattern`: the name '*' stands for, or nullopt; a pattern ending in a second '*'
// ("a.*.b.*"), both names joined by '.'.
std::optional<std::string> match(const std::string& pattern, const std::string& key) {
  const auto star = pattern.find('*');
  if (star == std::string::npos) return pattern == key ? std::optional<std::string>("") : std::nullopt;
  if (pattern.find('*', star + 1) != std::string::npos) {
    const auto dot = key.rfind('.');
    if (!pattern.ends_with(".*") || dot == std::string::npos || dot + 1 == key.size()) return std::nullopt;
    const auto first = match(pattern.substr(0, pattern.size() - 2), key.substr(0, dot));
    return first ? std::optional<std::string>(*first + "." + key.substr(dot + 1)) : std::nullopt;
  }
  const auto head = pattern.substr(0, star), tail = pattern.substr(star + 1);
  if (key.size() <= head.size() + tail.size() || key.compare(0, head.size(), head) != 0 ||
      key.compare(key.size() - tail.size(), tail.size(), tail) != 0)
    return std::nullopt;
  auto name = key.substr(head.size(), key.size() - head.size() - tail.size());
  if (name.find('.') != std::string::npos) return std::nullopt;
  return name;
}

}  // namespace

std::optional<ParameterSlot> find_parameter(MachineProfile& m, const std::string& key) {
  for (const auto& e : entries()) {
    const auto name = match(e.pattern, key);
    if (!name) continue;
    ParameterSlot s{{}, e.to_internal, e.lower, e.upper, e.unit, e.independent};
    if (*name == "*" && e.pattern.rfind("convergence.", 0) == 0) {  // one number for every workload
      for (auto& [w, p] : m.convergence)
        if (double* v = e.at(m, w)) s.values.push_back(v);
    } else if (double* v = e.at(m, *name)) {
      s.values.push_back(v);
    }
    if (s.values.empty()) return std::nullopt;
    return s;
  }
  return std::nullopt;
}

namespace {

ParameterSlot slot_of(MachineProfile& m, const std::string& key) {
  auto slot = find_parameter(m, key);
  if (!slot) throw std::logic_error(fmt::format("'{}': no such parameter in the profile", key));
  return *slot;
}

}  // namespace

double parameter_value(MachineProfile& m, const std::string& key) {
  const auto slot = slot_of(m, key);
  return *slot.values.front() / slot.to_internal;
}

void set_parameter(MachineProfile& m, const std::string& key, double value) {
  const auto slot = slot_of(m, key);
  for (double* v : slot.values) *v = value * slot.to_internal;
}

void record_fit(MachineProfile& m, FittedParameter f) {
  if (!find_parameter(m, f.key)) throw std::logic_error(fmt::format("fit of '{}': no such parameter in the profile registry", f.key));
  std::erase_if(m.fitted, [&](const FittedParameter& p) { return p.key == f.key; });
  // a parameter fitted again moved apart from the others of its old fit
  std::erase_if(m.correlations, [&](const FitCorrelation& c) { return std::find(c.keys.begin(), c.keys.end(), f.key) != c.keys.end(); });
  m.fitted.push_back(std::move(f));
}

const FittedParameter* fitted_entry(const MachineProfile& m, std::string_view key) {
  const auto it = std::find_if(m.fitted.begin(), m.fitted.end(), [&](const FittedParameter& p) { return p.key == key; });
  return it == m.fitted.end() ? nullptr : &*it;
}

namespace {

bool drawable(const FittedParameter* f) { return f && std::isfinite(f->std_error) && f->std_error > 0; }

}  // namespace

FitCorrelation* record_correlations(MachineProfile& m, const std::vector<std::string>& keys, const std::vector<double>& covariance,
                                    DrawScale scale) {
  const size_t n = keys.size();
  if (covariance.size() != n * n) throw std::logic_error("record_correlations: the covariance is not keys x keys");
  std::vector<size_t> kept;
  for (size_t i = 0; i < n; ++i)
    if (const double v = covariance[i * n + i]; std::isfinite(v) && v > 0 && drawable(fitted_entry(m, keys[i]))) kept.push_back(i);
  if (kept.size() < 2) return nullptr;
  FitCorrelation c;
  c.scale = scale;
  for (const size_t i : kept) c.keys.push_back(keys[i]);
  for (const size_t i : kept)
    for (const size_t j : kept)
      c.matrix.push_back(i == j ? 1.0 : std::clamp(covariance[i * n + j] / std::sqrt(covariance[i * n + i] * covariance[j * n + j]), -1.0, 1.0));
  for (const auto& k : c.keys)
    std::erase_if(m.correlations, [&](const FitCorrelation& b) { return std::find(b.keys.begin(), b.keys.end(), k) != b.keys.end(); });
  m.correlations.push_back(std::move(c));
  return &m.correlations.back();
}

std::string correlation_problem(const MachineProfile& m, const FitCorrelation& c) {
  const size_t n = c.keys.size();
  if (n < 2) return "a block needs two keys or more";
  for (const auto& k : c.keys) {
    if (!drawable(fitted_entry(m, k))) return fmt::format("'{}' is not in `fitted` with a finite, positive std_error", k);
    if (std::count(c.keys.begin(), c.keys.end(), k) > 1) return fmt::format("'{}' is named twice", k);
    for (const auto& other : m.correlations)
      if (&other != &c && std::find(other.keys.begin(), other.keys.end(), k) != other.keys.end())
        return fmt::format("'{}' is in another block too", k);
  }
  if (c.matrix.size() != n * n) return fmt::format("{} keys need a matrix of {} numbers (row by row), not {}", n, n * n, c.matrix.size());
  Eigen::MatrixXd r(n, n);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) r(i, j) = c.matrix[i * n + j];
  if (((r - r.transpose()).cwiseAbs().maxCoeff() > 1e-9) || (r.diagonal().array() - 1).abs().maxCoeff() > 1e-9 || r.cwiseAbs().maxCoeff() > 1 + 1e-9)
    return "the matrix is not a correlation matrix (symmetric, ones on the diagonal, entries in [-1, 1])";
  if (Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(r).eigenvalues().minCoeff() < -1e-6)
    return "the matrix is not positive semi-definite (no set of draws has these correlations)";
  if (c.draws.empty()) return "";
  MachineProfile probe = m;  // the registry hands out writable places
  for (size_t i = 0; i < c.draws.size(); ++i) {
    if (c.draws[i].size() != n) return fmt::format("draw {} has {} values; the block has {} keys", i + 1, c.draws[i].size(), n);
    for (size_t k = 0; k < n; ++k)
      if (const auto s = find_parameter(probe, c.keys[k]);
          !std::isfinite(c.draws[i][k]) || (s && (c.draws[i][k] < s->lower || c.draws[i][k] > s->upper)))
        return fmt::format("draw {}: {} = {} is not a finite value within the key's bounds", i + 1, c.keys[k], c.draws[i][k]);
  }
  return "";
}

const std::vector<YamlNumber>& yaml_numbers() {
  constexpr bool req = true, opt = false, pos = true, any = false;
  static const std::vector<YamlNumber> list = {
      {"compute.peak_fp32_TFLOPS", req, 0, pos, kInf},
      {"compute.peak_fp16_TFLOPS", opt, 0, pos, kInf},  // 0: the fp32 peak (no tensor cores)
      {"compute.mem_bandwidth_GBps", req, 0, pos, kInf},
      {"compute.half_work_GFLOP", opt, 1, any, kInf},
      {"compute.mem_efficiency", opt, 0.7, pos, kInf},
      {"compute.kernel_overhead_us", opt, 5, any, kInf},
      {"compute.optimizer_tensor_us", opt, 0, any, kInf},
      {"compute.captured_kernel_gap_us", opt, 0, any, kInf},
      {"compute.step_time_cv", opt, 0, any, 1},
      {"compute.inference_factor", opt, 0, any, 10},
      {"compute.eval_pass_ms", opt, 0, any, kInf},
      {"compute.run_speed_cv", opt, 0, any, 1},
      {"node_sharing.slowdown", opt, 1, pos, 10},
      {"node_sharing.comm_steal_fraction", opt, 0, any, 10},
      {"node_sharing.step_time_cv", opt, 0, any, 1},
      {"comm.intra_node.alpha_s", opt, 5e-6, any, kInf},
      {"comm.intra_node.bandwidth_GBps", req, 0, pos, kInf},
      {"comm.inter_node.alpha_s", opt, 5e-6, any, kInf},
      {"comm.inter_node.bandwidth_GBps", req, 0, pos, kInf},
      {"comm.bandwidth_efficiency", opt, 1, pos, 1},
      {"comm.call_overhead_us", opt, 0, any, kInf},
      {"comm.horovod_call_overhead_us", opt, 0, any, kInf},
      {"comm.sync_batchnorm_call_us", opt, 0, any, kInf},
      {"io.tiers.pfs.per_node_bandwidth_GBps", req, 0, pos, kInf},
      {"io.tiers.pfs.aggregate_bandwidth_GBps", req, 0, pos, kInf},
      {"io.tiers.pfs.per_file_latency_ms", opt, 1, any, kInf},
      {"io.tiers.nvme.per_node_bandwidth_GBps", opt, 0, any, kInf},
      {"io.tiers.nvme.aggregate_bandwidth_GBps", opt, 0, any, kInf},
      {"io.tiers.nvme.capacity_per_node_GB", opt, 0, any, kInf},
      {"io.tiers.nvme.per_file_latency_ms", opt, 0, any, kInf},
      {"io.tiers.host_memory.per_node_bandwidth_GBps", opt, 20, pos, kInf},
      {"io.tiers.host_memory.capacity_per_node_GB", opt, 0, any, kInf, "half of host_memory_GB"},
      {"io.host_to_device_GBps", req, 0, pos, kInf},
      {"io.host_to_device_efficiency", opt, 1, pos, 1},
      {"io.host_decode_GBps", opt, 2, pos, kInf},
      {"io.worker_start_ms", opt, 0, any, kInf},
      {"io.staging_node_GBps", opt, 0, any, kInf},
      {"io.staging_fixed_s", opt, 0, any, kInf},
      {"io.codecs.*.ratio", req, 0, pos, kInf},
      {"io.codecs.*.host_decode_GBps", opt, 0, any, kInf},
      {"io.codecs.*.device_decode_GBps", opt, 0, any, kInf},
      {"io.codecs.*.output_bytes_per_value", opt, 4, pos, 8},
      {"convergence.*.transfer_efficiency", req, 0, any, kInf},
      {"convergence.*.fusion_efficiency", opt, 0, any, kInf},
      {"convergence.*.pretrained_progress", opt, ConvergenceParams::kUnmeasured, any, 1},
      {"convergence.*.overtrain_epochs", opt, 1e9, any, kInf},
      {"convergence.*.overtrain_penalty", opt, 1, any, kInf},
      {"convergence.*.reference_global_batch", opt, 256, pos, kInf},
      {"convergence.*.critical_batch", opt, 0, any, kInf},
      {"convergence.*.epoch_factor", opt, 1, pos, kInf},
      {"convergence.*.seed_epochs_cv", opt, 0, any, 1},
      {"convergence.*.seed_epochs_ref", opt, 0, any, kInf},
      {"convergence.*.seed_switch_cv", opt, 0, any, 1},
      {"convergence.*.batch_tuning_cv", opt, 0, any, 1},
  };
  return list;
}

std::optional<double> parameter_lower_bound(const std::string& pattern) {
  for (const auto& e : entries())
    if (e.pattern == pattern) return e.lower;
  return std::nullopt;
}

std::vector<std::string> parameter_patterns() {
  std::vector<std::string> out;
  for (const auto& e : entries()) out.push_back(e.pattern);
  return out;
}

}  // namespace mrplan
