#include "sim/depth_warnings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "model/builtin_workloads.hpp"
#include "model/layer_table.hpp"
#include "model/learning_curve.hpp"
#include "model/method_table.hpp"
#include "model/profile_parameters.hpp"
#include "model/sync_batchnorm.hpp"

namespace mrplan {

namespace {

std::string who(const Stage& s, const ModelRun& m) {
  return s.models.size() == 1 ? fmt::format("stage '{}'", s.name) : fmt::format("stage '{}' model '{}'", s.name, m.name);
}

int64_t params_at_full_resolution(const NetworkSpec& spec) {
  return resolve(spec, coarsened_spatial(spec, 1), 1, 4.0, 1).total_params();
}

// Curves are found by the network's name: a network from a file that takes a built-in's name gets
// the built-in's curves, which were fitted for another network when the two differ.
void borrowed_curves_warning(const PreparedPlan& p, std::vector<std::string>& out) {
  const auto& w = p.plan.workload;
  const auto names = builtin_workload_names();
  if (!workload_is_file(p.plan) || std::find(names.begin(), names.end(), p.spec.name) == names.end()) return;
  const int64_t mine = params_at_full_resolution(p.spec), theirs = params_at_full_resolution(builtin_workload(p.spec.name));
  if (mine != theirs)
    out.push_back(fmt::format("{} names its network '{}', whose learning curves were fitted for the built-in network of that name "
                              "({} parameters; this one has {}): its epochs to target are the built-in's",
                              w, p.spec.name, theirs, mine));
}

void convergence_warnings(const PreparedPlan& p, std::vector<std::string>& out) {
  const auto& plan = p.plan;
  const auto& cv = *p.convergence;
  borrowed_curves_warning(p, out);
  std::set<int> coarse;
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const auto& s = plan.stages[i];
    for (size_t j = 0; j < s.models.size(); ++j) {
      const auto& m = s.models[j];
      if (m.resolution > 1) coarse.insert(m.resolution);
      const double batch = p.stages[i].models[j].global_batch, ref = cv.reference_global_batch;
      if (cv.critical_batch <= 0 && (batch > kBatchExtrapolation * ref || batch * kBatchExtrapolation < ref))
        out.push_back(fmt::format("{}: global batch {:g} is {:.1f}x the batch the learning curves of {} were fitted at ({:g}) and no "
                                  "critical batch is known: its epochs to target are those at {:g}",
                                  who(s, m), batch, batch / ref, p.spec.name, ref, ref));
    }
  }
  if (starts_pretrained(plan) && !pretrained_measured(cv))
    out.push_back(fmt::format("the pretrained model's head start on {} is a prior, MRT's transfer efficiency ({:.3g} of the baseline's "
                              "epochs saved): measure it with `mrplan calibrate convergence` on a transfer run's record beside baseline ones",
                              p.spec.name, pretrained_start(cv)));
  for (int r : coarse)
    if (r != cv.coarse_resolution)
      out.push_back(fmt::format("the coarse curves of {} were fitted at resolution {}; resolution {} uses them as they are",
                                p.spec.name, cv.coarse_resolution, r));
}

// Groups of N consecutive ranks pool batch norm (model/sync_batchnorm's rule): a remainder leaves one
// smaller group, which the model prices as a full one; a group larger than the ranks is priced as all of them.
void batchnorm_group_warnings(const Plan& plan, std::vector<std::string>& out) {
  for (const auto& s : plan.stages)
    for (const auto& m : s.models) {
      const int g = batchnorm_pool_asked(plan, m);
      if (g <= 1) continue;
      const std::string pool = g == plan.batchnorm_group ? fmt::format("comm.batchnorm_group {}", g)
                                                         : fmt::format("comm.batchnorm_samples {} at local batch {} (pools of {})",
                                                                       plan.batchnorm_samples, m.local_batch, g);
      if (m.gpus < g)
        out.push_back(fmt::format("{}: {} is more than its {} GPUs: priced as one group of {}", who(s, m), pool, m.gpus, m.gpus));
      else if (m.gpus % g)
        out.push_back(fmt::format("{}: {} does not divide its {} GPUs: priced as if it did", who(s, m), pool, m.gpus));
    }
}

// Pooled batch norm on a machine whose pooled collectives no runs fitted: each is priced by its
// allreduce alone (JUWELS Booster's v2.0 DeepCAM fitted 0.13 ms each; without it, its 2048-GPU epochs 22% short).
void pooled_batchnorm_warning(const PreparedPlan& p, const MachineProfile& machine, std::vector<std::string>& out) {
  int pool = 1;  // the widest pool of a model with batch-norm layers to pool
  for (size_t s = 0; s < p.stages.size(); ++s)
    for (size_t k = 0; k < p.stages[s].models.size(); ++k)
      if (p.stages[s].models[k].sync_batchnorm_iter_s > 0) pool = std::max(pool, batchnorm_pool_ranks(p.plan, p.plan.stages[s].models[k]));
  if (pool > 1 && machine.comm.sync_batchnorm_call_s <= 0 && !fitted_entry(machine, "comm.sync_batchnorm_call_us"))
    out.push_back(fmt::format("the plan pools batch norm over {} ranks, but machine '{}' has no comm.sync_batchnorm_call_us: each pooled "
                              "collective is priced by its allreduce alone (calibrate records with runs that pool fits it)",
                              pool, machine.name));
}

}  // namespace

std::vector<std::string> depth_warnings(const PreparedPlan& p, const MachineProfile& machine) {
  std::vector<std::string> out;
  const auto& plan = p.plan;
  if (p.convergence) {
    convergence_warnings(p, out);
  } else {
    const auto& last = plan.stages.back().models.front();
    if (last.stop.kind != StopRule::Kind::target)
      out.push_back(fmt::format("machine '{}' has no convergence model for {}: the plan's fixed stops are predicted, not whether it "
                                "reaches {} {}",
                                machine.name, p.spec.name, plan.target_metric, plan.target_value));
  }
  batchnorm_group_warnings(plan, out);
  pooled_batchnorm_warning(p, machine, out);
  if (plan.framework == CommFramework::horovod && machine.comm.horovod_call_overhead_s <= 0)
    out.push_back(fmt::format("comm.framework is horovod, but machine '{}' has no comm.horovod_call_overhead_us: each allreduce call is "
                              "priced at its call_overhead_us (calibrate records with Horovod runs fits it)",
                              machine.name));
  // a worker start fitted to 0 (Cori's rows) is a measurement
  if (!plan.persistent_workers && machine.io.worker_start_s <= 0 && !fitted_entry(machine, "io.worker_start_ms"))
    out.push_back(fmt::format("io.persistent_workers is false, but machine '{}' has no io.worker_start_ms: the loader's start at each "
                              "epoch and validation pass is priced at 0 (calibrate records with such runs fits it)",
                              machine.name));
  std::set<std::string> borrowed;
  for (const auto& f : machine.fitted)
    if (const auto at = f.source.find("transferred from "); at != std::string::npos)
      borrowed.insert(f.source.substr(at + 17, f.source.find_first_of(" (:", at + 17) - at - 17));
  for (const auto& from : borrowed)
    out.push_back(fmt::format("machine '{}' has no measurements of its own for some fits: they were transferred from {} (see its profile's "
                              "fitted list)",
                              machine.name, from));
  return out;
}

}  // namespace mrplan
