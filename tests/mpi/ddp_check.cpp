// Run under `mpirun -np 2`: data-parallel steps (bucketed, overlapped allreduce) must leave the
// parameters identical on every rank and equal to one process training on the concatenated batch.
#include <fmt/format.h>
#include <torch/torch.h>

#include "exec/communicator.hpp"
#include "exec/grad_sync.hpp"
#include "exec/spec_network.hpp"
#include "model/builtin_workloads.hpp"

using namespace mrplan;

int main() {
  auto comm = make_mpi_communicator();
  const int rank = comm->rank(), ranks = comm->size();
  torch::set_num_threads(1);
  // no batch norm, no dropout: the full-batch reference is then exact up to float rounding
  const auto spec = builtin_workload("cosmoflow-mlperf", {.size = 16, .width = 0.25});
  torch::manual_seed(0);
  SpecNet ddp(spec, spec.input_spatial), ref(spec, spec.input_spatial);
  {
    torch::NoGradGuard ng;
    auto a = ddp->parameters(), b = ref->parameters();
    for (size_t i = 0; i < a.size(); ++i) b[i].copy_(a[i]);
  }
  broadcast_module(*ddp, *comm);
  const int per_rank = 4, steps = 3;
  torch::manual_seed(42);  // the same data on every rank
  const auto x = torch::randn({per_rank * ranks, 4, 16, 16, 16}), y = torch::rand({per_rank * ranks, 4}) * 2 - 1;
  torch::optim::SGD opt_ddp(ddp->parameters(), 0.05), opt_ref(ref->parameters(), 0.05);
  GradSync sync(ddp->parameters(), *comm, 4096.0);  // tiny buckets: many allreduces in flight
  for (int s = 0; s < steps; ++s) {
    opt_ddp.zero_grad();
    sync.begin_step();
    torch::mse_loss(ddp->forward(x.narrow(0, rank * per_rank, per_rank)), y.narrow(0, rank * per_rank, per_rank)).backward();
    sync.finish_step();
    opt_ddp.step();
    opt_ref.zero_grad();
    torch::mse_loss(ref->forward(x), y).backward();
    opt_ref.step();
  }
  double worst = 0, sum = 0;
  auto a = ddp->parameters(), b = ref->parameters();
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
    sum += a[i].sum().item<double>();
  }
  // identical on every rank: the sum of per-rank checksums equals ranks x rank 0's
  double sums[2] = {sum, sum * sum};
  comm->allreduce_sum(sums, 2);
  const double mean = sums[0] / ranks, var = sums[1] / ranks - mean * mean;
  const bool same = std::abs(var) <= 1e-12 * std::max(1.0, mean * mean);
  const bool close = worst < 1e-5;
  if (rank == 0) {
    fmt::print("ddp: {} ranks, {} buckets, max |ddp - single process| = {:.3g}, ranks identical: {}\n", ranks, sync.buckets(),
               worst, same);
    fmt::print("ddp: {} passed, {} failed\n", same && close ? 1 : 0, same && close ? 0 : 1);
  }
  return same && close ? 0 : 1;
}
