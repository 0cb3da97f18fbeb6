#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <filesystem>

#include "cli/commands.hpp"
#include "cli/inputs.hpp"
#include "cli/jobscript.hpp"
#include "cli/optimize_args.hpp"
#include "cli/output_file.hpp"
#include "model/errors.hpp"
#include "model/plan_yaml.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

namespace {

struct JobscriptArgs {
  std::optional<Scheduler> scheduler;  // empty: the machine's site's
  std::string plan, machine, account, time, out, run_out = "out/run", name, data, mrplan, env_file;
  size_t samples = 200;
  bool overwrite = false;
  PlanEdits edits;  // --set and --local-batch, as predict takes them
};

// A file the command would write over (the script, the plan beside it): a user's edits are lost.
void refuse_overwrite(const std::string& path, const std::string& what, bool overwrite) {
  if (!overwrite && std::filesystem::exists(path))
    fail_input(path, "", fmt::format("exists: the {} would be written over (your edits lost): --overwrite to replace it", what));
}

// A plan whose model does not fit its GPU's memory would fail at its first step, after the queue.
void check_fits(const Record& r, const Plan& plan, const MachineProfile& m) {
  for (const auto& st : r.stages)
    for (const auto& model : st.models)
      if (!model.memory_fits)
        fail_input(plan.source_file.empty() ? plan.name : plan.source_file,
                   fmt::format("stages.{}{}", st.name, st.models.size() > 1 ? "." + model.name : ""),
                   fmt::format("needs {:.1f} GB per GPU, {}'s GPUs have {:.0f} GB: a smaller local batch, or more GPUs", model.memory_bytes / 1e9,
                               m.name, model.memory_capacity_bytes / 1e9));
}

// This program by absolute path: the job runs it wherever the batch node's PATH leads.
std::string this_program() {
  std::error_code ec;
  const auto self = std::filesystem::canonical("/proc/self/exe", ec);
  return ec ? "mrplan" : self.string();
}

// The limit to ask for: the user's, or the prediction's P90 with a margin (`r`: the point prediction).
double time_limit_s(Record r, const Plan& plan, const MachineProfile& m, const JobscriptArgs& a, std::string& why) {
  if (!a.time.empty()) {
    why = "as asked";
    return parse_duration_s(a.time, "--time");
  }
  add_spread(r, plan, m, a.samples, 1);
  const double p90 = r.spread ? r.spread->time_to_target_s.p90 : r.totals.time_to_target_s;
  why = fmt::format("the predicted P90 {:.2f} h with 20% and 10 min added", p90 / 3600);
  return requested_time_s(p90);
}

void jobscript(const JobscriptArgs& a) {
  Plan plan = edited(load_plan(a.plan), a.edits);
  if (!a.data.empty()) plan.data_dir = a.data;
  const auto machine = edited(machine_for(plan, a.machine), a.edits);
  const Site site = find_site(machine.name, a.scheduler);
  const auto folder = a.out.empty() ? std::filesystem::path(".") : std::filesystem::path(a.out).parent_path();
  JobRequest job;
  job.job_name = a.name.empty() ? plan.name.substr(0, plan.name.find('@')) : a.name;
  job.account = a.account, job.out_dir = a.run_out;
  job.plan_file = a.plan;
  job.mrplan = a.mrplan.empty() ? this_program() : a.mrplan;
  job.env_file = a.env_file;
  check_job_request(plan, site, job);  // before the job's name becomes a file name
  const auto prepared = prepare(plan, machine);
  const Record predicted = simulate(prepared, machine);
  check_fits(predicted, plan, machine);
  const bool changed = !a.data.empty() || !a.edits.sets.empty() || a.edits.local_batch > 0;
  const bool own_plan_file = !std::filesystem::is_regular_file(a.plan) || changed;
  if (own_plan_file) job.plan_file = (folder / (job.job_name + ".yaml")).string();
  const std::string plan_file_here = job.plan_file;
  job.plan_file = std::filesystem::absolute(job.plan_file).lexically_normal().string();  // the job may start elsewhere
  if (!a.out.empty()) refuse_overwrite(a.out, "job script", a.overwrite);
  if (own_plan_file) {  // mrplan run reads a plan file: write the one the job runs
    refuse_overwrite(plan_file_here, "plan file beside the script", a.overwrite);
    write_output(plan_file_here, plan_to_yaml(plan), "plan");
  }
  std::string why;
  job.time_limit_s = time_limit_s(predicted, plan, machine, a, why);
  // the full-resolution dataset, the largest the plan reads
  if (plan.staging != Staging::none) job.staged_to = prepared.stages.back().models.back().placement.staged;
  const auto script = render_jobscript(plan, site, machine.gpus_per_node, job);
  if (a.out.empty()) fmt::print("{}", script);
  else write_output(a.out, script, "job script");
  fmt::print(stderr, "{} job for {} ({}): time limit {:.2f} h, {}\n", to_string(site.scheduler), site.name, site.source,
             job.time_limit_s / 3600, why);
  if (site.max_walltime_h > 0 && job.time_limit_s > site.max_walltime_h * 3600)
    fmt::print(stderr, "warning: {} allows {} h at most: checkpoint (plan checkpoint_every) and resubmit with mrplan run --resume\n",
               site.name, site.max_walltime_h);
  if (plan.staging != Staging::none && plan.data_dir.empty())
    fmt::print(stderr, "warning: the plan stages its data but names no data folder: give --data DIR\n");
  for (const auto& limit : gpu_limits(plan)) fmt::print(stderr, "warning: known limit: {}\n", limit);
}

}  // namespace

void register_jobscript(CLI::App& app) {
  auto* cmd = app.add_subcommand("jobscript", "Write a Slurm, LSF or Flux batch script that runs a plan on its machine");
  auto a = std::make_shared<JobscriptArgs>();
  cmd->add_option("plan", a->plan, "plan YAML file, built-in APP@MACHINE or a Record (.json)")->required();
  add_choice_option(cmd, "--scheduler", a->scheduler, {Scheduler::slurm, Scheduler::lsf, Scheduler::flux}, "a scheduler",
                    "the batch system (default: the machine's)");
  cmd->add_option("--machine", a->machine, "machine (built-in or profile YAML) whose site conventions and prediction to use");
  cmd->add_option("--account", a->account, "project or account to charge");
  cmd->add_option("--time", a->time, "time limit (2h, 90m); default: the prediction's P90 plus a margin");
  cmd->add_option("--data", a->data, "data folder on the cluster (the plan's data.dir)");
  cmd->add_option("--run-out", a->run_out, "the run's --out folder on the cluster")->capture_default_str();
  cmd->add_option("--name", a->name, "job name (default: the plan's)");
  cmd->add_option("--samples", a->samples, "Monte Carlo draws for the P90")
      ->check(CLI::Range(size_t{0}, kMaxDraws))
      ->capture_default_str();
  cmd->add_option("--out", a->out, "write the script here (default: print it)");
  add_plan_edit_options(cmd, a->edits);
  cmd->add_flag("--overwrite", a->overwrite, "replace the script and the plan file beside it where they exist (refused otherwise)");
  cmd->add_option("--mrplan", a->mrplan, "the mrplan program on the cluster (default: this one, by absolute path)");
  cmd->add_option("--env-file", a->env_file, "a file the job sources first: the environment mrplan was built in (modules, spack)");
  cmd->callback([a] { jobscript(*a); });
}

}  // namespace mrplan
