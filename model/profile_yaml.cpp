#include "model/profile_yaml.hpp"

#include <fmt/format.h>

#include "model/errors.hpp"
#include "model/profile_parameters.hpp"
#include "model/yaml_fields.hpp"

namespace mrplan {

namespace {

LinkLevel read_link(const YamlFields& f) {
  f.only({"alpha_s", "bandwidth_GBps"});
  return {f.non_negative("alpha_s", 5e-6), f.positive("bandwidth_GBps") * 1e9};
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

MachineProfile read_profile(const YAML::Node& root, const std::string& file) {
  YamlFields f(root, file, "");
  f.only({"name", "description", "gpus_per_node", "whole_nodes", "gpu_memory_GB", "host_memory_GB", "compute", "node_sharing",
          "comm", "io", "convergence", "fitted"});
  MachineProfile m;
  m.name = f.text("name");
  m.description = f.text("description", "");
  m.gpus_per_node = static_cast<int>(f.integer("gpus_per_node"));
  if (m.gpus_per_node < 1) fail_input(file, "gpus_per_node", "must be >= 1");
  m.whole_nodes = f.boolean("whole_nodes", false);
  m.gpu_memory_bytes = f.positive("gpu_memory_GB") * 1e9;
  m.host_memory_bytes = f.positive("host_memory_GB") * 1e9;

  auto c = f.child("compute");
  for (const auto& [old_key, new_key] : {std::pair{"node_sharing_slowdown", "slowdown"}, std::pair{"comm_steal_fraction", "comm_steal_fraction"}})
    if (c.has(old_key))
      fail_input(file, fmt::format("compute.{}", old_key),
                 fmt::format("this parameter now lives in its own section: move it to node_sharing.{} (or rerun calibrate sharing)", new_key));
  c.only({"peak_fp32_TFLOPS", "peak_fp16_TFLOPS", "mem_bandwidth_GBps", "efficiency", "half_work_GFLOP",
          "half_work_GFLOP_by_family", "mem_efficiency", "mem_efficiency_by_kind", "backward_efficiency", "kernel_overhead_us", "optimizer_tensor_us", "step_forward", "step_backward", "step_factor", "step_bytes_per_param", "step_time_cv", "first_touch", "inference_factor", "run_speed_cv"});
  m.compute.peak_fp32_flops = c.positive("peak_fp32_TFLOPS") * 1e12;
  m.compute.peak_fp16_flops = c.positive("peak_fp16_TFLOPS", m.compute.peak_fp32_flops / 1e12) * 1e12;
  m.compute.mem_bandwidth_Bps = c.positive("mem_bandwidth_GBps") * 1e9;
  // fractions of a measured peak; above 1 where an op beats the largest matmul or copy (caches)
  auto read_map = [&](const char* key, std::map<std::string, double>& out, double max) {
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
      if (!(v > 0 && v <= max))
        fail_input(file, fmt::format("compute.{}.{}", key, k), fmt::format("expected 0 < value <= {}, got {}", max, v));
      out[k] = v;
    }
  };
  read_map("efficiency", m.compute.efficiency, 10);
  read_map("mem_efficiency_by_kind", m.compute.mem_efficiency_by_kind, 10);
  // a CPU's max-pool backward (scatter into a zeroed gradient) can beat its forward tenfold
  read_map("backward_efficiency", m.compute.backward_efficiency, 100);
  if (c.has("half_work_GFLOP_by_family"))
    for (const auto& kv : c.node()["half_work_GFLOP_by_family"]) {
      const auto k = kv.first.as<std::string>();
      const double v = kv.second.as<double>(-1);
      if (!(v >= 0)) fail_input(file, "compute.half_work_GFLOP_by_family." + k, "expected a number >= 0");
      m.compute.half_work_flops_by_family[k] = v * 1e9;
    }
  m.compute.half_work_flops = c.non_negative("half_work_GFLOP", 1.0) * 1e9;
  m.compute.mem_efficiency = c.positive("mem_efficiency", 0.7);
  m.compute.kernel_overhead_s = c.non_negative("kernel_overhead_us", 5.0) * 1e-6;
  m.compute.optimizer_tensor_s = c.non_negative("optimizer_tensor_us", 0.0) * 1e-6;
  // profiles fitted before the phases were split: one factor for both, the sweep counted with backward
  m.compute.step_forward.factor = m.compute.step_backward.factor = c.positive_at_most("step_factor", 1.0, 10);
  m.compute.step_backward.bytes_per_param = c.non_negative("step_bytes_per_param", 0.0);
  for (auto [key, phase] : {std::pair{"step_forward", &m.compute.step_forward}, std::pair{"step_backward", &m.compute.step_backward}}) {
    if (!c.has(key)) continue;
    if (c.has("step_factor") || c.has("step_bytes_per_param"))
      fail_input(file, fmt::format("compute.{}", key), "give either step_factor/step_bytes_per_param or step_forward/step_backward, not both");
    auto s = c.child(key);
    s.only({"factor", "bytes_per_param"});
    phase->factor = s.positive_at_most("factor", 1.0, 10);
    phase->bytes_per_param = s.non_negative("bytes_per_param", 0.0);
  }
  m.compute.step_time_cv = c.non_negative_at_most("step_time_cv", 0.0, 1);
  m.compute.inference_factor = c.non_negative_at_most("inference_factor", 0.0, 10);
  m.compute.run_speed_cv = c.non_negative_at_most("run_speed_cv", 0.0, 1);
  if (c.has("first_touch")) {
    auto t = c.child("first_touch");
    t.only({"activation_factor", "param_factor", "bandwidth_GBps"});
    m.compute.first_touch.activation_factor = t.non_negative("activation_factor", 0.0);
    m.compute.first_touch.param_factor = t.non_negative("param_factor", 0.0);
    m.compute.first_touch.bandwidth_Bps = t.positive("bandwidth_GBps") * 1e9;
  }

  if (f.has("node_sharing")) {
    auto ns = f.child("node_sharing");
    ns.only({"slowdown", "comm_steal_fraction", "step_time_cv"});
    m.node_sharing.slowdown = ns.positive_at_most("slowdown", 1.0, 10);
    m.node_sharing.comm_steal_fraction = ns.non_negative_at_most("comm_steal_fraction", 0.0, 10);
    m.node_sharing.step_time_cv = ns.non_negative_at_most("step_time_cv", 0.0, 1);
  }

  auto cm = f.child("comm");
  cm.only({"intra_node", "inter_node", "bandwidth_efficiency", "call_overhead_us"});
  m.comm.intra_node = read_link(cm.child("intra_node"));
  m.comm.inter_node = read_link(cm.child("inter_node"));
  m.comm.bandwidth_efficiency = cm.positive("bandwidth_efficiency", 1.0);
  if (m.comm.bandwidth_efficiency > 1) fail_input(file, "comm.bandwidth_efficiency", "expected a fraction <= 1");
  m.comm.call_overhead_s = cm.non_negative("call_overhead_us", 0.0) * 1e-6;

  auto io = f.child("io");
  io.only({"pfs", "nvme_bandwidth_GBps", "nvme_capacity_GB", "host_to_device_GBps", "host_to_device_efficiency", "host_decode_GBps",
           "host_memcpy_GBps", "page_cache_fraction", "prefetch_depth"});
  auto pfs = io.child("pfs");
  pfs.only({"aggregate_bandwidth_GBps", "per_node_bandwidth_GBps", "per_file_latency_ms"});
  m.io.pfs.aggregate_bandwidth_Bps = pfs.positive("aggregate_bandwidth_GBps") * 1e9;
  m.io.pfs.per_node_bandwidth_Bps = pfs.positive("per_node_bandwidth_GBps") * 1e9;
  m.io.pfs.per_file_latency_s = pfs.non_negative("per_file_latency_ms", 1.0) * 1e-3;
  m.io.nvme_bandwidth_Bps = io.non_negative("nvme_bandwidth_GBps", 0) * 1e9;
  m.io.nvme_capacity_bytes = io.non_negative("nvme_capacity_GB", 0) * 1e9;
  m.io.host_to_device_Bps = io.positive("host_to_device_GBps") * 1e9;
  m.io.host_to_device_efficiency = io.positive("host_to_device_efficiency", 1.0);
  if (m.io.host_to_device_efficiency > 1) fail_input(file, "io.host_to_device_efficiency", "expected a fraction <= 1");
  m.io.host_decode_Bps = io.positive("host_decode_GBps", 2.0) * 1e9;
  m.io.host_memcpy_Bps = io.positive("host_memcpy_GBps", 20.0) * 1e9;
  m.io.page_cache_fraction = io.non_negative("page_cache_fraction", 0.5);
  m.io.prefetch_depth = static_cast<int>(io.integer("prefetch_depth", 2));

  if (f.has("convergence")) {
    for (const auto& kv : f.node()["convergence"]) {
      const auto w = kv.first.as<std::string>();
      YamlFields cv(kv.second, file, "convergence." + w);
      cv.only({"dense_metric", "coarse_loss", "coarse_metric", "transfer_efficiency", "fusion_efficiency", "overtrain_epochs",
               "overtrain_penalty", "reference_global_batch", "critical_batch", "seed_epochs_cv", "seed_switch_cv",
               "coarse_resolution"});
      ConvergenceParams p;
      p.dense_metric = read_curve(cv.child("dense_metric"));
      p.coarse_loss = read_curve(cv.child("coarse_loss"));
      if (cv.has("coarse_metric")) p.coarse_metric = read_curve(cv.child("coarse_metric"));
      p.transfer_efficiency = cv.number("transfer_efficiency");
      p.fusion_efficiency = cv.number("fusion_efficiency", 0.0);
      p.overtrain_epochs = cv.non_negative("overtrain_epochs", 1e9);
      p.overtrain_penalty = cv.non_negative("overtrain_penalty", 1.0);
      p.reference_global_batch = cv.positive("reference_global_batch", 256);
      p.critical_batch = cv.non_negative("critical_batch", 0);
      p.coarse_resolution = static_cast<int>(cv.integer("coarse_resolution", 2));
      if (p.coarse_resolution < 2) fail_input(file, "convergence." + w + ".coarse_resolution", "expected a coarsening factor >= 2");
      p.seed_epochs_cv = cv.non_negative_at_most("seed_epochs_cv", 0, 1);
      p.seed_switch_cv = cv.non_negative_at_most("seed_switch_cv", 0, 1);
      m.convergence[w] = p;
    }
  }
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
  return m;
}

void curve_out(YAML::Emitter& e, const char* key, const LearningCurve& c) {
  e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "form" << YAML::Value << (c.form == CurveForm::power ? "power" : "exp")
    << YAML::Key << "floor" << YAML::Value << c.floor << YAML::Key << "amplitude" << YAML::Value << c.amplitude
    << YAML::Key << "scale" << YAML::Value << c.scale << YAML::EndMap;
}

}  // namespace

MachineProfile profile_from_yaml_text(const std::string& text, const std::string& file) {
  return read_profile(parse_yaml_text(text, file), file);
}

MachineProfile load_profile_file(const std::string& path) { return read_profile(load_yaml_file(path), path); }

std::string profile_to_yaml(const MachineProfile& m) {
  YAML::Emitter e;
  e.SetDoublePrecision(8);
  auto kv = [&](const char* k, auto v) { e << YAML::Key << k << YAML::Value << v; };
  e << YAML::BeginMap;
  kv("name", m.name);
  kv("description", m.description);
  kv("gpus_per_node", m.gpus_per_node);
  kv("whole_nodes", m.whole_nodes);
  kv("gpu_memory_GB", m.gpu_memory_bytes / 1e9);
  kv("host_memory_GB", m.host_memory_bytes / 1e9);
  e << YAML::Key << "compute" << YAML::Value << YAML::BeginMap;
  kv("peak_fp32_TFLOPS", m.compute.peak_fp32_flops / 1e12);
  kv("peak_fp16_TFLOPS", m.compute.peak_fp16_flops / 1e12);
  kv("mem_bandwidth_GBps", m.compute.mem_bandwidth_Bps / 1e9);
  auto write_map = [&](const char* key, const std::map<std::string, double>& values) {
    e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [k, v] : values) kv(k.c_str(), v);
    e << YAML::EndMap;
  };
  write_map("efficiency", m.compute.efficiency);
  kv("half_work_GFLOP", m.compute.half_work_flops / 1e9);
  if (!m.compute.half_work_flops_by_family.empty()) {
    std::map<std::string, double> gflop;
    for (const auto& [k, v] : m.compute.half_work_flops_by_family) gflop[k] = v / 1e9;
    write_map("half_work_GFLOP_by_family", gflop);
  }
  kv("mem_efficiency", m.compute.mem_efficiency);
  if (!m.compute.mem_efficiency_by_kind.empty()) write_map("mem_efficiency_by_kind", m.compute.mem_efficiency_by_kind);
  if (!m.compute.backward_efficiency.empty()) write_map("backward_efficiency", m.compute.backward_efficiency);
  kv("kernel_overhead_us", m.compute.kernel_overhead_s * 1e6);
  kv("optimizer_tensor_us", m.compute.optimizer_tensor_s * 1e6);
  for (auto [key, phase] : {std::pair{"step_forward", &m.compute.step_forward}, std::pair{"step_backward", &m.compute.step_backward}})
    if (phase->factor != 1.0 || phase->bytes_per_param != 0) {
      e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
      kv("factor", phase->factor);
      kv("bytes_per_param", phase->bytes_per_param);
      e << YAML::EndMap;
    }
  if (m.compute.step_time_cv != 0) kv("step_time_cv", m.compute.step_time_cv);
  if (m.compute.inference_factor != 0) kv("inference_factor", m.compute.inference_factor);
  if (m.compute.run_speed_cv != 0) kv("run_speed_cv", m.compute.run_speed_cv);
  if (m.compute.first_touch.bandwidth_Bps > 0) {
    e << YAML::Key << "first_touch" << YAML::Value << YAML::Flow << YAML::BeginMap;
    kv("activation_factor", m.compute.first_touch.activation_factor);
    kv("param_factor", m.compute.first_touch.param_factor);
    kv("bandwidth_GBps", m.compute.first_touch.bandwidth_Bps / 1e9);
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
  if (m.node_sharing.slowdown != 1 || m.node_sharing.comm_steal_fraction != 0 || m.node_sharing.step_time_cv != 0) {
    e << YAML::Key << "node_sharing" << YAML::Value << YAML::Flow << YAML::BeginMap;
    kv("slowdown", m.node_sharing.slowdown);
    kv("comm_steal_fraction", m.node_sharing.comm_steal_fraction);
    if (m.node_sharing.step_time_cv != 0) kv("step_time_cv", m.node_sharing.step_time_cv);
    e << YAML::EndMap;
  }
  e << YAML::Key << "comm" << YAML::Value << YAML::BeginMap;
  for (auto [name, l] : {std::pair{"intra_node", m.comm.intra_node}, std::pair{"inter_node", m.comm.inter_node}}) {
    e << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginMap;
    kv("alpha_s", l.alpha_s);
    kv("bandwidth_GBps", l.bandwidth_Bps / 1e9);
    e << YAML::EndMap;
  }
  kv("bandwidth_efficiency", m.comm.bandwidth_efficiency);
  kv("call_overhead_us", m.comm.call_overhead_s * 1e6);
  e << YAML::EndMap;
  e << YAML::Key << "io" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "pfs" << YAML::Value << YAML::Flow << YAML::BeginMap;
  kv("aggregate_bandwidth_GBps", m.io.pfs.aggregate_bandwidth_Bps / 1e9);
  kv("per_node_bandwidth_GBps", m.io.pfs.per_node_bandwidth_Bps / 1e9);
  kv("per_file_latency_ms", m.io.pfs.per_file_latency_s * 1e3);
  e << YAML::EndMap;
  kv("nvme_bandwidth_GBps", m.io.nvme_bandwidth_Bps / 1e9);
  kv("nvme_capacity_GB", m.io.nvme_capacity_bytes / 1e9);
  kv("host_to_device_GBps", m.io.host_to_device_Bps / 1e9);
  kv("host_to_device_efficiency", m.io.host_to_device_efficiency);
  kv("host_decode_GBps", m.io.host_decode_Bps / 1e9);
  kv("host_memcpy_GBps", m.io.host_memcpy_Bps / 1e9);
  kv("page_cache_fraction", m.io.page_cache_fraction);
  kv("prefetch_depth", m.io.prefetch_depth);
  e << YAML::EndMap;
  if (!m.convergence.empty()) {
    e << YAML::Key << "convergence" << YAML::Value << YAML::BeginMap;
    for (const auto& [w, p] : m.convergence) {
      e << YAML::Key << w << YAML::Value << YAML::BeginMap;
      curve_out(e, "dense_metric", p.dense_metric);
      curve_out(e, "coarse_loss", p.coarse_loss);
      curve_out(e, "coarse_metric", p.coarse_metric);
      kv("transfer_efficiency", p.transfer_efficiency);
      kv("fusion_efficiency", p.fusion_efficiency);
      kv("overtrain_epochs", p.overtrain_epochs);
      kv("overtrain_penalty", p.overtrain_penalty);
      kv("reference_global_batch", p.reference_global_batch);
      kv("critical_batch", p.critical_batch);
      kv("coarse_resolution", p.coarse_resolution);
      if (p.seed_epochs_cv > 0) kv("seed_epochs_cv", p.seed_epochs_cv);
      if (p.seed_switch_cv > 0) kv("seed_switch_cv", p.seed_switch_cv);
      e << YAML::EndMap;
    }
    e << YAML::EndMap;
  }
  e << YAML::Key << "fitted" << YAML::Value << YAML::BeginSeq;
  for (const auto& p : m.fitted) {
    e << YAML::Flow << YAML::BeginMap;
    kv("key", p.key);
    kv("value", p.value);
    kv("std_error", p.std_error);
    kv("source", p.source);
    e << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace mrplan
