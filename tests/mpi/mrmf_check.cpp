// Run under `mpirun -np 2`: MRMF on two ranks, one per model of the fusion stage. The fused model
// is the same on both ranks, bottom group from the bottom parent and top group from the top parent;
// a whole MRMF run writes every model's record and marks stage and model in its log; killed inside
// the fusion stage and resumed, it ends with the parameters of an uninterrupted run.
#include <fmt/format.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "calibrate/mllog_ingest.hpp"
#include "exec/communicator.hpp"
#include "exec/fusion.hpp"
#include "exec/run.hpp"
#include "exec/spec_network.hpp"
#include "model/builtin_workloads.hpp"
#include "model/fusion.hpp"
#include "model/plan_yaml.hpp"
#include "tests/support/scratch_data.hpp"

using namespace mrplan;
namespace fs = std::filesystem;

namespace {

int failed = 0;
void check(bool ok, const std::string& what, int rank) {
  if (!ok) {
    ++failed;
    fmt::print("rank {}: FAILED {}\n", rank, what);
  }
}

double checksum(torch::nn::Module& m) {
  double s = 0;
  for (auto& p : m.parameters()) s += (p.to(torch::kDouble) * (1 + p.numel() % 7)).sum().item<double>();
  for (auto& b : m.buffers()) s += b.to(torch::kDouble).sum().item<double>();
  return s;
}

// Rank 0 trains the coarse (bottom) parent, rank 1 the dense (top) one; both end with one fused model.
void fused_model_is_the_same_everywhere(Communicator& world) {
  const int rank = world.rank();
  const auto spec = builtin_workload("cosmoflow-mrt", {.size = 16, .width = 0.25});
  const size_t split = fusion_split(spec, "", "", "");
  torch::manual_seed(11 + rank);
  const int res = rank == 0 ? 2 : 1;
  SpecNet mine(spec, coarsened_spatial(spec, res), 1);
  SpecNet fused(spec, coarsened_spatial(spec, 1), 1);
  fuse_across_ranks(*fused, *mine, rank == 0 ? FusionParent::bottom : FusionParent::top, 0, 1, split, world);
  double sums[2] = {checksum(*fused), 0};
  sums[1] = sums[0] * sums[0];
  world.allreduce_sum(sums, 2);
  check(std::abs(sums[1] / 2 - (sums[0] / 2) * (sums[0] / 2)) <= 1e-12 * sums[1], "the fused model differs between ranks", rank);
  // each rank's own group is in the fused model exactly
  auto own = mine->named_parameters();
  int compared = 0;
  for (const auto& p : fused->named_parameters()) {
    const bool bottom = in_bottom_group(fused->op_index_of(p.key()), split);
    if (bottom != (rank == 0)) continue;
    check(torch::equal(p.value(), own[p.key()]), "fused " + p.key() + " is not its parent's", rank);
    ++compared;
  }
  check(compared > 0, "no parameter of this rank's group in the fused model", rank);
  // the run's own check agrees, and refuses on every rank a model one rank holds otherwise
  bool same = true;
  try {
    check_same_on_every_rank(*fused, world, "the fused model");
  } catch (const std::exception&) {
    same = false;
  }
  check(same, "check_same_on_every_rank refused the same model", rank);
  {
    torch::NoGradGuard ng;
    if (rank == 1) fused->parameters().back().add_(1e-7f);
  }
  std::string refused;
  try {
    check_same_on_every_rank(*fused, world, "the fused model");
  } catch (const std::exception& e) {
    refused = e.what();
  }
  check(refused.rfind("the fused model differs between ranks 0 and 1 (digests ", 0) == 0, "a differing rank refused alike: '" + refused + "'", rank);
}

const char* kPlan = R"(name: tiny-mrmf
workload: cosmoflow-mrt
workload_options: {size: 16, width: 0.25}
machine: perlmutter
method: mrmf
dataset: {train_samples: 32, validation_samples: 16}
target: {metric: val_mse, value: 0.0001}
stages:
  - name: fusion1
    models:
      - {name: low, resolution: 2, gpus: 1, local_batch: 8, stop: {epochs: 3}}
      - {name: high, resolution: 1, gpus: 1, local_batch: 8, init: scratch, stop: {iterations: 6}}
    handoff: {fuse: {bottom_from: low, top_from: high}}
  - {name: finetune, resolution: 1, gpus: 2, local_batch: 4, stop: {epochs: 2}}
)";

std::vector<torch::Tensor> final_params(const fs::path& out) {
  const auto spec = builtin_workload("cosmoflow-mrt", {.size = 16, .width = 0.25});
  SpecNet net(spec, coarsened_spatial(spec, 1));
  torch::serialize::InputArchive a;
  a.load_from((out / "model.pt").string());
  net->load(a);
  return net->parameters();
}

void a_run_fuses_and_resumes(Communicator& world, const fs::path& dir) {
  const int rank = world.rank();
  if (rank == 0) {
    DatagenOptions d;
    d.samples = 48, d.size = 16, d.samples_per_file = 16;
    mrplan::testing::make_two_resolutions(dir / "data", d);
  }
  world.barrier();
  Plan p = plan_from_yaml_text(kPlan, "tiny-mrmf.yaml");
  p.data_dir = (dir / "data").string();
  RunOptions o;
  o.threads = 1, o.quiet = true;
  o.out_dir = (dir / "straight").string();
  const auto r = run_plan(p, o);
  check(r.stages.size() == 2 && r.stages[0].models.size() == 2, "two stages, two models in the first", rank);
  if (r.stages.size() == 2 && r.stages[0].models.size() == 2) {
    const auto& low = r.stages[0].models[0];
    const auto& high = r.stages[0].models[1];
    check(low.name == "low" && low.per_epoch.size() == 3 && low.stop_reason == StopReason::epochs, "the low model's own record", rank);
    check(high.name == "high" && high.iterations == 6 && high.stop_reason == StopReason::iterations, "the high model's iteration budget", rank);
    check(r.stages[0].fusion_s > 0, "the fusion is timed", rank);
    check(std::abs(r.stages[0].time_s - (std::max(low.time_s, high.time_s) + r.stages[0].fusion_s)) < 1e-9,
          "the stage lasts as long as its slower model plus the fusion", rank);
    check(r.stages[1].single().per_epoch.size() == 2, "the fine-tuning stage", rank);
  }
  if (rank == 0) {
    std::ifstream log(dir / "straight/mllog.txt");
    const std::string all((std::istreambuf_iterator<char>(log)), {});
    check(all.find("\"stage\": \"fusion1\", \"model\": \"high\", \"resolution\": 1") != std::string::npos, "the log marks the high model", rank);
    check(all.find("\"model\": \"low\"") != std::string::npos, "the log marks the low model", rank);
    check(all.find("\"model\": \"finetune\"") != std::string::npos, "the log marks the fine-tuning", rank);
    for (const auto& e : fs::directory_iterator(dir / "straight"))
      check(e.path().extension() != ".part", "a log part was left: " + e.path().string(), rank);
    // the log reads back as the same stages and models
    const auto in = load_mllog_file((dir / "straight/mllog.txt").string());
    check(in.method == Method::mrmf && in.stages.size() == 2 && in.stages[0].models.size() == 2, "the log reads back as MRMF", rank);
    if (in.stages.size() == 2 && in.stages[0].models.size() == 2 && r.stages.size() == 2) {
      for (size_t k = 0; k < 2; ++k) {
        const auto& a = in.stages[0].models[k];
        const auto& b = r.stages[0].models[k];
        check(a.name == b.name && a.resolution == b.resolution && a.gpus == 1 && a.local_batch == 8 &&
                  a.per_epoch.size() == b.per_epoch.size(),
              "model " + b.name + " read back from the log", rank);
      }
      check(in.stages[0].fusion_s > 0, "the log's fusion time", rank);
      check(in.stages[1].single().name == "finetune" && in.stages[1].gpus == 2, "the fine-tuning read back", rank);
    }
  }
  // killed after each fusion-stage model's first epoch (inside the stage), or after the low model's
  // last (the high one has stopped by then: at the moment of fusion), then resumed
  for (int stop_after : {1, 3}) {
    const auto name = fmt::format("killed-{}", stop_after);
    o.out_dir = (dir / name).string();
    o.stop_after_epochs = stop_after;
    o.resume_dir.clear();
    const auto partial = run_plan(p, o);
    check(!partial.totals.reached_target && !partial.warnings.empty(), "the killed run says so", rank);
    check(partial.stages.size() == 1, "killed in the fusion stage or right after it", rank);
    o.stop_after_epochs = 0;
    o.resume_dir = o.out_dir;
    const auto resumed = run_plan(p, o);
    check(resumed.stages.size() == 2, "the resumed run finishes", rank);
    const auto a = final_params(dir / "straight"), b = final_params(dir / name);
    bool same = a.size() == b.size();
    for (size_t i = 0; same && i < a.size(); ++i) same = torch::equal(a[i], b[i]);
    check(same, name + ": the final parameters differ from the uninterrupted run's", rank);
  }
}

}  // namespace

int main() {
  auto world = make_mpi_communicator();
  torch::set_num_threads(1);
  fused_model_is_the_same_everywhere(*world);
  fs::path dir = fs::temp_directory_path() / "mrplan_mrmf_check";
  if (world->rank() == 0) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  world->barrier();
  try {
    a_run_fuses_and_resumes(*world, dir);
  } catch (const std::exception& e) {
    check(false, std::string("run: ") + e.what(), world->rank());
  }
  double fails = failed;
  world->allreduce_sum(&fails, 1);
  if (world->rank() == 0) {
    fs::remove_all(dir);
    fmt::print("mrmf: {} ranks, {} failed\n", world->size(), fails);
  }
  return fails == 0 ? 0 : 1;
}
