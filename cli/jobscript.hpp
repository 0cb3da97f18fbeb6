#pragma once
// `mrplan jobscript`: a batch script that runs a plan where the user's centre runs jobs (Slurm,
// LSF, Flux), from the centres' conventions in data/sites.yaml.
#include <optional>
#include <string>
#include <vector>

#include "model/plan.hpp"
#include "model/storage_tier.hpp"

namespace mrplan {

enum class Scheduler { slurm, lsf, flux };
const char* to_string(Scheduler s);

struct Site {
  std::string name;
  Scheduler scheduler = Scheduler::slurm;
  int gpus_per_node = 0;  // 0: the machine profile's
  std::vector<std::string> options;
  std::string launch, memory_dir, nvme_dir, source;
  double max_walltime_h = 0;         // 0: not known
  std::vector<std::string> modules;  // loaded before the run: the environment mrplan was built in
  bool account_required = false;     // the centre charges every job to a project (Summit's #BSUB -P)
};

// The site named `machine` when data/sites.yaml has it and it uses `scheduler` (or no scheduler is
// asked for); otherwise the scheduler's generic entry. Throws when neither says which scheduler.
Site find_site(const std::string& machine, std::optional<Scheduler> scheduler);

struct JobRequest {
  std::string plan_file;  // as `mrplan run` will read it on the cluster
  std::string out_dir, account, job_name, mrplan = "mrplan";  // mrplan: the program by absolute path
  std::string env_file;  // sourced before the run (the environment the build used); empty: none
  double time_limit_s = 0;
  std::optional<TierKind> staged_to;  // where the prediction places a staged dataset (model/io_cost); none: it fits no tier
};

// Refuses, naming the field, a name that a directive or a file name cannot carry (a safe character
// set) and a path with a control character; every path reaches the script as one quoted word.
void check_job_request(const Plan& plan, const Site& site, const JobRequest& job);

// What the executor cannot do on a GPU yet, from the plan's structure (a transfer between stages,
// a fusion), one sentence each: the script and the command say them.
std::vector<std::string> gpu_limits(const Plan& plan);

// The script: directives (nodes, time, account, name, the site's options), the environment (the
// site's modules, --env-file), the data folders checked (coarse ones made from res1), the staging
// step where the plan stages its data (into node memory, or NVMe where staged_to says; removed at
// the end), then one rank per GPU.
std::string render_jobscript(const Plan& plan, const Site& site, int gpus_per_node, const JobRequest& job);

// The wall time to ask for: the prediction's P90 with a fifth more and ten minutes for start-up,
// rounded up to whole minutes.
double requested_time_s(double p90_s);

}  // namespace mrplan
