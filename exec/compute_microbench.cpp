#include "exec/compute_microbench.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "exec/allreduce_microbench.hpp"
#include "exec/communicator.hpp"
#include "exec/grad_sync.hpp"
#include "exec/host_tuning.hpp"
#include "exec/lamb.hpp"
#include "exec/spec_network.hpp"
#include "exec/step_clock.hpp"
#include "model/error_summary.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {

torch::Device bench_device(const ComputeBenchOptions& o, int gpu = 0) {
  keep_large_allocations_mapped();
  set_intra_op_threads(std::max(1, o.threads));
  if (o.device == "cpu") return torch::Device(torch::kCPU);
  if (o.device != "cuda") fail_input("", "--device", fmt::format("'{}' is not a device (cpu, cuda)", o.device));
  if (!torch::cuda::is_available()) fail_input("", "--device", "cuda was asked for but LibTorch sees no GPU (or is a CPU build)");
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(gpu));
}

void check_optimizer(const std::string& name) {
  if (name != "adam" && name != "sgd" && name != "lamb")
    fail_input("", "--optimizer", fmt::format("'{}' is not an optimizer mrplan times (adam, sgd, lamb)", name));
}

std::unique_ptr<torch::optim::Optimizer> bench_optimizer(const std::string& name, const std::vector<torch::Tensor>& params) {
  if (name == "adam") return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(1e-4));
  if (name == "lamb") return std::make_unique<Lamb>(params, LambOptions(1e-4));
  return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(1e-4));
}

torch::Tensor random_input(const NetworkSpec& spec, const std::vector<int64_t>& spatial, int64_t batch, const torch::Device& dev) {
  std::vector<int64_t> shape{batch, spec.input_channels};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  return torch::randn(shape, torch::TensorOptions().device(dev));
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

// Training steps split as the trainer splits them (exec/trainer.cpp), on the same clock: zero_grad,
// forward and loss | backward | wait for the allreduces (none without `sync`) | optimizer. The first
// step warms up (the optimizer's state, autograd's buffers) and is not returned.
struct StepSplit {
  double forward_s = 0, backward_s = 0, wait_s = 0, optimizer_s = 0;
};

std::vector<StepSplit> timed_steps(int repeats, const torch::Device& dev, SpecNet& net, const torch::Tensor& x, const torch::Tensor& y,
                                   torch::optim::Optimizer& opt, GradSync* sync) {
  StepClock clock(dev.is_cuda() ? dev.index() : -1, 5);
  std::vector<StepSplit> out;
  for (int r = 0; r <= repeats; ++r) {
    clock.mark(0);
    opt.zero_grad();
    if (sync) sync->begin_step();
    auto loss = torch::mse_loss(net->forward(x), y);
    clock.mark(1);
    loss.backward();
    clock.mark(2);
    if (sync) sync->finish_step();
    clock.mark(3);
    opt.step();
    clock.mark(4);
    const auto iv = clock.intervals_s();
    if (r > 0) out.push_back({iv[0], iv[1], iv[2], iv[3]});
  }
  return out;
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
  check_optimizer(o.optimizer);
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
      auto input = [&](int64_t b) { return random_input(spec, spatial, b, dev); };
      // the optimizer, its state allocated by a first step on real gradients
      try {
        net->forward(input(o.batches.back())).sum().backward();
      } catch (const c10::Error& e) {
        cannot_train(fmt::format("{} {} batch {}", spec.name, fmt::join(spatial, "x"), o.batches.back()), e);
      }
      auto opt = bench_optimizer(o.optimizer, net->parameters());
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
        // the same configuration as a whole training step, split as the trainer splits it (median: the typical step)
        const auto y = torch::zeros_like(net->forward(x)).detach();
        std::vector<double> step, fwd, bwd, optim;
        for (const auto& t : timed_steps(o.repeats, dev, net, x, y, *opt, nullptr)) {
          fwd.push_back(t.forward_s), bwd.push_back(t.backward_s), optim.push_back(t.optimizer_s);
          step.push_back(t.forward_s + t.backward_s + t.optimizer_s);
        }
        const auto [step_s, spread] = median_and_spread(step);
        out.whole_steps.push_back({ctx, o.optimizer, net->table().total_params(), step_s, spread, median(fwd), median(bwd), median(optim)});
        if (progress) progress(++done, total);
      }
      // the optimizer step alone
      const double opt_s = median_and_spread(repeat_seconds(dev, o.repeats, [&] { opt->step(); })).first;
      out.steps.push_back(
          {o.optimizer, net->table().total_params(), opt_s, fmt::format("{} {} {} step", spec.name, fmt::join(spatial, "x"), o.optimizer)});
    }
  }
  return out;
}

std::vector<NodeSharingTiming> time_node_sharing(const ComputeBenchOptions& o, Communicator& comm, Communicator& host,
                                                 const std::function<void(int, int)>& progress) {
  check_optimizer(o.optimizer);
  const auto dev = bench_device(o, host.local_rank());
  std::vector<NodeSharingTiming> out;
  const int total = static_cast<int>(o.workloads.size() * o.resolutions.size() * o.batches.size());
  for (const auto& w : o.workloads) {
    const auto spec = builtin_workload(w.name, w.options);
    for (int res : o.resolutions)
      for (int batch : o.batches) {
        // a fresh network each time: GradSync's hooks stay on the parameters it was made for
        const auto spatial = coarsened_spatial(spec, res);
        SpecNet net(spec, spatial, spec.coarse_upsamples_output ? res : 1);
        net->to(dev);
        net->train();
        const auto x = random_input(spec, spatial, batch, dev);
        const auto y = torch::zeros_like(net->forward(x)).detach();
        auto opt = bench_optimizer(o.optimizer, net->parameters());
        std::unique_ptr<GradSync> sync;  // made after the alone phase: its hooks would fire there too
        // compute is the step less the whole wait for the allreduces, as the trainer books it; the
        // compute's median (the typical step), the wait's mean (the runs sum every wait, the rare long ones too)
        auto compute_and_wait_s = [&] {
          std::vector<double> compute;
          double wait_s = 0;
          for (const auto& t : timed_steps(o.repeats, dev, net, x, y, *opt, sync.get())) {
            compute.push_back(t.forward_s + t.backward_s + t.optimizer_s);
            wait_s += t.wait_s / o.repeats;
          }
          return std::pair{median(compute), wait_s};
        };
        double alone = host.rank() == 0 ? compute_and_wait_s().first : 0.0;
        host.quiet_barrier();
        host.allreduce_sum(&alone, 1);  // rank 0's, to every rank
        sync = std::make_unique<GradSync>(net->parameters(), comm, 25e6);
        const auto [shared_step_s, shared_wait_s] = compute_and_wait_s();
        double shared[2] = {shared_step_s, shared_wait_s};
        host.allreduce_sum(shared, 2);
        for (double& v : shared) v /= host.size();
        sync.reset();
        // the same gradients allreduced with nothing beside them, as calibrate allreduce times a size
        AllreduceBenchOptions ar;
        ar.min_bytes = ar.max_bytes = 4.0 * static_cast<double>(net->table().total_params());
        ar.warmup = 1, ar.repeats = o.repeats;
        const double allreduce = run_allreduce_bench(comm, host, ar).front().time_s;
        out.push_back({fmt::format("{} {} batch {}", spec.name, fmt::join(spatial, "x"), batch), host.size(), alone, shared[0], allreduce, shared[1]});
        if (progress) progress(static_cast<int>(out.size()), total);
      }
  }
  return out;
}

}  // namespace mrplan
