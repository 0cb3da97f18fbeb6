#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "cli/inputs.hpp"
#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "cli/profile_file.hpp"
#include "exec/communicator.hpp"
#include "calibrate/node_sharing_fit.hpp"
#include "exec/compute_microbench.hpp"

namespace mrplan {

namespace {

struct SharingArgs {
  std::string profile = "out/local-profile.yaml";
  std::vector<std::string> workloads{"cosmoflow-mrt"};
  ComputeBenchOptions bench;
};

void calibrate_sharing(SharingArgs a) {
  a.bench.workloads.clear();
  for (const auto& w : a.workloads) a.bench.workloads.push_back(parse_workload_variant(w));
  auto mpi = make_mpi_communicator();
  std::unique_ptr<Communicator> nccl;
  if (a.bench.device == DeviceKind::cuda) nccl = make_nccl_communicator(*mpi, mpi->local_rank());
  const bool root = mpi->rank() == 0;
  if (mpi->size() < 2) {
    if (root) fmt::print("note: one rank shares its node with nobody; launch as many ranks as the node has devices (mpirun -np, srun -n, jsrun, flux run) for a fit\n");
    return;
  }
  const auto timings = time_node_sharing(a.bench, nccl ? *nccl : *mpi, *mpi, [&](int done, int total) {
    if (root) print_progress("sharing", static_cast<size_t>(done), static_cast<size_t>(total), "steps");
  });
  if (!root) return;
  fmt::print("a step's compute alone and with {} ranks stepping at once ({}, gradients averaged over {})\n", mpi->size(),
             to_string(a.bench.device), nccl ? "NCCL" : "MPI");
  const auto fit = fit_node_sharing(timings);
  fmt::print("{:<36} {:>10} {:>10} {:>12} {:>10} {:>7} {:>8} {:>10}\n", "configuration", "alone_ms", "shared_ms", "allreduce_ms", "model_ms",
             "error", "wait_ms", "model_ms");
  for (size_t i = 0; i < timings.size(); ++i) {
    const auto& t = timings[i];
    const double e = fit.relative_residuals[i];
    fmt::print("{:<36} {:>10.2f} {:>10.2f} {:>12.2f} {:>10.2f} {:>+6.0f}% {:>8.2f} {:>10.2f}\n", t.context, t.alone_s * 1e3, t.shared_s * 1e3,
               t.allreduce_s * 1e3, t.shared_s * (1 + e) * 1e3, 100 * e, t.shared_wait_s * 1e3, fit.modelled_wait_s[i] * 1e3);
  }
  fmt::print("shared step = alone x {:.3f} (+- {:.3f}) + allreduce x {:.3f} (+- {:.3f})\n", fit.slowdown, fit.slowdown_std_error,
             fit.comm_steal, fit.comm_steal_std_error);
  fmt::print("wait after backward = allreduce + wait for the slowest rank, step time spread cv {:.3f} (+- {:.3f})\n", fit.step_time_cv,
             fit.step_time_cv_std_error);
  const auto source = fmt::format("calibrate sharing: {} configurations of {}, batches {}, {} ranks, {} thread(s), {}, {} rounds",
                                  timings.size(), fmt::join(a.workloads, " and "), fmt::join(a.bench.batches, "/"), mpi->size(),
                                  a.bench.threads, to_string(a.bench.device), timings.empty() ? 0 : timings.front().rounds);
  update_profile(a.profile, mpi->size(), [&](MachineProfile& p) { apply_node_sharing_fit(p, fit, source); });
}

}  // namespace

void register_calibrate_sharing(CLI::App& cal) {
  auto* c = cal.add_subcommand("sharing", "Over the launched ranks: a whole step alone and with every rank of the node stepping; fit the slowdown");
  auto a = std::make_shared<SharingArgs>();
  a->bench.batches = {4, 8};
  a->bench.repeats = 10;  // the wait's mean has a long tail
  c->add_option("--profile", a->profile, "profile YAML to update (created if missing)")->capture_default_str();
  c->add_option("--workload", a->workloads, "built-in workloads to step: name[:size[:width]]")->delimiter(',')->capture_default_str();
  c->add_option("--resolutions", a->bench.resolutions, "coarsening factors to step")->delimiter(',')->capture_default_str();
  c->add_option("--batches", a->bench.batches, "local batch sizes to step")->delimiter(',')->capture_default_str();
  c->add_option("--threads", a->bench.threads, "intra-op threads per rank, as the runs use")->capture_default_str();
  c->add_option("--repeats", a->bench.repeats, "rounds, each timing a lone and a shared step of every configuration (the steps' median, the wait's mean)")
      ->capture_default_str();
  c->add_option("--min-seconds", a->bench.min_seconds,
                "...and more rounds until this long has passed: ten rounds take seconds, and the fit then swings with the machine's drift")
      ->capture_default_str();
  add_optimizer_option(c, a->bench.optimizer, "optimizer whose step is timed");
  add_device_option(c, a->bench.device, "cpu (MPI) or cuda (NCCL, GPU = node-local rank)");
  c->callback([a] { calibrate_sharing(*a); });
}

}  // namespace mrplan
