// One training step (forward, backward, Adam) of cosmoflow-mrt, timed: the C++ side of
// bench/compare_step.sh. Prints the median step time and the parameter count.
#include <fmt/format.h>
#include <malloc.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "exec/spec_network.hpp"
#include "model/builtin_workloads.hpp"

using namespace mrplan;

int main(int argc, char** argv) {
  const int size = argc > 1 ? std::atoi(argv[1]) : 32;
  const int batch = argc > 2 ? std::atoi(argv[2]) : 8;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  const int steps = argc > 4 ? std::atoi(argv[4]) : 20;
  const torch::Device dev(argc > 5 ? argv[5] : "cpu");  // "cuda": the step's kernels are waited for before the clock is read
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  const auto spec = builtin_workload("cosmoflow-mrt", {.size = size});
  SpecNet net(spec, spec.input_spatial);
  net->to(dev);
  torch::optim::Adam opt(net->parameters(), 1e-3);
  const auto x = torch::rand({batch, 4, size, size, size}).to(dev), y = torch::rand({batch, 4}).to(dev);
  std::vector<double> ms;
  for (int s = 0; s < steps + 3; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    opt.zero_grad();
    torch::mse_loss(net->forward(x), y).backward();
    opt.step();
    if (dev.is_cuda()) torch::cuda::synchronize();
    const double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (s >= 3) ms.push_back(t);  // warm-up steps excluded
  }
  std::sort(ms.begin(), ms.end());
  int64_t params = 0;
  for (const auto& p : net->parameters()) params += p.numel();
  fmt::print("mrplan  {} size {} batch {} threads {}: median step {:.1f} ms (min {:.1f}, max {:.1f}) over {} steps, {} parameters\n",
             dev.str(), size, batch, threads, ms[ms.size() / 2], ms.front(), ms.back(), ms.size(), params);
}
