// One training step (forward, mean squared error, backward, Adam) of a built-in network, timed: the
// C++ side of bench/compare_step.sh and scripts/gpu_check.sh. Prints the median step time and the
// parameter count.
// Usage: mrplan_step_bench [SIZE=32] [BATCH=8] [THREADS=1] [STEPS=20] [DEVICE=cpu] [MODE=eager] [WORKLOAD=cosmoflow-mrt[:size[:width]]]
//        [LAYOUT=contiguous|channels_last]
// MODE: eager (LibTorch's Adam, as the trainer steps), fused (exec/fused_adam, one kernel),
// graph (the fused step captured as a CUDA graph and replayed, exec/captured_step), check (graph
// against fused from the same seeds: the parameters after STEPS steps, bit for bit; exit 1 if not).
// LAYOUT channels_last: the weights and input in channels-last order (NDHWC), as torch.compile's
// layout optimisation picks for convolutions (its CosmoFlow 128^3 step ran in a third of eager's).
#include <fmt/format.h>
#include <malloc.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "exec/compute_microbench.hpp"
#include "exec/host_tuning.hpp"
#include "exec/spec_network.hpp"
#include "model/builtin_workloads.hpp"
#if MRPLAN_CAPTURED_STEPS
#include "exec/captured_step.hpp"
#include "exec/fused_adam.hpp"
#endif

using namespace mrplan;

namespace {

struct Setup {
  SpecNet net;
  torch::Tensor x, y;
};

bool channels_last = false;  // LAYOUT

// `t` in channels-last order where it has 4 or 5 dimensions
torch::Tensor in_layout(const torch::Tensor& t) {
  if (!channels_last || t.dim() < 4) return t;
  return t.contiguous(t.dim() == 5 ? torch::MemoryFormat::ChannelsLast3d : torch::MemoryFormat::ChannelsLast);
}

// The network and a batch, from seed 0 alone: two setups are bit for bit the same.
Setup make_setup(const NetworkSpec& spec, int64_t batch, const torch::Device& dev) {
  torch::manual_seed(0);
  SpecNet net(spec, spec.input_spatial);
  net->to(dev);
  for (auto& p : net->parameters()) p.set_data(in_layout(p.data()));
  std::vector<int64_t> shape{batch, spec.input_channels};
  shape.insert(shape.end(), spec.input_spatial.begin(), spec.input_spatial.end());
  auto x = in_layout(torch::rand(shape).to(dev));
  torch::Tensor y;
  {
    torch::NoGradGuard ng;
    y = torch::rand_like(net->forward(x));
  }
  torch::manual_seed(1);  // the steps' dropout draws the same in every mode
  return {net, x, y};
}

// `steps` + 3 steps, the first 3 untimed; each step's milliseconds, device work included.
std::vector<double> time_steps(const torch::Device& dev, int steps, const std::function<void()>& one) {
  std::vector<double> ms;
  for (int s = 0; s < steps + 3; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    one();
    if (dev.is_cuda()) torch::cuda::synchronize();
    const double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (s >= 3) ms.push_back(t);
  }
  return ms;
}

#if MRPLAN_CAPTURED_STEPS
StepFunction fused_step(Setup& s, FusedAdam& opt) {
  return training_step([&s](const torch::Tensor& x, const torch::Tensor& y) { return torch::mse_loss(s.net->forward(x), y); }, opt);
}

// Tensors of `a` and `b` (the same model's) that are not bit for bit the same.
int count_differing(SpecNet& a, SpecNet& b) {
  int differ = 0;
  auto compare = [&](const std::vector<torch::Tensor>& x, const std::vector<torch::Tensor>& y) {
    for (size_t i = 0; i < x.size(); ++i) differ += torch::equal(x[i], y[i]) ? 0 : 1;
  };
  compare(a->parameters(), b->parameters());
  compare(a->buffers(), b->buffers());
  return differ;
}

Setup eager_steps(const NetworkSpec& spec, int64_t batch, const torch::Device& dev, int steps) {
  auto eager = make_setup(spec, batch, dev);
  FusedAdam opt(eager.net->parameters(), 1e-3);
  const auto step = fused_step(eager, opt);
  for (int s = 0; s < steps; ++s) step(eager.x, eager.y);
  return eager;
}

// `steps` steps captured (3 eager warm-ups, then replays) against the same steps eagerly, with
// deterministic kernels (as `run --deterministic`): 0 when every parameter and buffer is bit for bit
// the same. The eager steps twice first: what differs there is the kernels', not the capture's.
int check_captured(const NetworkSpec& spec, int64_t batch, const torch::Device& dev, int steps) {
  use_deterministic_kernels();
  auto eager = eager_steps(spec, batch, dev, steps);
  auto again = eager_steps(spec, batch, dev, steps);
  const int eager_differ = count_differing(eager.net, again.net);
  auto graphed = make_setup(spec, batch, dev);
  FusedAdam graphed_opt(graphed.net->parameters(), 1e-3);
  const int warmups = std::min(3, steps);
  CapturedStep captured(fused_step(graphed, graphed_opt), graphed.x, graphed.y, warmups);
  for (int s = warmups; s < steps; ++s) captured.run(graphed.x, graphed.y);
  torch::cuda::synchronize();
  const int differ = count_differing(eager.net, graphed.net);
  const size_t total = eager.net->parameters().size() + eager.net->buffers().size();
  fmt::print("check   {} {}: after {} steps ({} eager, then replays) {} of {} parameter and buffer tensors differ from the eager steps'{}; "
             "eager against eager: {} differ\n",
             dev.str(), spec.name, steps, warmups, differ, total, differ == 0 ? " (bit for bit the same)" : "", eager_differ);
  return differ == 0 ? 0 : 1;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const int size = argc > 1 ? std::atoi(argv[1]) : 32;
  const int batch = argc > 2 ? std::atoi(argv[2]) : 8;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  const int steps = argc > 4 ? std::atoi(argv[4]) : 20;
  const torch::Device dev(argc > 5 ? argv[5] : "cpu");  // "cuda": the step's kernels are waited for before the clock is read
  const std::string mode = argc > 6 ? argv[6] : "eager";
  auto variant = parse_workload_variant(argc > 7 ? argv[7] : "cosmoflow-mrt");
  if (variant.options.size == 0 && size > 0) variant.options.size = size;  // SIZE 0: the workload's own
  const std::string layout = argc > 8 ? argv[8] : "contiguous";
  if (layout != "contiguous" && layout != "channels_last") {
    fmt::print(stderr, "LAYOUT must be contiguous or channels_last, not '{}'\n", layout);
    return 2;
  }
  channels_last = layout == "channels_last";
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  torch::set_num_threads(threads);
  const auto spec = builtin_workload(variant.name, variant.options);
  auto s = make_setup(spec, batch, dev);
  std::vector<double> ms;
  if (mode == "eager") {
    torch::optim::Adam opt(s.net->parameters(), 1e-3);
    ms = time_steps(dev, steps, [&] {
      opt.zero_grad();
      torch::mse_loss(s.net->forward(s.x), s.y).backward();
      opt.step();
    });
  } else if (mode == "fused" || mode == "graph" || mode == "check") {
#if MRPLAN_CAPTURED_STEPS
    if (mode == "check") return check_captured(spec, batch, dev, steps);
    FusedAdam opt(s.net->parameters(), 1e-3);
    const auto step = fused_step(s, opt);
    if (mode == "fused") {
      ms = time_steps(dev, steps, [&] { step(s.x, s.y); });
    } else {
      CapturedStep captured(step, s.x, s.y, 3);
      ms = time_steps(dev, steps, [&] { captured.run(s.x, s.y); });
    }
#else
    fmt::print(stderr, "mode '{}' needs a build against a CUDA LibTorch 2.x (exec/CMakeLists.txt)\n", mode);
    return 2;
#endif
  } else {
    fmt::print(stderr, "MODE must be eager, fused, graph or check, not '{}'\n", mode);
    return 2;
  }
  std::sort(ms.begin(), ms.end());
  int64_t params = 0;
  for (const auto& p : s.net->parameters()) params += p.numel();
  fmt::print("mrplan {}{} {} {} size {} batch {} threads {}: median step {:.2f} ms (min {:.2f}, max {:.2f}) over {} steps, {} parameters\n", mode,
             channels_last ? " channels_last" : "", dev.str(), spec.name, fmt::join(spec.input_spatial, "x"), batch, threads, ms[ms.size() / 2], ms.front(), ms.back(), ms.size(),
             params);
}
