#include "sim/builtin_plans.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/errors.hpp"

namespace mrplan {

PaperSetup paper_setup(const std::string& app) {
  // CosmoFlow: 80 files x 128 samples, 80% training; Adam, global batch 256 (MRT IV-B).
  if (app == "cosmoflow") return {"cosmoflow-mrt", 8192, 256, true, 8, 8, 32};
  // DeepCAM: the per-epoch and per-iteration times of Tables V/VII imply ~946 iterations of
  // 128 samples per epoch, i.e. the MLPerf HPC training set (121,266 samples); local batch 2
  // dense, 8 coarse (MRT IV-C).
  if (app == "deepcam") return {"deepcam", 121266, 128, false, 2, 8, 64};
  fail_input("", "app", fmt::format("unknown paper application '{}'", app));
}

std::vector<std::string> builtin_plan_names() {
  return {"cosmoflow-mrt", "cosmoflow-baseline", "cosmoflow-coarse", "deepcam-mrt", "deepcam-baseline", "deepcam-coarse"};
}

bool is_builtin_plan(const std::string& name) {
  const auto at = name.find('@');
  if (at == std::string::npos) return false;
  const auto app = name.substr(0, at);
  for (const auto& n : builtin_plan_names())
    if (n == app) return true;
  return false;
}

Plan builtin_plan(const std::string& name, int gpus) {
  const auto at = name.find('@');
  if (at == std::string::npos || !is_builtin_plan(name))
    fail_input("", "plan",
               fmt::format("'{}' is neither a plan file nor a built-in plan APP@MACHINE (APP one of: {})", name,
                           fmt::join(builtin_plan_names(), ", ")));
  const auto app = name.substr(0, at);
  const auto machine = name.substr(at + 1);
  const bool cosmo = app.starts_with("cosmoflow");
  const auto setup = paper_setup(cosmo ? "cosmoflow" : "deepcam");
  const auto variant = app.substr(app.find('-') + 1);  // mrt | baseline | coarse
  if (gpus <= 0) gpus = setup.min_gpus;
  Plan p;
  p.name = name;
  p.source_file = "builtin:" + name;
  p.workload = setup.workload;
  p.machine = machine;
  p.method = variant == "mrt" ? Method::mrt : Method::baseline;
  p.train_samples = setup.train_samples;
  // The paper's breakdowns are disjoint (I/O + comm + comp = epoch time in Tables III-VIII):
  // every allreduce second is counted as communication, so these plans model no overlap.
  p.overlap_comm = false;
  p.validation_samples = setup.train_samples / 8;
  auto local = [&](int per_gpu_keep_local) {
    return setup.keep_global_batch ? std::max(1, setup.dense_global_batch_at_min_gpus / gpus) : per_gpu_keep_local;
  };
  ModelRun coarse, dense;
  coarse.name = "coarse", coarse.resolution = 2, coarse.gpus = gpus, coarse.local_batch = local(setup.coarse_local_batch);
  dense.name = "dense", dense.resolution = 1, dense.gpus = gpus, dense.local_batch = local(setup.dense_local_batch);
  dense.stop.kind = StopRule::Kind::target;
  dense.stop.max_epochs = 300;
  if (cosmo) {
    p.precision = Precision::fp32;
    p.target_metric = "val_mse";
    p.target_value = 0.0025;
    p.h2d_overlapped = true;  // tf.data prefetches
    coarse.optimizer = dense.optimizer = "adam";
    coarse.learning_rate = dense.learning_rate = 0.002;
    coarse.stop.kind = StopRule::Kind::switch_rule;
    coarse.stop.rule = {5, 0.001};
  } else {
    p.precision = Precision::amp;
    p.target_metric = "val_iou";
    p.target_value = 0.82;
    p.maximize = true;
    p.h2d_overlapped = false;  // PyTorch DataLoader: the step copies its batch to the GPU
    coarse.optimizer = dense.optimizer = "lamb";
    coarse.stop.kind = StopRule::Kind::switch_rule;
    coarse.stop.rule = {250, 0.001};
    coarse.stop.window_iterations = 1;  // the rule watches the loss every iteration
    dense.stop.eval_iterations = 100;   // validation every 100 iterations (MRT Fig. 4)
  }
  coarse.stop.max_epochs = 300;
  auto stage = [](const ModelRun& m) { return Stage{m.name, {m}, {}}; };
  if (variant == "mrt") {
    p.stages = {stage(coarse), stage(dense)};
  } else if (variant == "coarse") {
    coarse.stop = StopRule{};
    coarse.stop.kind = StopRule::Kind::plateau;
    coarse.stop.max_epochs = 300;
    coarse.from_previous = false;
    p.stages = {stage(coarse)};
  } else {
    dense.from_previous = false;
    p.stages = {stage(dense)};
  }
  return p;
}

}  // namespace mrplan
