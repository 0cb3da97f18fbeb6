#include <CLI/CLI.hpp>

#include "cli/version.hpp"
#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/inputs.hpp"
#include "exec/run.hpp"
#include "model/errors.hpp"
#include "model/launch_env.hpp"
#include "model/method_table.hpp"
#include "model/profile_yaml.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

namespace {

// Where the run reads and writes: its folder, the data, the node-local copy, a resumed run.
void add_folder_options(CLI::App* cmd, RunOptions& o) {
  cmd->add_option("--out", o.out_dir, "output folder: record.json, mllog.txt, checkpoints/")->required();
  cmd->add_option("--data", o.data_dir, "data folder (overrides the plan's data.dir)");
  cmd->add_option("--stage-to", o.stage_to,
                  "node-local folder (/dev/shm/..., NVMe; {node}: the node's number): each node copies there only the files its "
                  "ranks read, and they read those (MLPerf HPC's staging; the plan's io.staging prices it)");
  cmd->add_option("--ranks-per-node", o.ranks_per_node,
                  "with --stage-to: the launcher places this many consecutive ranks per node (default: "
                  "by host name)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--resume", o.resume_dir, "continue the run whose --out folder this is (the same plan, on the same ranks)");
  cmd->add_flag("--overwrite", o.overwrite, "replace the run already in --out (refused otherwise)");
  cmd->add_option("--force", o.force, "on --resume, plan fields that may differ from the checkpoint's (e.g. stages[1].learning_rate)")
      ->delimiter(',');
  cmd->add_option("--keep-checkpoints", o.keep_checkpoints, "checkpoint generations kept")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
}

// How the ranks compute and talk: threads, device, the gradients' communicator, seed, determinism.
void add_execution_options(CLI::App* cmd, RunOptions& o) {
  cmd->add_option("--watchdog-s", o.watchdog_s,
                  "end the job when a rank makes no progress for this long (at least; scaled up by the slowest step)")
      ->check(CLI::Range(1.0, 1e7))
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "intra-op threads per rank (default: cores / ranks)")->check(CLI::Range(1, 4096));
  add_device_option(cmd, o.device, "cpu, cuda (one GPU per rank, gradients over NCCL) or auto", true);
  add_choice_option(cmd, "--comm", o.comm, {{"auto", TensorComm::automatic}, {"nccl", TensorComm::nccl}, {"mpi", TensorComm::mpi}},
                    "a communicator",
                    "what averages gradients between a model's ranks on GPUs: nccl, or mpi (copied through host memory: for ranks "
                    "sharing one GPU, which NCCL refuses); auto: nccl on GPUs, mpi on CPUs");
  cmd->add_option("--seed", o.seed, "seed for initialisation and data order")->capture_default_str();
  cmd->add_flag("--deterministic", o.deterministic,
                "GPU: deterministic kernels only, so that a resumed run ends with the uninterrupted one's parameters bit for bit (slower; "
                "a CPU run always is)");
}

// The plan as the command line edits it (captured steps, a pretrained model), and the time the
// profile predicts for it; a bad file is refused on rank 0 alone (every rank reads the same files).
Plan plan_to_run(const std::string& file, const std::string& pretrained, bool capture, RunOptions& o) {
  try {
    Plan p = load_plan(file);
    if (capture) p.steps = StepExecution::captured;  // the record's plan says so, and validate predicts it
    if (!pretrained.empty()) {
      if (!starts_pretrained(p))
        fail_input("command line", "--pretrained",
                   fmt::format("the plan {} is {} {} plan: only a transfer plan starts from a pretrained model", file,
                               method_row(p.method).article, to_string(p.method)));
      start_from(p, pretrained);
    }
    if (!o.profile_file.empty()) {  // read on every rank: a bad file is refused before anything starts
      const auto t = simulate(p, load_profile_file(o.profile_file)).totals;
      o.predicted = RunOptions::Prediction{t.time_to_target_s, t.reached_target};
    }
    return p;
  } catch (const InputError&) {
    if (detect_launch().rank > 0) throw ReportedByAnotherRank{2};
    throw;
  }
}

}  // namespace

void register_run(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Train a plan for real (under mpirun, srun, jsrun or flux) and write its Measurement record");
  auto plan = std::make_shared<std::string>();
  auto pretrained = std::make_shared<std::string>();
  auto capture = std::make_shared<bool>(false);
  auto o = std::make_shared<RunOptions>();
  o->version = version_text();
  cmd->add_option("plan", *plan, "plan YAML file")->required();
  add_folder_options(cmd, *o);
  cmd->add_option("--pretrained", *pretrained,
                  "a transfer plan's pretrained model: an earlier run's model.pt, trained on related data (overrides the plan's "
                  "pretrained.checkpoint)");
  add_execution_options(cmd, *o);
  cmd->add_option("--profile", o->profile_file,
                  "profile of this machine (calibrate all): the run prints the time it predicts, to set beside the one measured");
  cmd->add_option("--stop-after", o->stop_after_epochs, "stop after this many epochs, as if killed (for resume tests)");
  cmd->add_flag("--capture", *capture,
                "GPU: capture each stage's training step (forward, backward, Adam) as a CUDA graph after 3 eager steps and replay it: "
                "one launch a step, as the plan's `steps: captured` asks (one rank a model; a build against a CUDA LibTorch 2.1+)");
  cmd->add_flag("--quiet", o->quiet, "no per-epoch lines (the header, stage ends and summary stay)");
  cmd->callback([plan, pretrained, o, capture] {
    const Plan p = plan_to_run(*plan, *pretrained, *capture, *o);
    // a job's log (a pipe under srun, jsrun or mpirun) shows each epoch line as it is printed, and a
    // crash loses none: fully buffered, they came in 4 KB bursts and the last ones were lost
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    run_plan(p, *o);
  });
}

}  // namespace mrplan
