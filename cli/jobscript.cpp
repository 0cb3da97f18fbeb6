#include "cli/jobscript.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>
#include <string_view>

#include "model/errors.hpp"
#include "model/yaml_fields.hpp"

namespace mrplan {

extern const char* const kSitesYaml;

const char* to_string(Scheduler s) {
  switch (s) {
    case Scheduler::slurm:
      return "slurm";
    case Scheduler::lsf:
      return "lsf";
    case Scheduler::flux:
      return "flux";
  }
  return "?";
}

namespace {

Scheduler scheduler_of(const YamlFields& f) {
  const auto s = f.text("scheduler");
  for (auto k : {Scheduler::slurm, Scheduler::lsf, Scheduler::flux})
    if (s == to_string(k)) return k;
  fail_input(f.file(), f.key_path("scheduler"), fmt::format("unknown scheduler '{}' (expected slurm, lsf or flux)", s));
}

std::optional<Site> read_site(const std::string& name) {
  static const YAML::Node root = YAML::Load(kSitesYaml);
  if (!root[name]) return std::nullopt;
  const YamlFields f(root[name], "data/sites.yaml", name);
  f.only({"scheduler", "gpus_per_node", "options", "launch", "memory_dir", "nvme_dir", "max_walltime_h", "modules", "account_required",
          "source"});
  Site s;
  s.name = name;
  s.scheduler = scheduler_of(f);
  s.gpus_per_node = static_cast<int>(f.integer("gpus_per_node", 0));
  for (const auto& o : f.node()["options"]) s.options.push_back(o.as<std::string>());
  s.launch = f.text("launch");
  s.memory_dir = f.text("memory_dir", "");
  s.nvme_dir = f.text("nvme_dir", "");
  s.max_walltime_h = f.non_negative("max_walltime_h", 0);
  if (f.has("modules")) s.modules = f.texts("modules");
  s.account_required = f.has("account_required") && f.node()["account_required"].as<bool>();
  s.source = f.text("source");
  return s;
}

// Single-quoted (a quote inside closed, escaped and reopened), so that `$(...)`, backquotes, `;`
// and spaces stay text (issue 44: no command injected through a job script). A variable's value is
// always quoted: a bare one that names a command (DATA=at) reads, to a reader and to shellcheck
// (SC2209), as if its output were meant.
std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A value from the user or a plan file as one shell word: bare where every character is one a shell
// leaves alone, else quoted.
std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || std::string_view("_./:=@%+,-").find(static_cast<char>(c)) != std::string_view::npos;
  });
  return plain ? s : shell_quoted(s);
}


// A name that reaches a scheduler directive (#SBATCH -J, -A, -o) or a file name: directives are not
// shell words, so nothing can be quoted there, and only a safe character set passes.
void check_name(const std::string& value, const std::string& field) {
  const bool ok = !value.empty() && value.size() <= 128 && value.front() != '-' && value.front() != '.' &&
                  std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '.'; });
  if (!ok)
    fail_input("", field, fmt::format("'{}' is not a name a batch script can carry: expected 1 to 128 letters, digits, '_', '-' or '.', "
                                      "not starting with '-' or '.'", printable(value)));
}

// A path reaches the script as one quoted shell word; a control character (a newline) is refused,
// since no scheduler or user reads a path with one as meant.
void check_path(const std::string& value, const std::string& field) {
  if (std::any_of(value.begin(), value.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    fail_input("", field, fmt::format("'{}' holds a control character (a newline?): expected a path on one line", printable(value)));
}

// {nodes} {ranks} {gpus_per_node} filled in
std::string fill(std::string text, int nodes, int ranks, int gpn) {
  for (const auto& [key, value] : {std::pair{"{nodes}", nodes}, {"{ranks}", ranks}, {"{gpus_per_node}", gpn}})
    for (size_t at; (at = text.find(key)) != std::string::npos;) text.replace(at, std::string(key).size(), std::to_string(value));
  return text;
}

std::string hms(double s) {
  const long m = static_cast<long>(std::ceil(s / 60.0));
  return fmt::format("{:02d}:{:02d}:00", m / 60, m % 60);
}

std::string directives(const Site& site, const JobRequest& job, int nodes, int ranks, int gpn) {
  std::string out;
  auto d = [&](const char* prefix, const std::string& text) { out += fmt::format("{} {}\n", prefix, text); };
  const long minutes = static_cast<long>(std::ceil(job.time_limit_s / 60.0));
  switch (site.scheduler) {
    case Scheduler::slurm:
      d("#SBATCH", "-J " + job.job_name), d("#SBATCH", fmt::format("-N {}", nodes)), d("#SBATCH", "-t " + hms(job.time_limit_s));
      if (!job.account.empty()) d("#SBATCH", "-A " + job.account);
      d("#SBATCH", "-o " + job.job_name + ".%j.out");
      for (const auto& o : site.options) d("#SBATCH", fill(o, nodes, ranks, gpn));
      break;
    case Scheduler::lsf:
      d("#BSUB", "-J " + job.job_name), d("#BSUB", fmt::format("-W {}:{:02d}", minutes / 60, minutes % 60));
      if (!job.account.empty()) d("#BSUB", "-P " + job.account);
      d("#BSUB", "-o " + job.job_name + ".%J.out");
      for (const auto& o : site.options) d("#BSUB", fill(o, nodes, ranks, gpn));
      break;
    case Scheduler::flux:
      d("#FLUX:", fmt::format("-N {}", nodes)), d("#FLUX:", fmt::format("-t {}m", minutes)), d("#FLUX:", "--job-name=" + job.job_name);
      if (!job.account.empty()) d("#FLUX:", "--bank=" + job.account);
      d("#FLUX:", "--output=" + job.job_name + ".{{id}}.out");
      for (const auto& o : site.options) d("#FLUX:", fill(o, nodes, ranks, gpn));
      break;
  }
  return out;
}

// Each node's share of the data is copied into node memory or NVMe by the run itself (`run
// --stage-to`: its first rank per node copies only the files its ranks read, timed as MLPerf HPC's
// staging phase), and removed on every node when the job ends (an EXIT trap: a failed or finished
// run alike). The executor holds no dataset in GPU memory: device memory is staged into node memory.
std::string staging_step(const Plan& plan, const Site& site, const JobRequest& job, int nodes, std::string& data_arg) {
  if (plan.staging == Staging::none) return "";
  if (plan.staging_async)  // `run --stage-to` copies before training, which is not the run the plan prices
    return "# the plan copies its data beside the first epoch (io.staging_async), which `run` does not: it reads from where it "
           "lies (io.staging_async: false stages each node's share before training)\n";
  const bool nvme = job.staged_to == TierKind::nvme && !site.nvme_dir.empty();
  const std::string dest = nvme ? site.nvme_dir : site.memory_dir;
  if (plan.data_dir.empty() || dest.empty() || !job.staged_to)
    return fmt::format("# the plan stages its data ({}), but {}: it reads from where it lies\n", to_string(plan.staging),
                       plan.data_dir.empty()     ? "gives no data.dir"
                       : !job.staged_to ? "a node's share fits no tier"
                                        : "this site has no such place");
  std::string per_node;
  switch (site.scheduler) {
    case Scheduler::slurm:
      per_node = fmt::format("srun -N {} --ntasks-per-node=1", nodes);
      break;
    case Scheduler::lsf:
      per_node = fmt::format("jsrun -n {} -r1 -a1 -c1", nodes);
      break;
    case Scheduler::flux:
      per_node = fmt::format("flux run -N {0} -n {0}", nodes);
      break;
  }
  data_arg = " --data \"$DATA\" --stage-to \"$STAGED\"";
  // the site's folder in double quotes (its $USER expands on the node)
  return fmt::format("# the run stages each node's share of the data into node {} (MLPerf HPC's staging phase; the plan's io.staging),\n"
                     "# removed on every node at the end\n"
                     "STAGED=\"{}\"\n"
                     "trap '{} rm -rf \"$STAGED\"' EXIT\n",
                     nvme ? "NVMe" : "memory", dest, per_node);
}

// The environment the build used (the site's modules, the user's file), then the program and the
// data by absolute path.
std::string environment_step(const Site& site, const JobRequest& job) {
  std::string out;
  if (!site.modules.empty()) out += fmt::format("module load {}\n", fmt::join(site.modules, " "));
  if (!job.env_file.empty()) out += fmt::format(". {}\n", shell_word(job.env_file));
  return out + fmt::format("MRPLAN={}\n", shell_quoted(job.mrplan));
}

// Every resolution folder the plan reads, before the launch: res1 must be there, a coarse one is
// made from it where missing (mrplan coarsen, the workload's own operation), so that the job does
// not fail minutes in.
std::string data_step(const Plan& plan, const JobRequest& job) {
  if (plan.data_dir.empty()) return "# the plan names no data folder (data.dir, or --data): mrplan run reads the one it is given\n";
  std::filesystem::path dir = plan.data_dir;
  if (dir.is_relative() && !std::filesystem::path(job.plan_file).parent_path().empty())  // as mrplan run resolves it
    dir = std::filesystem::path(job.plan_file).parent_path() / dir;
  std::set<int> resolutions;
  for (const auto& st : plan.stages)
    for (const auto& m : st.models) resolutions.insert(m.resolution);
  std::string out = fmt::format("DATA={}\n[ -d \"$DATA/res1\" ] || {{ echo \"mrplan job: $DATA/res1 (the dense data) is missing\" >&2; exit 2; }}\n",
                                shell_quoted(dir.string()));
  for (const int r : resolutions)
    if (r > 1)
      out += fmt::format("[ -d \"$DATA/res{0}\" ] || \"$MRPLAN\" coarsen \"$DATA/res1\" \"$DATA/res{0}\" --factor {0} --workload {1}\n", r,
                         shell_word(plan.workload));
  return out;
}

}  // namespace

// What the executor cannot do on a GPU yet (docs/execution.md), from the plan's structure.
std::vector<std::string> gpu_limits(const Plan& plan) {
  std::vector<std::string> out;
  for (size_t i = 1; i < plan.stages.size(); ++i) {
    const auto& h = plan.stages[i - 1].handoff;
    const bool transfer = h.kind == Handoff::Kind::transfer &&
                          std::any_of(plan.stages[i].models.begin(), plan.stages[i].models.end(), [](const ModelRun& m) { return m.from_previous; });
    if (transfer && out.empty()) out.push_back("a stage that starts from the one before ends in a crash on a GPU at its switch (MRT; docs/execution.md)");
    if (h.kind == Handoff::Kind::fuse && out.size() < 2) out.push_back("a fusion stage has never run on a GPU (MRMF; docs/execution.md)");
  }
  return out;
}

Site find_site(const std::string& machine, std::optional<Scheduler> scheduler) {
  if (auto s = read_site(machine); s && (!scheduler || s->scheduler == *scheduler)) return *s;
  if (!scheduler)
    fail_input("", "--scheduler", fmt::format("no site entry for machine '{}': say which scheduler it runs (slurm, lsf or flux)", machine));
  return *read_site(to_string(*scheduler));
}

double requested_time_s(double p90_s) { return std::ceil((1.2 * p90_s + 600.0) / 60.0) * 60.0; }

void check_job_request(const Plan& plan, const Site& site, const JobRequest& job) {
  check_name(job.job_name, "--name (default: the plan's name)");
  if (!job.account.empty()) check_name(job.account, "--account");
  if (job.account.empty() && site.account_required)
    fail_input("", "--account", fmt::format("{} charges every job to a project: give --account PROJECT ({})", site.name, site.source));
  check_path(job.env_file, "--env-file");
  check_path(job.out_dir, "--run-out");
  check_path(job.plan_file, "plan file");
  check_path(job.mrplan, "mrplan program");
  check_path(plan.data_dir, "--data (the plan's data.dir)");
}

std::string render_jobscript(const Plan& plan, const Site& site, int gpus_per_node, const JobRequest& job) {
  check_job_request(plan, site, job);
  int ranks = 0;
  for (const auto& s : plan.stages) ranks = std::max(ranks, s.gpus());
  const int gpn = site.gpus_per_node > 0 ? site.gpus_per_node : gpus_per_node;
  const int nodes = (ranks + gpn - 1) / gpn;
  std::string data_arg;
  const std::string staging = staging_step(plan, site, job, nodes, data_arg);
  std::string out = "#!/bin/bash\n" + directives(site, job, nodes, ranks, gpn);
  out += fmt::format("# {} plan '{}' on {} GPUs ({} nodes of {}); written by mrplan jobscript for {} ({})\n", to_string(plan.method),
                     printable(plan.name), ranks, nodes, gpn, site.name, site.source);
  for (const auto& limit : gpu_limits(plan)) out += "# known limit: " + limit + "\n";
  out += "set -euo pipefail\n" + environment_step(site, job) + data_step(plan, job) + staging;
  // MRPLAN_DEVICE=cpu runs the same script on CPUs (tests/cli/jobscript_run.sh)
  out += fmt::format("{} \"$MRPLAN\" run {} --out {} --device \"${{MRPLAN_DEVICE:-cuda}}\"{}\n", fill(site.launch, nodes, ranks, gpn),
                     shell_word(job.plan_file), shell_word(job.out_dir), data_arg);
  return out;
}

}  // namespace mrplan
