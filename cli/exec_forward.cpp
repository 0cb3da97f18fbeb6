#include "cli/exec_forward.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "model/errors.hpp"

namespace mrplan {

const std::vector<std::pair<std::string, std::string>>& exec_commands() {
  static const std::vector<std::pair<std::string, std::string>> commands = {
      {"datagen", "Write a synthetic dataset in the real HDF5 layout (CosmoFlow, DeepCAM, Neuron Inverter)"},
      {"coarsen", "Average (or sum) every 2^d block of every file's spatial axes"},
      {"encode", "Write an encoded copy of a dataset (lut, diff, deflate, raw); `run` reads it unchanged"},
      {"run", "Train a plan for real (under mpirun, srun, jsrun or flux) and write its Measurement record"},
      {"calibrate", "Fit this machine's profile: allreduce, compute, sharing, io, convergence, all; records from any cluster"}};
  return commands;
}

bool is_exec_command(const std::string& name) {
  for (const auto& [n, what] : exec_commands())
    if (n == name) return true;
  return false;
}

void run_exec_program(char** argv) {
  const auto exe = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "mrplan-exec";
  if (!std::filesystem::exists(exe))
    fail_input(exe.string(), argv[1], "this build has no execution backend: configure with -DMRPLAN_WITH_EXEC=ON (LibTorch, MPI, HDF5)");
  const std::string path = exe.string();
  argv[0] = const_cast<char*>(path.c_str());
  execv(path.c_str(), argv);
  fail_input(path, argv[1], fmt::format("cannot start it: {}", std::strerror(errno)));
}

}  // namespace mrplan
