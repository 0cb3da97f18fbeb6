#include <CLI/CLI.hpp>

#include "cli/version.hpp"
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/inputs.hpp"
#include "exec/run.hpp"

namespace mrplan {

void register_run(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Train a plan for real (under mpirun, srun, jsrun or flux) and write its Measurement record");
  auto plan = std::make_shared<std::string>();
  auto o = std::make_shared<RunOptions>();
  o->version = version_text();
  cmd->add_option("plan", *plan, "plan YAML file")->required();
  cmd->add_option("--out", o->out_dir, "output folder: record.json, mllog.txt, checkpoints/")->required();
  cmd->add_option("--data", o->data_dir, "data folder (overrides the plan's data.dir)");
  cmd->add_option("--resume", o->resume_dir, "continue the run whose --out folder this is");
  cmd->add_option("--threads", o->threads, "intra-op threads per rank (default: cores / ranks)");
  cmd->add_option("--device", o->device, "cpu, cuda (one GPU per rank, gradients over NCCL) or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed for initialisation and data order")->capture_default_str();
  cmd->add_option("--stop-after", o->stop_after_epochs, "stop after this many epochs, as if killed (for resume tests)");
  cmd->add_flag("--quiet", o->quiet, "no per-epoch lines");
  cmd->callback([plan, o] { run_plan(load_plan(*plan), *o); });
}

}  // namespace mrplan
