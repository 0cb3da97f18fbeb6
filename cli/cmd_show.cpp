#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <string_view>

#include "calibrate/calibrated_builtins.hpp"
#include "cli/commands.hpp"
#include "cli/inputs.hpp"
#include "cli/profile_keys.hpp"
#include "cli/text_table.hpp"
#include "model/builtin_profiles.hpp"
#include "model/compute_cost.hpp"
#include "model/layer_table.hpp"
#include "model/plan_yaml.hpp"
#include "model/profile_yaml.hpp"
#include "model/builtin_workloads.hpp"
#include "model/workload_yaml.hpp"
#include "sim/builtin_plans.hpp"
#include "sim/simulate.hpp"

namespace mrplan {

namespace {

std::string shape(const std::vector<int64_t>& s) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) o += (i ? "x" : "") + std::to_string(s[i]);
  return o;
}

}  // namespace

// What a built-in's timing fits come from, in a few words: its own MLPerf HPC runs, the MRT paper's
// rows, or what another machine lent it (calibrate/calibrated_builtins).
std::string fits_origin(const MachineProfile& m) {
  auto any = [&](std::string_view head) {
    return std::find_if(m.fitted.begin(), m.fitted.end(), [&](const FittedParameter& f) { return f.source.starts_with(head); });
  };
  if (any("calibrate records: ") != m.fitted.end()) return "its MLPerf HPC runs";
  if (const auto lent = any("lent by "); lent != m.fitted.end()) return lent->source.substr(0, lent->source.find(' ', 8));
  if (any("MRT") != m.fitted.end()) return "the MRT paper's rows";
  return "transferred from another machine";
}

// What a newcomer can name without writing a file: plans (APP@MACHINE), machines, workloads.
void print_builtins(const std::string& what) {
  const bool all = what.empty();
  if (all || what == "plans") {
    TextTable plans({"plan (APP@MACHINE)", "method", "workload", "stages", "GPUs", "scaling", "target"});
    for (const auto& app : builtin_plan_names()) {
      const Plan p = builtin_plan(app + "@summit");
      plans.add({app + "@MACHINE", to_string(p.method), p.workload, std::to_string(p.stages.size()), std::to_string(p.stages.back().gpus()),
                 to_string(p.scaling),
                 fmt::format("{} {} {}", p.target_metric, p.maximize ? ">=" : "<=", p.target_value)});
    }
    fmt::print("{}\n", plans.str());
  }
  if (all || what == "machines") {
    TextTable machines({"machine", "GPUs/node", "GPU memory GB", "timing fitted to", "description"});
    for (const auto& name : builtin_profile_names()) {
      const auto& m = calibrated_builtin_profile(name);
      machines.add({name, std::to_string(m.gpus_per_node), fmt::format("{:.0f}", m.gpu_memory_bytes / 1e9), fits_origin(m), m.description});
    }
    fmt::print("{}\n", machines.str());
    fmt::print("compose a profile of another machine from its parts: mrplan profile compose --list\n\n");
  }
  if (all || what == "workloads") {
    TextTable workloads({"workload", "input (res 1)", "ops", "parameters"});
    for (const auto& w : builtin_workload_names()) {
      const auto spec = builtin_workload(w);
      const auto t = resolve(spec, coarsened_spatial(spec, 1), 1, 4.0, 1);
      workloads.add({w, shape(t.input_shape), std::to_string(spec.ops.size()), fmt::format("{:.2f} M", t.total_params() / 1e6)});
    }
    fmt::print("{}", workloads.str());
  }
  if (all || what == "plans")
    fmt::print(
        "\nAPP@MACHINE names a built-in plan (mrplan plan APP@MACHINE prints it as YAML); optimize takes the application "
        "alone (cosmoflow@perlmutter).\n");
}

namespace {

// `list`: the built-in plans, machines and workloads.
void register_list(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List the built-in plans, machines and workloads");
  auto what = std::make_shared<std::string>();
  cmd->add_option("what", *what, "plans, machines or workloads (default: all three)")
      ->check(CLI::IsMember({"plans", "machines", "workloads"}));
  cmd->callback([what] { print_builtins(*what); });
}

// `plan`: a plan (built-in or file) as editable YAML.
void register_plan(CLI::App& app) {
  auto* cmd = app.add_subcommand("plan", "Print a plan (built-in APP@MACHINE or file) as editable YAML");
  auto name = std::make_shared<std::string>();
  cmd->add_option("name", *name, "e.g. cosmoflow-mrt@summit, deepcam-baseline@cori-gpu")->required();
  cmd->callback([name] {
    const Plan plan = load_plan(*name);
    machine_for(plan, "");  // a plan for a machine mrplan does not know is refused here, not at predict time
    fmt::print("{}", plan_to_yaml(plan));
  });
}

// `profile`: a machine profile as editable YAML, its keys (--keys), or `profile compose`.
void register_profile(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("profile", "Print a machine profile (calibrated built-in or file) as editable YAML; compose one from parts");
  auto name = std::make_shared<std::string>();
  auto keys = std::make_shared<bool>(false);
  // not "name": `profile compose` has --name, which CLI11 2.4 refuses beside a parent's positional of that name
  cmd->add_option("machine", *name, "a built-in machine (mrplan list) or a profile YAML");
  cmd->add_flag("--keys", *keys, "print every number a profile may give (key, default, accepted values) as a Markdown table");
  register_profile_compose(*cmd);
  cmd->callback([cmd, name, keys] {
    if (cmd->got_subcommand("compose")) return;
    if (*keys) {
      fmt::print("{}", profile_keys_markdown());
      return;
    }
    if (name->empty()) throw CLI::RequiredError("name (a built-in profile or a profile YAML), --keys, or the subcommand compose");
    fmt::print("{}", profile_to_yaml(resolve_profile(*name)));
  });
}

// `workload`: a workload's layer table at a resolution and batch, or its op list as YAML.
void register_workload(CLI::App& app) {
  auto* cmd = app.add_subcommand("workload", "Print a workload's layer table at a resolution and batch");
  struct Opts {
    std::string name;
    int resolution = 1, batch = 1;
    int64_t size = 0;
    double width = 1.0;
    bool yaml = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("name", o->name, "cosmoflow-mrt, cosmoflow-mlperf, deepcam, neuron-inverter or a workload YAML")->required();
  cmd->add_option("--resolution", o->resolution, "coarsening factor (1 = original)")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  cmd->add_option("--batch", o->batch, "local batch")->check(CLI::Range(1, 1 << 30))->capture_default_str();
  cmd->add_option("--size", o->size, "dense input size (CPU-sized variants)");
  cmd->add_option("--width", o->width, "filter-count multiplier")->capture_default_str();
  cmd->add_flag("--yaml", o->yaml, "print the op list as a workload YAML file instead");
  cmd->callback([o] {
    Plan p;
    p.workload = o->name;
    p.workload_options = {o->size, o->width};
    const auto spec = plan_network(p);
    if (o->yaml) {
      fmt::print("{}", workload_to_yaml(spec));
      return;
    }
    ModelRun run;
    run.resolution = o->resolution, run.local_batch = o->batch;
    p.stages.push_back(Stage{});  // the size hint of a failure looks at the resolutions of the plan's models
    p.stages.back().models.push_back(run);
    const auto t = model_run_table(p, spec, run);
    TextTable tt({"layer", "kind", "in", "out", "params", "fwd GFLOP", "bwd GFLOP", "MB read", "MB written"});
    for (const auto& l : t.layers)
      tt.add({l.name, layer_family(l), shape(l.in_shape), shape(l.out_shape), std::to_string(l.params),
              fmt::format("{:.3f}", l.fwd_flops / 1e9), fmt::format("{:.3f}", l.bwd_flops / 1e9), fmt::format("{:.1f}", l.bytes_read / 1e6),
              fmt::format("{:.1f}", l.bytes_written / 1e6)});
    fmt::print("{}", tt.str());
    fmt::print("{}: input {} x batch {}, {} layers, {} parameters, {:.2f} GFLOP forward, {:.2f} GFLOP backward, sample {:.2f} MB on disk\n",
               spec.name, shape(t.input_shape), t.batch, t.layers.size(), t.total_params(), t.total_fwd_flops() / 1e9,
               t.total_bwd_flops() / 1e9, t.sample_bytes_on_disk / 1e6);
  });
}

}  // namespace

void register_show(CLI::App& app) {
  register_list(app);
  register_plan(app);
  register_profile(app);
  register_workload(app);
}

}  // namespace mrplan
