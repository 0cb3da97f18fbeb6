#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "calibrate/allreduce_fit.hpp"
#include "cli/commands.hpp"
#include "cli/inputs.hpp"
#include "cli/profile_file.hpp"
#include "cli/progress_line.hpp"
#include "exec/allreduce_microbench.hpp"
#include "model/profile_yaml.hpp"

namespace mrplan {

namespace {

struct AllreduceArgs {
  std::string profile = "out/local-profile.yaml";
  std::string csv;
  DeviceKind device = DeviceKind::cpu;
  AllreduceBenchOptions bench;
};

void calibrate_allreduce(const AllreduceArgs& a) {
  auto mpi = make_mpi_communicator();
  std::unique_ptr<Communicator> nccl;
  if (a.device == DeviceKind::cuda) nccl = make_nccl_communicator(*mpi, mpi->local_rank());
  Communicator& comm = nccl ? *nccl : *mpi;
  const bool root = mpi->rank() == 0;
  if (mpi->size() < 2 && root)
    fmt::print("note: one rank moves nothing; launch 2 or more ranks (mpirun -np 2, srun -n 2, jsrun, flux run) for a fit (timings follow anyway)\n");
  const auto rows = run_allreduce_bench(comm, *mpi, a.bench, [&](int done, int total) {
    if (root) print_progress("allreduce", static_cast<size_t>(done), static_cast<size_t>(total), "sizes");
  });
  if (!root) return;
  fmt::print("allreduce over {} ranks ({}), median of up to {} repeats\n", mpi->size(), nccl ? "NCCL" : "MPI", a.bench.repeats);
  fmt::print("{:>12} {:>8} {:>12} {:>12} {:>12}\n", "bytes", "repeats", "time_us", "algbw_GB/s", "busbw_GB/s");
  std::vector<AllreduceTiming> timings;
  for (const auto& r : rows) {
    fmt::print("{:>12.0f} {:>8} {:>12.2f} {:>12.3f} {:>12.3f}\n", r.bytes, r.repeats, r.time_s * 1e6, r.algbw_Bps / 1e9,
               r.busbw_Bps / 1e9);
    timings.push_back({r.bytes, mpi->size(), r.time_s});
  }
  if (!a.csv.empty()) {
    std::ofstream f(a.csv);
    f << "bytes,ranks,repeats,time_s,algbw_Bps,busbw_Bps\n";
    for (const auto& r : rows) f << fmt::format("{},{},{},{},{},{}\n", r.bytes, mpi->size(), r.repeats, r.time_s, r.algbw_Bps, r.busbw_Bps);
  }
  if (mpi->size() < 2) return;
  const auto fit = fit_ring_alpha_beta(timings);
  fmt::print("ring alpha-beta fit: alpha = {:.2f} +- {:.2f} us, bandwidth = {:.3f} +- {:.3f} GB/s, R^2 = {:.4f}\n",
             fit.link.alpha_s * 1e6, fit.alpha_std_error_s * 1e6, fit.link.bandwidth_Bps / 1e9,
             fit.bandwidth_std_error_Bps / 1e9, fit.r2);
  fmt::print("relative residuals:");
  for (double r : fit.relative_residuals) fmt::print(" {:+.0f}%", 100 * r);
  fmt::print("\n");
  const auto source = fmt::format("calibrate allreduce: {} sizes {:.0f}-{:.0f} B, {} ranks, {}", rows.size(), rows.front().bytes,
                                  rows.back().bytes, mpi->size(), nccl ? "NCCL" : "MPI");
  update_profile(a.profile, mpi->size(), [&](MachineProfile& p) { apply_allreduce_fit(p, fit, source); });
}

}  // namespace

void register_calibrate(CLI::App& app) {
  auto* cal = app.add_subcommand("calibrate", "Microbenchmarks and fits that write a machine profile")->require_subcommand(1);
  auto* ar = cal->add_subcommand("allreduce", "Time allreduce from 4 B to 256 MB (x2 steps) over the launched ranks; fit alpha and beta");
  auto a = std::make_shared<AllreduceArgs>();
  ar->add_option("--profile", a->profile, "profile YAML to update (created if missing)")->capture_default_str();
  ar->add_option("--csv", a->csv, "write the timings here");
  add_device_option(ar, a->device, "cpu (MPI on host memory) or cuda (NCCL, GPU = node-local rank)");
  ar->add_option("--min-bytes", a->bench.min_bytes, "smallest message")->capture_default_str();
  ar->add_option("--max-bytes", a->bench.max_bytes, "largest message")->capture_default_str();
  ar->add_option("--repeats", a->bench.repeats, "timed repeats per size (after warm-up)")->capture_default_str();
  ar->add_option("--warmup", a->bench.warmup, "untimed repeats per size")->capture_default_str();
  ar->callback([a] { calibrate_allreduce(*a); });
  register_calibrate_compute(*cal);
  register_calibrate_sharing(*cal);
  register_calibrate_io(*cal);
  register_calibrate_convergence(*cal);
  register_calibrate_records(*cal);
  register_calibrate_all(*cal);
}

}  // namespace mrplan
