#include "exec/compute_microbench.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "exec/allreduce_microbench.hpp"
#include "exec/communicator.hpp"
#include "exec/grad_sync.hpp"
#include "exec/host_tuning.hpp"
#include "exec/captured_step.hpp"
#include "exec/fused_adam.hpp"
#include "exec/lamb.hpp"
#include "exec/model_trainer.hpp"
#include "exec/spec_network.hpp"
#include "exec/step_clock.hpp"
#include "model/error_summary.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {

torch::Device bench_device(const ComputeBenchOptions& o, int gpu = 0) {
  keep_large_allocations_mapped();
  set_intra_op_threads(std::max(1, o.threads));
  const bool have_gpu = torch::cuda::is_available();  // auto: the GPU where there is one, as `run` picks (run_context)
  if (o.device == DeviceKind::cuda && !have_gpu)
    fail_input("", "--device", "cuda was asked for but LibTorch sees no GPU (or is a CPU build)");
  if (o.device == DeviceKind::cpu || !have_gpu) return torch::Device(torch::kCPU);
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(gpu));
}

torch::Tensor random_input(const NetworkSpec& spec, const std::vector<int64_t>& spatial, int64_t batch, const torch::Device& dev) {
  std::vector<int64_t> shape{batch, spec.input_channels};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  return torch::randn(shape, torch::TensorOptions().device(dev));
}

// Best of `repeats` runs of f after one untimed warm-up, device work included: the achievable
// rate, not the typical one.
double best_seconds(const torch::Device& dev, int repeats, const std::function<void()>& f) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r <= repeats; ++r) {
    if (dev.is_cuda()) torch::cuda::synchronize(dev.index());
    const auto t0 = std::chrono::steady_clock::now();
    f();
    if (dev.is_cuda()) torch::cuda::synchronize(dev.index());
    if (r > 0) best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// Training steps split as the trainer splits them (exec/trainer.cpp), on the same clock: zero_grad,
// forward and loss | backward | wait for the allreduces (none without `sync`) | optimizer. The first
// `warmups` steps (the optimizer's state, autograd's buffers) are not returned.
struct StepSplit {
  double forward_s = 0, backward_s = 0, wait_s = 0, optimizer_s = 0;
};

std::vector<StepSplit> timed_steps(int repeats, int warmups, const torch::Device& dev, SpecNet& net, const torch::Tensor& x,
                                   const torch::Tensor& y, torch::optim::Optimizer& opt, GradSync* sync) {
  StepClock clock(dev.is_cuda() ? dev.index() : -1, 5);
  std::vector<StepSplit> out;
  for (int r = 0; r < repeats + warmups; ++r) {
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
    if (r >= warmups) out.push_back({iv[0], iv[1], iv[2], iv[3]});
  }
  return out;
}

int64_t matmul_probe_size(const torch::Device& dev) { return dev.is_cuda() ? 8192 : 2048; }

double best_matmul_flops_per_s(const torch::Device& dev, int repeats) {
  torch::NoGradGuard ng;
  const int64_t n = matmul_probe_size(dev);
  // ones, not random: a run's probe must leave the seeded random stream as it found it
  auto a = torch::ones({n, n}, torch::TensorOptions().device(dev));
  auto b = torch::ones({n, n}, torch::TensorOptions().device(dev));
  auto c = torch::empty({n, n}, torch::TensorOptions().device(dev));
  return 2.0 * static_cast<double>(n * n * n) / best_seconds(dev, repeats, [&] { torch::mm_out(c, a, b); });
}

[[noreturn]] void cannot_train(const std::string& what, const c10::Error& e) {  // e.g. batch norm over one value per channel
  fail_input("", "--batches", fmt::format("{} cannot train: {}", what, e.msg().substr(0, e.msg().find('\n'))));
}

// How a configuration is named in every table, and how its ops and whole steps are matched.
std::string config_context(const NetworkSpec& spec, const std::vector<int64_t>& spatial, int64_t batch) {
  return fmt::format("{} {} batch {}", spec.name, fmt::join(spatial, "x"), batch);
}

// Seconds since construction, for the benchmarks that time rounds until a minimum has passed.
struct Stopwatch {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
};

// Rounds still to time so that `min_seconds` have passed, at `round_s` a round: none when they
// have, else at least one.
int extra_rounds(double elapsed_s, double min_seconds, double round_s) {
  if (elapsed_s >= min_seconds) return 0;
  return std::max(1, static_cast<int>(std::ceil((min_seconds - elapsed_s) / round_s)));
}

// On a GPU of a build that has them, the median of `repeats` steps captured as one CUDA graph (3
// eager warm-ups, the fused Adam it needs: exec/captured_step), as `run --capture` replays them; 0 elsewhere.
double timed_captured_step_s(const torch::Device& dev, SpecNet& net, const torch::Tensor& x, const torch::Tensor& y, int repeats) {
  if (!dev.is_cuda() || !captured_steps_compiled()) return 0;
  FusedAdam opt(net->parameters(), 1e-4);
  CapturedStep step(training_step([&net](const torch::Tensor& a, const torch::Tensor& b) { return torch::mse_loss(net->forward(a), b); }, opt),
                    x, y, 3);
  std::vector<double> s;
  for (int r = 0; r < repeats; ++r) {
    torch::cuda::synchronize(dev.index());
    const Stopwatch clock;
    step.run(x, y);
    torch::cuda::synchronize(dev.index());
    s.push_back(clock.seconds());
  }
  return median(s);
}

// One forward as a validation pass runs it (eval mode, no autograd), after the training steps
// of the same round, on the device clock.
double timed_inference_s(const torch::Device& dev, SpecNet& net, const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  net->eval();
  if (dev.is_cuda()) torch::cuda::synchronize(dev.index());
  const Stopwatch clock;
  net->forward(x);
  if (dev.is_cuda()) torch::cuda::synchronize(dev.index());
  const double s = clock.seconds();
  net->train();
  return s;
}

// A stage's start-up as a new process meets it: a fresh network and optimizer, as the trainer
// builds them, take their first two steps on a heap given back to the kernel, so that every page
// they need is touched for the first time (the faults counted; host faults say nothing of a GPU's
// memory, so there none are counted and the start-up stays unmeasured).
struct FirstSteps {
  double seconds = 0, touched_bytes = 0, activation_bytes = 0;
};

FirstSteps time_first_steps(const ComputeBenchOptions& o, const torch::Device& dev, const NetworkSpec& spec,
                            const std::vector<int64_t>& spatial, int64_t up, int64_t batch) {
  SpecNet net(spec, spatial, up);
  net->to(dev);
  net->train();
  const auto table = resolve(spec, spatial, batch, 4.0, up);
  std::vector<int64_t> out_shape{batch};
  out_shape.insert(out_shape.end(), table.layers.back().out_shape.begin(), table.layers.back().out_shape.end());
  const auto x = random_input(spec, spatial, batch, dev);
  const auto y = torch::zeros(out_shape, torch::TensorOptions().device(dev));
  auto opt = make_optimizer(o.optimizer, net->parameters(), 1e-4);
  FirstSteps f;
  f.activation_bytes = table.activation_bytes();
  release_free_heap();
  const long faults = minor_page_faults();
  try {
    for (const auto& t : timed_steps(2, 0, dev, net, x, y, *opt, nullptr)) f.seconds += t.forward_s + t.backward_s + t.optimizer_s;
  } catch (const c10::Error& e) {
    cannot_train(config_context(spec, spatial, batch), e);
  }
  f.touched_bytes = dev.is_cuda() ? 0.0 : static_cast<double>(minor_page_faults() - faults) * page_bytes();
  return f;
}

}  // namespace

double best_matmul_flops_per_s(int gpu, int repeats) {
  return best_matmul_flops_per_s(gpu < 0 ? torch::Device(torch::kCPU) : torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(gpu)),
                                 repeats);
}

DevicePeaks measure_device_peaks(const ComputeBenchOptions& o) {
  const auto dev = bench_device(o);
  torch::NoGradGuard ng;
  DevicePeaks p;
  p.matmul_flops_per_s = best_matmul_flops_per_s(dev, o.repeats);
  p.matmul_shape = fmt::format("{0}x{0} fp32 matmul", matmul_probe_size(dev));
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

namespace {

struct BenchNet {  // one per workload and resolution, with its optimizer
  SpecNet net;
  std::unique_ptr<torch::optim::Optimizer> opt;
};
struct BenchConfig {  // one per batch on a BenchNet
  size_t net = 0;
  LayerTable table;
  torch::Tensor x, y;
  std::string context;
  std::vector<std::vector<OpTiming>> ops;  // per round
  std::vector<StepSplit> steps;            // two per round
  std::vector<double> inference_s;         // one per round
};
struct BenchSet {
  std::vector<BenchNet> nets;
  std::vector<BenchConfig> configs;
  std::vector<FirstSteps> first_steps;  // one per configuration, in their order
};

// Every workload at every resolution, its optimizer's state allocated by a first step on real
// gradients, and every batch on it with its input and target; each configuration's first steps
// timed as a fresh process takes them.
BenchSet build_bench_set(const ComputeBenchOptions& o, const torch::Device& dev) {
  BenchSet set;
  for (const auto& w : o.workloads) {
    const auto spec = builtin_workload(w.name, w.options);
    for (int res : o.resolutions) {
      const auto spatial = coarsened_spatial(spec, res);
      const int64_t up = spec.coarse_upsamples_output ? res : 1;
      for (int b : o.batches) set.first_steps.push_back(time_first_steps(o, dev, spec, spatial, up, b));
      SpecNet net(spec, spatial, up);
      net->to(dev);
      net->train();
      auto input = [&](int64_t b) { return random_input(spec, spatial, b, dev); };
      try {
        net->forward(input(o.batches.back())).sum().backward();
      } catch (const c10::Error& e) {
        cannot_train(config_context(spec, spatial, o.batches.back()), e);
      }
      auto opt = make_optimizer(o.optimizer, net->parameters(), 1e-4);
      opt->step();
      set.nets.push_back({net, std::move(opt)});
      for (int b : o.batches) {
        BenchConfig c{set.nets.size() - 1, resolve(spec, spatial, b, 4.0, up), input(b), {}, config_context(spec, spatial, b), {}, {}, {}};
        try {
          c.y = torch::zeros_like(net->forward(c.x)).detach();
        } catch (const c10::Error& e) {
          cannot_train(c.context, e);
        }
        set.configs.push_back(std::move(c));
      }
    }
  }
  return set;
}

// Round-robin: each round times every configuration once, so a slow spell of the machine (a VM's
// neighbours, for seconds at a time) lands on every configuration instead of skewing the few timed
// during it; the medians over rounds then drop it. Rounds go on past --repeats to --min-seconds.
void time_rounds(const ComputeBenchOptions& o, const torch::Device& dev, BenchSet& set, const std::function<void(int, int)>& progress,
                 ComputeTimings& out) {
  const Stopwatch clock;
  const int per_round = static_cast<int>(set.configs.size());
  int rounds = std::max(1, o.repeats), done = 0;
  for (int r = 0; r < rounds; ++r) {
    const int warmups = r == 0 ? 1 : 0;
    const double round_start_s = clock.seconds();
    for (auto& c : set.configs) {
      auto& n = set.nets[c.net];
      try {
        c.ops.push_back(n.net->time_ops(c.x, 1, warmups));
      } catch (const c10::Error& e) {
        cannot_train(c.context, e);
      }
      // after an untimed step (the other configurations have had the caches), two back to back
      // as the trainer runs them: their difference is the step-to-step jitter ranks wait on
      for (const auto& t : timed_steps(2, 1, dev, n.net, c.x, c.y, *n.opt, nullptr)) c.steps.push_back(t);
      try {
        c.inference_s.push_back(timed_inference_s(dev, n.net, c.x));
      } catch (const c10::Error& e) {
        cannot_train(c.context, e);
      }
      if (progress) progress(++done, rounds * per_round);
    }
    if (r > 0) out.round_s.push_back(clock.seconds() - round_start_s);  // round 0 carries the warm-ups
    if (r + 1 == rounds)
      rounds += extra_rounds(clock.seconds(), o.min_seconds, out.round_s.empty() ? clock.seconds() : median(out.round_s));
  }
}

// Each layer's median over the rounds, and each configuration's typical whole step (the medians),
// its first steps, its inference and its captured step.
void add_medians(const ComputeBenchOptions& o, const torch::Device& dev, BenchSet& set, ComputeTimings& out) {
  for (size_t ci = 0; ci < set.configs.size(); ++ci) {
    const auto& c = set.configs[ci];
    for (size_t i = 0; i < c.table.layers.size(); ++i) {
      std::vector<double> fwd, bwd;
      for (const auto& round : c.ops) fwd.push_back(round.at(i).fwd_s), bwd.push_back(round.at(i).bwd_s);
      out.ops.push_back({c.table.layers[i], median(fwd), median(bwd), c.context});
    }
    std::vector<double> step, fwd, bwd, optim;
    for (const auto& t : c.steps) {
      fwd.push_back(t.forward_s), bwd.push_back(t.backward_s), optim.push_back(t.optimizer_s);
      step.push_back(t.forward_s + t.backward_s + t.optimizer_s);
    }
    const auto& first = set.first_steps.at(ci);
    out.whole_steps.push_back({c.context, o.optimizer, c.table.total_params(), median(step), back_to_back_spread(step), median(fwd),
                               median(bwd), median(optim), c.table.total_param_tensors(), first.seconds, first.touched_bytes,
                               first.activation_bytes, median(c.inference_s)});
    out.whole_steps.back().captured_s = timed_captured_step_s(dev, set.nets[c.net].net, c.x, c.y, std::max(5, o.repeats));
  }
}

}  // namespace

ComputeTimings time_workload_ops(const ComputeBenchOptions& o, const std::function<void(int, int)>& progress) {
  const auto dev = bench_device(o);
  BenchSet set = build_bench_set(o, dev);
  ComputeTimings out;
  time_rounds(o, dev, set, progress, out);
  add_medians(o, dev, set, out);
  return out;
}

namespace {

// Two copies of each network: GradSync's hooks stay on the parameters it was made for, and the
// lone steps must not fire them.
struct SharingConfig {
  std::string context;
  SpecNet alone_net, shared_net;
  torch::Tensor x, y;
  std::unique_ptr<torch::optim::Optimizer> alone_opt, shared_opt;
  std::unique_ptr<GradSync> sync;
  std::vector<double> alone_s, shared_s, wait_s;
};

std::vector<SharingConfig> sharing_configs(const ComputeBenchOptions& o, const torch::Device& dev, Communicator& comm) {
  std::vector<SharingConfig> configs;
  for (const auto& w : o.workloads) {
    const auto spec = builtin_workload(w.name, w.options);
    for (int res : o.resolutions)
      for (int batch : o.batches) {
        const auto spatial = coarsened_spatial(spec, res);
        const int64_t up = spec.coarse_upsamples_output ? res : 1;
        SharingConfig c{
            config_context(spec, spatial, batch), SpecNet(spec, spatial, up), SpecNet(spec, spatial, up), {}, {}, {}, {}, {}, {}, {}, {}};
        for (auto* n : {&c.alone_net, &c.shared_net}) (*n)->to(dev), (*n)->train();
        c.x = random_input(spec, spatial, batch, dev);
        c.y = torch::zeros_like(c.alone_net->forward(c.x)).detach();
        c.alone_opt = make_optimizer(o.optimizer, c.alone_net->parameters(), 1e-4);
        c.shared_opt = make_optimizer(o.optimizer, c.shared_net->parameters(), 1e-4);
        c.sync = std::make_unique<GradSync>(c.shared_net->parameters(), comm, 25e6);
        configs.push_back(std::move(c));
      }
  }
  return configs;
}

// Each round is, for every configuration in turn, one lone step on rank 0 (the others asleep in a
// barrier) then one shared step on every rank, so the two see the same machine and a slow spell of
// it lands on every configuration alike (as calibrate compute).
void time_sharing_rounds(const ComputeBenchOptions& o, const torch::Device& dev, Communicator& host, std::vector<SharingConfig>& configs,
                         const std::function<void(int, int)>& progress) {
  const Stopwatch clock;
  const int per_round = static_cast<int>(configs.size());
  int rounds = std::max(1, o.repeats) + 1, done = 0;  // round 0 warms up
  for (int r = 0; r < rounds; ++r) {
    for (auto& c : configs) {
      if (host.rank() == 0) {
        const auto t = timed_steps(1, 0, dev, c.alone_net, c.x, c.y, *c.alone_opt, nullptr).front();
        if (r > 0) c.alone_s.push_back(t.forward_s + t.backward_s + t.optimizer_s);
      }
      host.quiet_barrier();
      const auto t = timed_steps(1, 0, dev, c.shared_net, c.x, c.y, *c.shared_opt, c.sync.get()).front();
      if (r > 0) c.shared_s.push_back(t.forward_s + t.backward_s + t.optimizer_s), c.wait_s.push_back(t.wait_s);
      if (progress) progress(++done, rounds * per_round);
    }
    if (r + 1 == rounds) {  // more rounds until min_seconds have passed, as rank 0's clock says for every rank
      double more = host.rank() == 0 ? extra_rounds(clock.seconds(), o.min_seconds, clock.seconds() / rounds) : 0;
      host.allreduce_sum(&more, 1);
      rounds += static_cast<int>(more);
    }
  }
}

NodeSharingTiming sharing_timing(const ComputeBenchOptions& o, Communicator& comm, Communicator& host, const SharingConfig& c) {
  // compute is the step less the whole wait for the allreduces, as the trainer books it; the
  // compute's median (the typical step), the wait's mean (the runs sum every wait, the rare long ones too)
  double alone = host.rank() == 0 ? median(c.alone_s) : 0.0;
  host.allreduce_sum(&alone, 1);  // rank 0's, to every rank
  const double wait_sum = std::accumulate(c.wait_s.begin(), c.wait_s.end(), 0.0);
  double shared[2] = {median(c.shared_s), wait_sum / static_cast<double>(c.wait_s.size())};
  host.allreduce_sum(shared, 2);
  for (double& v : shared) v /= host.size();
  // the same gradients allreduced with nothing beside them, as calibrate allreduce times a size
  AllreduceBenchOptions ar;
  ar.min_bytes = ar.max_bytes = 4.0 * static_cast<double>(c.shared_net->table().total_params());
  ar.warmup = 1, ar.repeats = o.repeats;
  const double allreduce = run_allreduce_bench(comm, host, ar).front().time_s;
  return {c.context, host.size(), alone, shared[0], allreduce, shared[1], static_cast<int>(c.shared_s.size())};
}

}  // namespace

std::vector<NodeSharingTiming> time_node_sharing(const ComputeBenchOptions& o, Communicator& comm, Communicator& host,
                                                 const std::function<void(int, int)>& progress) {
  const auto dev = bench_device(o, host.local_rank());
  auto configs = sharing_configs(o, dev, comm);
  time_sharing_rounds(o, dev, host, configs, progress);
  std::vector<NodeSharingTiming> out;
  for (const auto& c : configs) out.push_back(sharing_timing(o, comm, host, c));
  return out;
}

}  // namespace mrplan
