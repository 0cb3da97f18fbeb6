#include "exec/compute_microbench.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "exec/host_tuning.hpp"
#include "exec/lamb.hpp"
#include "exec/spec_network.hpp"
#include "model/error_summary.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {

torch::Device bench_device(const ComputeBenchOptions& o) {
  keep_large_allocations_mapped();
  set_intra_op_threads(std::max(1, o.threads));
  if (o.device == "cpu") return torch::Device(torch::kCPU);
  if (o.device != "cuda") fail_input("", "--device", fmt::format("'{}' is not a device (cpu, cuda)", o.device));
  if (!torch::cuda::is_available()) fail_input("", "--device", "cuda was asked for but LibTorch sees no GPU (or is a CPU build)");
  return torch::Device(torch::kCUDA, 0);
}

// Each of `repeats` runs of f after one untimed warm-up, device work included.
std::vector<double> repeat_seconds(const torch::Device& dev, int repeats, const std::function<void()>& f) {
  std::vector<double> out;
  for (int r = 0; r <= repeats; ++r) {
    if (dev.is_cuda()) torch::cuda::synchronize(dev.index());
    const auto t0 = std::chrono::steady_clock::now();
    f();
    if (dev.is_cuda()) torch::cuda::synchronize(dev.index());
    if (r > 0) out.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return out;
}

// Best of the repeats: the achievable rate, not the typical one.
double best_seconds(const torch::Device& dev, int repeats, const std::function<void()>& f) {
  const auto t = repeat_seconds(dev, repeats, f);
  return *std::min_element(t.begin(), t.end());
}

// Median of the repeats (the typical run) and their standard deviation relative to the mean.
std::pair<double, double> median_and_spread(const std::vector<double>& t) {
  double mean = 0, var = 0;
  for (double v : t) mean += v / static_cast<double>(t.size());
  for (double v : t) var += (v - mean) * (v - mean) / std::max<double>(1, static_cast<double>(t.size()) - 1);
  return {median(t), std::sqrt(var) / mean};
}

[[noreturn]] void cannot_train(const std::string& what, const c10::Error& e) {  // e.g. batch norm over one value per channel
  fail_input("", "--batches", fmt::format("{} cannot train: {}", what, e.msg().substr(0, e.msg().find('\n'))));
}

}  // namespace

DevicePeaks measure_device_peaks(const ComputeBenchOptions& o) {
  const auto dev = bench_device(o);
  torch::NoGradGuard ng;
  DevicePeaks p;
  const int64_t n = dev.is_cuda() ? 8192 : 2048;
  auto a = torch::randn({n, n}, torch::TensorOptions().device(dev));
  auto b = torch::randn({n, n}, torch::TensorOptions().device(dev));
  auto c = torch::empty({n, n}, torch::TensorOptions().device(dev));
  p.matmul_flops_per_s = 2.0 * n * n * n / best_seconds(dev, o.repeats, [&] { torch::mm_out(c, a, b); });
  p.matmul_shape = fmt::format("{0}x{0} fp32 matmul", n);
  const int64_t m = int64_t{64} << 20;  // 256 MiB each way: well past any cache
  auto x = torch::empty({m}, torch::TensorOptions().device(dev)).fill_(1.0f);
  auto y = torch::empty({m}, torch::TensorOptions().device(dev)).fill_(0.0f);
  p.copy_Bps = 2.0 * 4.0 * m / best_seconds(dev, o.repeats, [&] { y.copy_(x); });
  p.copy_shape = fmt::format("{} MiB fp32 copy", 4 * m >> 20);
  return p;
}

WorkloadVariant parse_workload_variant(const std::string& text) {
  WorkloadVariant v;
  const auto c1 = text.find(':');
  v.name = text.substr(0, c1);
  try {
    if (c1 != std::string::npos) {
      const auto c2 = text.find(':', c1 + 1);
      v.options.size = std::stoll(text.substr(c1 + 1, c2 - c1 - 1));
      if (c2 != std::string::npos) v.options.width = std::stod(text.substr(c2 + 1));
    }
  } catch (const std::exception&) {
    fail_input("", "--workload", fmt::format("'{}': expected name[:size[:width]], e.g. cosmoflow-mrt:32:0.25", text));
  }
  builtin_workload(v.name, v.options);  // refuses unknown names and bad options now, not mid-run
  return v;
}

ComputeTimings time_workload_ops(const ComputeBenchOptions& o, const std::function<void(int, int)>& progress) {
  const auto dev = bench_device(o);
  if (o.optimizer != "adam" && o.optimizer != "sgd" && o.optimizer != "lamb")
    fail_input("", "--optimizer", fmt::format("'{}' is not an optimizer mrplan times (adam, sgd, lamb)", o.optimizer));
  ComputeTimings out;
  const int total = static_cast<int>(o.workloads.size() * o.resolutions.size() * o.batches.size());
  int done = 0;
  for (const auto& w : o.workloads) {
    const auto spec = builtin_workload(w.name, w.options);
    for (int res : o.resolutions) {
      const auto spatial = coarsened_spatial(spec, res);
      const int64_t up = spec.coarse_upsamples_output ? res : 1;
      SpecNet net(spec, spatial, up);
      net->to(dev);
      net->train();
      auto input = [&](int64_t b) {
        std::vector<int64_t> shape{b, spec.input_channels};
        shape.insert(shape.end(), spatial.begin(), spatial.end());
        return torch::randn(shape, torch::TensorOptions().device(dev));
      };
      // the optimizer, its state allocated by a first step on real gradients
      try {
        net->forward(input(o.batches.back())).sum().backward();
      } catch (const c10::Error& e) {
        cannot_train(fmt::format("{} {} batch {}", spec.name, fmt::join(spatial, "x"), o.batches.back()), e);
      }
      std::unique_ptr<torch::optim::Optimizer> opt;
      if (o.optimizer == "adam") opt = std::make_unique<torch::optim::Adam>(net->parameters(), torch::optim::AdamOptions(1e-4));
      else if (o.optimizer == "lamb") opt = std::make_unique<Lamb>(net->parameters(), LambOptions(1e-4));
      else opt = std::make_unique<torch::optim::SGD>(net->parameters(), torch::optim::SGDOptions(1e-4));
      opt->step();
      for (int b : o.batches) {
        const auto table = resolve(spec, spatial, b, 4.0, up);
        const auto x = input(b);
        const std::string ctx = fmt::format("{} {} batch {}", spec.name, fmt::join(spatial, "x"), b);
        std::vector<OpTiming> times;
        try {
          times = net->time_ops(x, o.repeats);
        } catch (const c10::Error& e) {
          cannot_train(ctx, e);
        }
        for (size_t i = 0; i < times.size(); ++i) out.ops.push_back({table.layers.at(i), times[i].fwd_s, times[i].bwd_s, ctx});
        // the same configuration as a whole training step, as the trainer runs it (median: the typical step)
        const auto y = torch::zeros_like(net->forward(x)).detach();
        const auto [step_s, spread] = median_and_spread(repeat_seconds(dev, o.repeats, [&] {
          opt->zero_grad();
          torch::mse_loss(net->forward(x), y).backward();
          opt->step();
        }));
        out.whole_steps.push_back({ctx, o.optimizer, net->table().total_params(), step_s, spread});
        if (progress) progress(++done, total);
      }
      // the optimizer step alone
      const double opt_s = median_and_spread(repeat_seconds(dev, o.repeats, [&] { opt->step(); })).first;
      out.steps.push_back({o.optimizer, net->table().total_params(), opt_s,
                           fmt::format("{} {} {} step", spec.name, fmt::join(spatial, "x"), o.optimizer)});
    }
  }
  return out;
}

}  // namespace mrplan
