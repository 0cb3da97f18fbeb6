#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <tuple>

#include "calibrate/startup_fit.hpp"
#include "cli/inputs.hpp"
#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "cli/profile_file.hpp"
#include "cli/roofline_plot.hpp"
#include "calibrate/compute_fit.hpp"
#include "exec/compute_microbench.hpp"
#include "model/compute_cost.hpp"
#include "model/error_summary.hpp"
#include "model/profile_yaml.hpp"

namespace mrplan {

namespace {

struct ComputeArgs {
  std::string profile = "out/local-profile.yaml";
  std::string csv, steps_csv, plot, predict_from;
  int devices_per_node = 2;
  std::vector<std::string> workloads{"cosmoflow-mrt"};
  ComputeBenchOptions bench;
};

// The rounds after the first each do the same work: their spread is the machine's drift.
void print_rounds(const ComputeTimings& timings) {
  if (timings.round_s.empty()) return;
  const auto [lo, hi] = std::minmax_element(timings.round_s.begin(), timings.round_s.end());
  double total_s = 0;
  for (double t : timings.round_s) total_s += t;
  fmt::print("rounds after the first: {} in {:.0f} s, each took {:.2f} s median, {:.2f}-{:.2f} s (the same work each round: the machine's drift)\n",
             timings.round_s.size(), total_s, median(timings.round_s), *lo, *hi);
}

void print_compute_fit(const ComputeFit& fit) {
  fmt::print("fit over {} timings (ops forward and backward, optimizer steps), R^2 on log time = {:.4f}\n",
             fit.relative_residuals.size(), fit.r2);
  for (const auto& [fam, eff] : fit.compute.efficiency)
    fmt::print("  efficiency {:<16} {:.3f} +- {:.3f} of the matmul peak\n", fam, eff, fit.efficiency_std_error.at(fam));
  for (const auto& [k, v] : fit.compute.mem_efficiency_by_kind)
    fmt::print("  memory efficiency {:<9} {:.3f} +- {:.3f} of the copy bandwidth\n", k, v, fit.mem_efficiency_by_kind_std_error.at(k));
  for (const auto& [k, v] : fit.compute.backward_efficiency)
    fmt::print("  backward / forward {:<8} {:.3f} +- {:.3f}\n", k, v, fit.backward_efficiency_std_error.at(k));
  for (const auto& [fam, h] : fit.compute.half_work_flops_by_family)
    fmt::print("  half work {:<17} {:.3g} +- {:.2g} MFLOP per kernel\n", fam, h / 1e6, fit.half_work_std_error_flops_by_family.at(fam) / 1e6);
  fmt::print("  optimizer memory efficiency {:.3f} +- {:.3f} of the copy bandwidth, {:.1f} +- {:.1f} us per parameter tensor\n",
             fit.compute.mem_efficiency, fit.mem_efficiency_std_error, fit.compute.optimizer_tensor_s * 1e6,
             fit.optimizer_tensor_std_error_s * 1e6);
  fmt::print("  kernel overhead     {:.2f} +- {:.2f} us\n", fit.compute.kernel_overhead_s * 1e6, fit.kernel_overhead_std_error_s * 1e6);
  const auto sum = summarize_abs_errors(fit.relative_residuals);
  fmt::print("  per-op |error|: median {:.0f}%, p90 {:.0f}% (ops alone; whole steps are checked by validate)\n",
             100 * sum.median_abs, 100 * sum.p90_abs);
  for (const auto& [name, v, e] : {std::tuple{"forward ", fit.compute.step_forward, fit.step_forward_std_error},
                                   std::tuple{"backward", fit.compute.step_backward, fit.step_backward_std_error}})
    fmt::print("  whole-step {} / its ops {:.3f} +- {:.3f}, gradient sweep {:.1f} +- {:.1f} bytes per parameter, {:+.1f} +- {:.1f} us per op "
               "({} whole steps)\n", name, v.factor, e.factor, v.bytes_per_param, e.bytes_per_param, v.per_op_s * 1e6, e.per_op_s * 1e6,
               fit.step_factor_ratios.size());
  fmt::print("  step time spread     {:.3f} +- {:.3f} of a step (median relative std. dev.; ranks wait for the slowest)\n",
             fit.compute.step_time_cv, fit.step_time_cv_std_error);
  if (fit.compute.inference_factor > 0)
    fmt::print("  validation forward   {:.3f} +- {:.3f} of the whole-step forward (eval mode, no autograd)\n", fit.compute.inference_factor,
               fit.inference_factor_std_error);
  if (fit.captured_steps > 0)
    fmt::print("  captured step        {:.2f} +- {:.2f} us between kernels in place of their launches ({} steps captured as CUDA graphs)\n",
               fit.compute.captured_kernel_gap_s * 1e6, fit.captured_kernel_gap_std_error_s * 1e6, fit.captured_steps);
}

// Per configuration: the sum over its ops alone and the whole step (and its phases) measured,
// beside what `compute` (this fit's, or a profile's) predicts for each.
void print_step_table(const std::vector<OpTimingSample>& samples, const ComputeTimings& timings, const ComputeParams& compute) {
  // per configuration: the sum over ops alone, and the whole step the simulator predicts from it
  std::map<std::string, std::pair<double, LayerTable>> per_config;
  for (const auto& s : samples) {
    per_config[s.context].first += s.fwd_s + s.bwd_s;
    per_config[s.context].second.layers.push_back(s.layer);
  }
  auto sum_s = [](const std::vector<LayerTime>& times) {
    double s = 0;
    for (const auto& t : times) s += t.fwd_s + t.bwd_s;
    return s;
  };
  const bool captured = std::any_of(timings.whole_steps.begin(), timings.whole_steps.end(), [](const WholeStepTiming& w) { return w.captured_s > 0; });
  fmt::print("{:<36} {:>10} {:>10} {:>6}  {:>10} {:>10} {:>6}  {:>14} {:>14} {:>14} {:>14}{}\n", "configuration", "ops_ms", "model_ms", "error",
             "step_ms", "model_ms", "error", "forward_ms", "backward_ms", "optimizer_ms", "inference_ms", captured ? "    captured_ms" : "");
  for (const auto& w : timings.whole_steps) {
    const auto& [ops_s, table] = per_config.at(w.context);
    const double model_ops_s = sum_s(layer_times(table, compute, false));
    double model_fwd_s = 0, model_bwd_s = 0;
    for (const auto& t : whole_step_layer_times(table, compute, false, 1.0)) model_fwd_s += t.fwd_s, model_bwd_s += t.bwd_s;
    const double model_opt_s = optimizer_step_s(compute, w.params, w.param_tensors, w.optimizer);
    const double model_step_s = model_fwd_s + model_bwd_s + model_opt_s;
    auto phase = [](double measured_s, double model_s) {  // "12.34 (+5%)"
      return fmt::format("{:.2f} ({:+.0f}%)", measured_s * 1e3, 100 * (model_s - measured_s) / measured_s);
    };
    // the step captured as one CUDA graph, as the simulator prices a plan with steps: captured
    const double model_captured_s = captured_step_s(table, compute, false, w.optimizer);
    fmt::print("{:<36} {:>10.2f} {:>10.2f} {:>+5.0f}%  {:>10.2f} {:>10.2f} {:>+5.0f}%  {:>14} {:>14} {:>14} {:>14}{}\n", w.context, ops_s * 1e3,
               model_ops_s * 1e3, 100 * (model_ops_s - ops_s) / ops_s, w.seconds * 1e3, model_step_s * 1e3,
               100 * (model_step_s - w.seconds) / w.seconds, phase(w.forward_s, model_fwd_s), phase(w.backward_s, model_bwd_s),
               phase(w.optimizer_s, model_opt_s), w.inference_s > 0 ? phase(w.inference_s, model_fwd_s * compute.inference_factor) : "-",
               !captured ? "" : w.captured_s > 0 ? fmt::format(" {:>14}", phase(w.captured_s, model_captured_s)) : fmt::format(" {:>14}", "-"));
  }
}

void print_first_touch(const FirstTouchFit& first_touch, const ComputeTimings& timings) {
  if (first_touch.params.bandwidth_Bps > 0) {
    fmt::print("start-up (a fresh network's first two steps beyond two typical ones, on a heap given back to the kernel):\n");
    fmt::print("  working set {:.2f} +- {:.2f} x activation bytes + {:.2f} +- {:.2f} x parameter bytes, first touch at {:.2f} +- {:.2f} GB/s\n",
               first_touch.params.activation_factor, first_touch.activation_factor_std_error, first_touch.params.param_factor,
               first_touch.param_factor_std_error, first_touch.params.bandwidth_Bps / 1e9, first_touch.bandwidth_std_error_Bps / 1e9);
    size_t i = 0;
    for (const auto& w : timings.whole_steps) {
      if (!(w.first_touch_bytes > 0)) continue;
      fmt::print("  {:<36} touched {:7.1f} MB  start-up {:7.1f} ms  model {:7.1f} ms\n", w.context, w.first_touch_bytes / 1e6,
                 first_touch.startup_s.at(i) * 1e3, first_touch.modelled_startup_s.at(i) * 1e3);
      ++i;
    }
  } else {
    fmt::print("start-up: not fitted ({} timings with page faults; GPUs are not measured), none predicted\n", first_touch.timings);
  }
}

void write_samples_csv(const std::string& path, const std::vector<OpTimingSample>& samples) {
  std::ofstream f(path);
  f << "configuration,op,family,fwd_flops,bytes,fwd_s,bwd_s\n";
  for (const auto& s : samples)
    f << fmt::format("{},{},{},{},{},{},{}\n", s.context, s.layer.name, layer_family(s.layer), s.layer.fwd_flops,
                     s.layer.bytes_read + s.layer.bytes_written, s.fwd_s, s.bwd_s);
}

void write_steps_csv(const std::string& path, const std::vector<WholeStepTiming>& steps) {
  std::ofstream f(path);
  f << "configuration,optimizer,params,param_tensors,step_s,forward_s,backward_s,optimizer_s,inference_s,spread,captured_s\n";
  for (const auto& w : steps)
    f << fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", w.context, to_string(w.optimizer), w.params, w.param_tensors, w.seconds, w.forward_s,
                     w.backward_s, w.optimizer_s, w.inference_s, w.spread, w.captured_s);
}

void calibrate_compute(ComputeArgs a) {
  std::optional<MachineProfile> before;  // read first: a bad file is refused before minutes of timing
  if (!a.predict_from.empty()) before = load_profile_file(a.predict_from);
  a.bench.workloads.clear();
  for (const auto& w : a.workloads) a.bench.workloads.push_back(parse_workload_variant(w));
  const auto peaks = measure_device_peaks(a.bench);
  fmt::print("device peaks ({} threads): {:.1f} GFLOP/s ({}), {:.2f} GB/s ({})\n", a.bench.threads,
             peaks.matmul_flops_per_s / 1e9, peaks.matmul_shape, peaks.copy_Bps / 1e9, peaks.copy_shape);
  const auto timings = time_workload_ops(a.bench, [](int done, int total) {
    print_progress("timing ops and steps", static_cast<size_t>(done), static_cast<size_t>(total), "(configurations x rounds)");
  });
  print_rounds(timings);
  ComputeParams roofs;
  roofs.peak_fp32_flops = peaks.matmul_flops_per_s;
  roofs.mem_bandwidth_Bps = peaks.copy_Bps;
  const auto& samples = timings.ops;
  // the optimizer as the whole steps ran it (fit_step_phases then adds its cost per tensor)
  std::vector<OptimizerTiming> optimizer_steps;
  for (const auto& w : timings.whole_steps) optimizer_steps.push_back({w.optimizer, w.params, w.optimizer_s, w.context, w.param_tensors});
  auto fit = fit_compute(samples, optimizer_steps, roofs);
  fit_step_phases(fit, samples, timings.whole_steps);
  fit_captured_steps(fit, samples, timings.whole_steps);
  print_compute_fit(fit);
  print_step_table(samples, timings, fit.compute);
  if (before) {
    fmt::print("the same steps as {} predicts them (its compute parameters, before this fit):\n", a.predict_from);
    print_step_table(samples, timings, before->compute);
  }
  const auto first_touch = fit_first_touch(timings.whole_steps);
  print_first_touch(first_touch, timings);
  if (!a.csv.empty()) write_samples_csv(a.csv, samples);
  if (!a.steps_csv.empty()) write_steps_csv(a.steps_csv, timings.whole_steps);
  if (!a.plot.empty()) roofline_plot(samples, fit.compute, a.plot);
  const auto source = fmt::format("calibrate compute: {} ops of {}, resolutions {}, batches {}, {} thread(s), {}, {} rounds",
                                  samples.size(), fmt::join(a.workloads, " and "), fmt::join(a.bench.resolutions, "/"),
                                  fmt::join(a.bench.batches, "/"), a.bench.threads, to_string(a.bench.device), timings.round_s.size() + 1);
  update_profile(a.profile, a.devices_per_node, [&](MachineProfile& p) {
    apply_compute_fit(p, fit, source);
    apply_first_touch_fit(p, first_touch, source);
  });
}

}  // namespace

void register_calibrate_compute(CLI::App& cal) {
  auto* c = cal.add_subcommand("compute", "Time every op of workloads alone; fit the roofline's efficiencies and overheads");
  auto a = std::make_shared<ComputeArgs>();
  c->add_option("--profile", a->profile, "profile YAML to update (created if missing)")->capture_default_str();
  c->add_option("--workload", a->workloads, "built-in workloads whose ops are timed and fitted together: name[:size[:width]]")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--resolutions", a->bench.resolutions, "coarsening factors to time")->delimiter(',')->capture_default_str();
  c->add_option("--batches", a->bench.batches, "local batch sizes to time")->delimiter(',')->capture_default_str();
  c->add_option("--threads", a->bench.threads, "intra-op threads, as each rank of the runs gets")->capture_default_str();
  c->add_option("--repeats", a->bench.repeats, "rounds, each timing every op and a whole step of every configuration once (median over rounds)")->capture_default_str();
  c->add_option("--min-seconds", a->bench.min_seconds,
                 "keep timing rounds until this long has passed, so that the medians span the machine's slow and fast spells")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  add_optimizer_option(c, a->bench.optimizer, "optimizer whose step is timed");
  add_device_option(c, a->bench.device, "cpu or cuda");
  c->add_option("--devices-per-node", a->devices_per_node, "ranks per node, for a new profile")->capture_default_str();
  c->add_option("--csv", a->csv, "write every op timing here");
  c->add_option("--steps-csv", a->steps_csv, "write every whole step's median and phases here");
  c->add_option("--predict-from", a->predict_from,
                "a profile whose compute parameters also predict the steps timed (e.g. one composed from the GPU's public numbers), "
                "printed beside this fit's");
  c->add_option("--plot", a->plot, "roofline PNG");
  c->callback([a] { calibrate_compute(*a); });
}

}  // namespace mrplan
