#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "cli/commands.hpp"
#include "cli/inputs.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {

struct AllArgs {
  std::string profile = "out/local-profile.yaml";
  std::string data;
  std::vector<std::string> workloads{"cosmoflow-mrt"};
  std::vector<int> batches{2, 4, 8};
  int ranks = 2;
  int threads = 1;
  DeviceKind device = DeviceKind::cpu;
  std::string launcher = "mpirun -np {n}";  // how this site starts n ranks: {n} is the count
  double max_bytes = 64e6;
  double compute_seconds = 0, sharing_seconds = 0;
};

// Each step is its own process: the allreduce needs mpirun, and the compute and io timings must
// not share the cores with idle MPI ranks polling for messages.
void step(const std::string& what, const std::string& cmd) {
  fmt::print("== {}\n$ {}\n", what, cmd);
  std::fflush(stdout);
  const int rc = std::system(cmd.c_str());
  if (rc != 0) fail_input("", "calibrate all", fmt::format("{} failed (exit status {}); the profile keeps the steps before it", what, rc));
}

// The launch prefix for n ranks: the launcher with {n} filled in.
std::string launch(const std::string& launcher, int n) {
  const auto at = launcher.find("{n}");
  if (at == std::string::npos)
    fail_input("command line", "--launcher", fmt::format("'{}': expected {{n}} where the rank count goes (e.g. \"srun -n {{n}}\")", launcher));
  return launcher.substr(0, at) + std::to_string(n) + launcher.substr(at + 3);
}

void calibrate_all(const AllArgs& a) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const auto png = std::filesystem::path(a.profile).replace_extension("").string() + "-roofline.png";
  if (!a.data.empty() && !std::filesystem::is_directory(a.data)) fail_input(a.data, "--data", "not a folder");
  if (a.ranks > 1)
    step("allreduce", fmt::format("{} '{}' calibrate allreduce --profile '{}' --max-bytes {} --device {}", launch(a.launcher, a.ranks),
                                  self, a.profile, a.max_bytes, to_string(a.device)));
  else
    fmt::print("== allreduce: skipped (one rank per node has nothing to reduce); the profile keeps its network section\n");
  step("compute",
       fmt::format("'{}' calibrate compute --profile '{}' --workload {} --batches {} --threads {} --devices-per-node {} --device {} "
                   "--min-seconds {} --plot '{}'",
                   self, a.profile, fmt::join(a.workloads, ","), fmt::join(a.batches, ","), a.threads, a.ranks, to_string(a.device),
                   a.compute_seconds, png));
  if (a.ranks > 1)
    step("node sharing", fmt::format("{} '{}' calibrate sharing --profile '{}' --workload {} --threads {} --device {} --min-seconds {}",
                                     launch(a.launcher, a.ranks), self, a.profile, fmt::join(a.workloads, ","), a.threads,
                                     to_string(a.device), a.sharing_seconds));
  else
    fmt::print("== node sharing: skipped (one rank per node shares nothing)\n");
  const std::string first = a.workloads.front().substr(0, a.workloads.front().find(':'));
  if (!a.data.empty())
    step("io", fmt::format("'{}' calibrate io --profile '{}' --data '{}' --workload {} --devices-per-node {}", self, a.profile, a.data,
                           first, a.ranks));
  else
    fmt::print("== io: skipped (no --data); the profile keeps its io section\n");
  fmt::print("calibrated profile: {}\n", a.profile);
}

}  // namespace

void register_calibrate_all(CLI::App& cal) {
  auto* c = cal.add_subcommand("all", "allreduce (under the site's launcher), compute and io for this machine, into one profile");
  auto a = std::make_shared<AllArgs>();
  c->add_option("--profile", a->profile, "profile YAML to write (updated if present)")->capture_default_str();
  c->add_option("--data", a->data, "dataset folder for the io step (skipped without it)");
  c->add_option("--workload", a->workloads, "workloads whose ops are timed, name[:size[:width]]; the first one's layout is --data's")
      ->delimiter(',')
      ->capture_default_str();
  c->add_option("--batches", a->batches, "local batch sizes the compute step times (cover the runs' batches)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->add_option("--ranks", a->ranks, "ranks per node the runs will use")->check(CLI::PositiveNumber)->capture_default_str();
  c->add_option("--threads", a->threads, "intra-op threads per rank the runs will use")->capture_default_str();
  add_device_option(c, a->device, "cpu or cuda (NCCL allreduce, GPU compute)");
  c->add_option("--compute-seconds", a->compute_seconds, "the compute step times rounds for at least this long (its --min-seconds)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c->add_option("--sharing-seconds", a->sharing_seconds, "the node-sharing step times rounds for at least this long (its --min-seconds)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c->add_option("--launcher", a->launcher, "how to start {n} ranks here: \"srun -n {n}\", \"jsrun -n {n} -a1 -g1\", \"flux run -n {n}\"")
      ->capture_default_str();
  c->add_option_function<std::string>(
      "--mpirun", [a](const std::string& m) { a->launcher = m + " -np {n}"; }, "an MPI launcher taking -np (older form of --launcher)");
  c->add_option("--max-bytes", a->max_bytes, "largest allreduce message")->capture_default_str();
  c->callback([a] { calibrate_all(*a); });
}

}  // namespace mrplan
