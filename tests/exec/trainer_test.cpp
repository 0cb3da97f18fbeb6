#include <gtest/gtest.h>
#include <unistd.h>

#include <torch/torch.h>
#include <fmt/format.h>

#include <filesystem>
#include <chrono>
#include <thread>
#include <fstream>

#include "calibrate/mllog_ingest.hpp"
#include "exec/datagen.hpp"
#include "exec/hdf5_file.hpp"
#include "exec/run.hpp"
#include "exec/spec_network.hpp"
#include "model/builtin_workloads.hpp"
#include "model/errors.hpp"
#include "model/plan_yaml.hpp"
#include "model/record.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/mllog_rules.hpp"
#include "tests/support/scratch_data.hpp"
#include "tests/support/tiny_plan.hpp"

using namespace mrplan;
namespace fs = std::filesystem;

namespace {

struct TinyRun : ::testing::Test {
  static fs::path dir;
  static void SetUpTestSuite() {
    dir = mrplan::testing::scratch_dir("trainer");
    DatagenOptions o;
    o.samples = 48, o.size = 16, o.samples_per_file = 16;
    mrplan::testing::make_two_resolutions(dir / "data", o);
  }
  static void TearDownTestSuite() { fs::remove_all(dir); }
  Plan plan(const std::string& method) {
    std::string stages;
    if (method == "mrt")
      stages += "  - {name: coarse, resolution: 2, gpus: 1, local_batch: 8, stop: {switch_rule: {patience: 1, epsilon: 10}, max_epochs: 5}}\n";
    stages += "  - {name: dense, resolution: 1, gpus: 1, local_batch: 8, stop: {epochs: 3}}\n";
    Plan p = plan_from_yaml_text(mrplan::testing::tiny_plan_yaml({.method = method}, stages), "tiny.yaml");
    p.data_dir = (dir / "data").string();
    return p;
  }
  RunOptions options(const std::string& out) {
    RunOptions o;
    o.out_dir = (dir / out).string();
    o.threads = 1;
    o.quiet = true;
    return o;
  }
};
fs::path TinyRun::dir;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}
const std::string kRules = std::string(MRPLAN_TEST_SUPPORT) + "/mlperf_hpc_rules.json";

std::vector<torch::Tensor> load_params(const fs::path& out) {
  const auto spec = builtin_workload("cosmoflow-mrt", {.size = 16, .width = 0.25});
  SpecNet net(spec, coarsened_spatial(spec, 1));
  torch::serialize::InputArchive a;
  a.load_from((out / "model.pt").string());
  net->load(a);
  return net->parameters();
}

}  // namespace

TEST_F(TinyRun, MrtRunWritesRecordAndMllog) {
  const auto r = run_plan(plan("mrt"), options("mrt"));
  ASSERT_EQ(r.stages.size(), 2u);
  EXPECT_EQ(r.source, Source::measured);
  // patience 1 with a huge epsilon: the rule fires after epoch 2 (the first it may)
  EXPECT_EQ(r.stages[0].single().switch_epoch.value_or(-1), 2);
  EXPECT_EQ(r.stages[1].epochs, 3);
  EXPECT_EQ(r.stages[1].single().per_epoch.size(), 3u);
  for (const auto& s : r.stages)
    for (const auto& e : s.single().per_epoch) {
      EXPECT_GT(e.compute_s, 0);
      EXPECT_GE(e.epoch_s, e.compute_s);
      EXPECT_TRUE(e.loss && e.metric);
      ASSERT_TRUE(e.phases.has_value());  // compute is split into its phases; on a CPU nothing is copied to a device
      EXPECT_NEAR(e.phases->forward_s + e.phases->backward_s + e.phases->optimizer_s, e.compute_s, 1e-9);
      EXPECT_GT(e.phases->forward_s, 0);
      EXPECT_GT(e.phases->backward_s, 0);
      EXPECT_LT(e.phases->h2d_s, 1e-3);
    }
  ASSERT_TRUE(r.device_matmul_flops_per_s.has_value());  // the machine's speed at the start, for validate's drift line
  EXPECT_EQ(r.provenance.at("device"), "cpu");  // where and with what it ran
  EXPECT_EQ(r.provenance.at("devices_per_node"), "0");
  EXPECT_EQ(r.provenance.at("seed"), "1");
  char host[65] = {};
  gethostname(host, 64);
  EXPECT_EQ(r.provenance.at("hosts"), host);  // one node: its name
  EXPECT_EQ(r.provenance.at("platform"), fmt::format("1 node ({}), CPUs", host));
  EXPECT_EQ(r.provenance.at("started_utc").size(), 20u);
  EXPECT_GT(*r.device_matmul_flops_per_s, 1e8);
  const auto back = load_record_file((dir / "mrt/record.json").string());
  EXPECT_EQ(record_to_json(back), record_to_json(r));
  std::ifstream log(dir / "mrt/mllog.txt");
  std::string all((std::istreambuf_iterator<char>(log)), {});
  EXPECT_NE(all.find(":::MLLOG {"), std::string::npos);
  EXPECT_NE(all.find("\"key\": \"run_start\""), std::string::npos);
  EXPECT_NE(all.find("\"key\": \"eval_error\""), std::string::npos);
  EXPECT_NE(all.find("\"key\": \"run_stop\""), std::string::npos);
  EXPECT_EQ(mrplan::testing::mllog_rule_violations(all, kRules), std::vector<std::string>{});  // MLPerf HPC's logging rules
  // the log reads back as a measured record with every epoch of both stages, each as its stage
  const auto ingested = load_mllog_file((dir / "mrt/mllog.txt").string());
  ASSERT_EQ(ingested.stages.size(), 2u);
  EXPECT_EQ(ingested.method, Method::mrt);
  EXPECT_EQ(ingested.totals.epochs, r.totals.epochs);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(ingested.stages[i].name, r.stages[i].name);
    EXPECT_EQ(ingested.stages[i].global_batch, 8);
    EXPECT_EQ(ingested.stages[i].gpus, 1);
    EXPECT_EQ(ingested.stages[i].single().resolution, r.stages[i].single().resolution);
    EXPECT_EQ(ingested.stages[i].single().per_epoch.size(), r.stages[i].single().per_epoch.size());
  }
}

TEST_F(TinyRun, IterationWindowRuleSwitchesMidEpoch) {
  auto p = plan("mrt");
  p.stages[0].models[0].stop.window_iterations = 1;  // patience 1, huge epsilon: fires at the second window
  const auto r = run_plan(p, options("window"));
  ASSERT_EQ(r.stages.size(), 2u);
  const auto& coarse = r.stages[0].single();
  EXPECT_EQ(coarse.switch_epoch.value_or(-1), 1);
  EXPECT_EQ(coarse.per_epoch.size(), 1u);
  EXPECT_EQ(coarse.iterations, 2);  // of 4 in an epoch
  EXPECT_DOUBLE_EQ(coarse.epochs, 0.5);
  EXPECT_DOUBLE_EQ(coarse.per_epoch[0].fraction, 0.5);
  EXPECT_EQ(coarse.stop_reason, StopReason::switch_rule);
  EXPECT_EQ(r.stages[1].epochs, 3);
}

// One time to target (model/time_to_target.hpp): what the run prints, its Record and its log agree,
// and the time between a kill and its resume is not counted.
TEST_F(TinyRun, ResumedRunEndsWithTheSameParametersAndOneTime) {
  const auto p = plan("mrt");
  auto straight = options("straight");
  straight.quiet = false;
  ::testing::internal::CaptureStdout();
  const auto whole = run_plan(p, straight);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  const auto said = whole.totals.reached_target ? fmt::format("time to target {:.1f} s", whole.totals.time_to_target_s)
                                                : fmt::format("trained {:.1f} s, target not reached", whole.totals.time_to_target_s);
  EXPECT_NE(printed.find(said), std::string::npos) << printed;
  EXPECT_EQ(load_mllog_file((dir / "straight/mllog.txt").string()).totals.time_to_target_s, whole.totals.time_to_target_s);
  auto o = options("killed");
  o.stop_after_epochs = 3;  // mid dense stage: 2 coarse + 1 dense
  const auto partial = run_plan(p, o);
  EXPECT_FALSE(partial.totals.reached_target);
  ASSERT_FALSE(partial.warnings.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the job waits in the queue
  auto r = options("killed");
  r.resume_dir = (dir / "killed").string();
  const auto resumed = run_plan(p, r);
  EXPECT_EQ(resumed.stages.back().epochs, 3);
  const auto ingested = load_mllog_file((dir / "killed/mllog.txt").string());
  EXPECT_EQ(ingested.totals.time_to_target_s, resumed.totals.time_to_target_s);
  EXPECT_EQ(record_from_json(read_text(dir / "killed/record.json")).totals.time_to_target_s, resumed.totals.time_to_target_s);
  EXPECT_GT(resumed.totals.time_to_target_s, partial.totals.time_to_target_s);
  const auto log = read_text(dir / "killed/mllog.txt");
  const auto ms = [&](const std::string& key) {
    const auto line = log.find("\"key\": \"" + key + "\"");
    return std::stod(log.substr(log.rfind("\"time_ms\": ", line) + 11));
  };
  EXPECT_LT(resumed.totals.time_to_target_s, (ms("run_stop") - ms("run_start")) / 1000.0 - 1.4);  // the wait is not trained
  const auto a = load_params(dir / "straight"), b = load_params(dir / "killed");
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-6, 1e-7)) << i;
}

TEST_F(TinyRun, RecomputedBatchNormStatisticsChangeTheValidationMetricAndNothingTrained) {
  auto p = plan("baseline");
  const auto plain = run_plan(p, options("running-averages"));
  p.precise_bn_batches = 2;
  const auto precise = run_plan(p, options("precise-bn"));
  const auto& a = plain.stages[0].single().per_epoch;
  const auto& b = precise.stages[0].single().per_epoch;
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  bool metric_moved = false;
  for (size_t e = 0; e < a.size(); ++e) {
    EXPECT_EQ(*a[e].loss, *b[e].loss) << "epoch " << e + 1;  // no random numbers drawn, no parameter touched
    metric_moved |= *a[e].metric != *b[e].metric;
  }
  EXPECT_TRUE(metric_moved);
  const auto x = load_params(dir / "running-averages"), y = load_params(dir / "precise-bn");
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_TRUE(torch::equal(x[i], y[i])) << i;
}

TEST_F(TinyRun, RefusesMoreRanksThanLaunchedAndMissingData) {
  auto p = plan("baseline");
  p.stages[0].models[0].gpus = 4;
  try {
    run_plan(p, options("ranks"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("stages[0].gpus: the stage wants 4 ranks but 1 were launched"), std::string::npos) << e.what();
  }
  p = plan("baseline");
  p.data_dir = (dir / "nowhere").string();
  try {
    run_plan(p, options("nodata"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("data folder not found"), std::string::npos) << e.what();
  }
  // unitPar of shape (n,) would train by broadcasting against the network's 4 outputs: refused first
  fs::create_directories(dir / "flatlabels/res1");
  {
    std::vector<float> x(48 * 16 * 16 * 16 * 4, 1.f), y(48, 0.f);
    H5File h((dir / "flatlabels/res1/f.h5").string(), H5File::Mode::create);
    h.write("3Dmap", {48, 16, 16, 16, 4}, x.data());
    h.write("unitPar", {48}, y.data());
  }
  p.data_dir = (dir / "flatlabels").string();
  const auto flat = mrplan::testing::error_of([&] { run_plan(p, options("flatlabels")); });
  EXPECT_NE(flat.find("flatlabels: res1/unitPar: labels are (1) per sample but the network predicts 4 values"), std::string::npos) << flat;
}

TEST(DeepcamRun, MrtSegmentationRunReportsIouAndTransfers) {
  const auto dir = mrplan::testing::scratch_dir("trainer_cam");
  DatagenOptions d;
  d.workload = "deepcam", d.samples = 24, d.size = 64;
  mrplan::testing::make_two_resolutions(dir / "data", d);
  Plan p = plan_from_yaml_text(R"(name: tiny-cam
workload: deepcam
workload_options: {size: 64, width: 0.0625}
machine: summit
method: mrt
dataset: {train_samples: 16, validation_samples: 8}
target: {metric: val_iou, value: 0.99, goal: maximize}
stages:
  - {name: coarse, resolution: 2, gpus: 1, local_batch: 4, optimizer: lamb, learning_rate: 0.01, stop: {epochs: 1}}
  - {name: dense, resolution: 1, gpus: 1, local_batch: 4, optimizer: adam, stop: {epochs: 1}}
)",
                               "tiny-cam.yaml");
  p.data_dir = (dir / "data").string();
  RunOptions o;
  o.out_dir = (dir / "out").string(), o.threads = 1, o.quiet = true;
  const auto r = run_plan(p, o);
  ASSERT_EQ(r.stages.size(), 2u);
  EXPECT_EQ(r.target_metric, "val_iou");
  for (const auto& st : r.stages) {
    const auto& s = st.single();
    ASSERT_EQ(s.per_epoch.size(), 1u);
    EXPECT_GT(*s.per_epoch[0].loss, 0);
    EXPECT_GE(*s.per_epoch[0].metric, 0);
    EXPECT_LE(*s.per_epoch[0].metric, 1);
  }
  std::ifstream log(dir / "out/mllog.txt");
  const std::string all((std::istreambuf_iterator<char>(log)), {});
  EXPECT_NE(all.find("\"key\": \"eval_accuracy\""), std::string::npos);  // a rising metric, as MLPerf logs IoU
  EXPECT_TRUE(r.target_maximize);  // the Record and the log read back from it keep the direction
  EXPECT_TRUE(record_from_mllog(all, "mllog.txt").target_maximize);
  p.target_metric = "val_mse";
  EXPECT_NE(mrplan::testing::error_of([&] { run_plan(p, o); }).find("reports val_iou or val_loss for this workload, not 'val_mse'"),
            std::string::npos);
  fs::remove_all(dir);
}

// Killed right at the switch (after the coarse stage's last epoch): the resumed run builds the dense
// network from the same seed and transfers from the saved coarse model, as the uninterrupted run did.
TEST_F(TinyRun, ResumedAtTheSwitchEndsWithTheSameParameters) {
  const auto p = plan("mrt");
  run_plan(p, options("straight-switch"));
  auto o = options("killed-switch");
  o.stop_after_epochs = 2;  // the rule fires after coarse epoch 2
  const auto partial = run_plan(p, o);
  ASSERT_EQ(partial.stages.size(), 1u);
  EXPECT_FALSE(partial.totals.reached_target);
  auto r = options("killed-switch");
  r.resume_dir = (dir / "killed-switch").string();
  const auto resumed = run_plan(p, r);
  ASSERT_EQ(resumed.stages.size(), 2u);
  EXPECT_EQ(resumed.stages[0].single().switch_epoch.value_or(-1), 2);
  const auto a = load_params(dir / "straight-switch"), b = load_params(dir / "killed-switch");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << i;
  // the resumed run's log is still one run: one run_start, one run_stop, within the rules
  const auto log = read_text(dir / "killed-switch/mllog.txt");
  EXPECT_EQ(mrplan::testing::mllog_rule_violations(log, kRules), std::vector<std::string>{});
  EXPECT_NE(log.find(resumed.totals.reached_target ? "\"status\": \"success\"" : "\"status\": \"aborted\""), std::string::npos);
  // a finished run resumed trains nothing more
  const auto again = run_plan(p, r);
  EXPECT_EQ(record_to_json(again), record_to_json(resumed));
}

// Transfer learning: the run starts from an earlier run's model.pt; the layers through relu3 stay
// frozen for its first epoch (so, trained one epoch, they end as the pretrained model had them),
// the rest train; the record says the method and where the model came from, and the log reads back
// as a transfer run.
TEST_F(TinyRun, TransferStartsFromThePretrainedModelWithItsBottomFrozen) {
  run_plan(plan("baseline"), options("pretrained"));
  const auto pre = dir / "pretrained" / "model.pt";
  const std::string stage = fmt::format(
      "  - {{name: dense, resolution: 1, gpus: 1, local_batch: 8, pretrained: {{checkpoint: {}, freeze_through: relu3, freeze_epochs: 1}}, "
      "stop: {{epochs: 1}}}}\n",
      pre.string());
  Plan p = plan_from_yaml_text(mrplan::testing::tiny_plan_yaml({.method = "transfer"}, stage), "tiny.yaml");
  p.data_dir = (dir / "data").string();
  const auto r = run_plan(p, options("transfer"));
  EXPECT_EQ(r.method, Method::transfer);
  EXPECT_EQ(r.provenance.at("pretrained"), fs::absolute(pre).lexically_normal().string());
  const auto spec = builtin_workload("cosmoflow-mrt", {.size = 16, .width = 0.25});
  SpecNet net(spec, coarsened_spatial(spec, 1));
  const auto before = load_params(dir / "pretrained"), after = load_params(dir / "transfer");
  size_t frozen = 0, trained = 0, k = 0;
  for (const auto& item : net->named_parameters()) {
    const auto& name = item.key();
    const bool bottom = net->op_index_of(name) <= 11;  // input_bn .. relu3
    EXPECT_EQ(torch::equal(before[k], after[k]), bottom) << name;
    ++(bottom ? frozen : trained);
    ++k;
  }
  EXPECT_GT(frozen, 0u);
  EXPECT_GT(trained, 0u);
  EXPECT_EQ(load_mllog_file((dir / "transfer" / "mllog.txt").string()).method, Method::transfer);
}

// A pretrained model of another network is refused with the parameter that differs; a missing one
// with the plan's key.
TEST_F(TinyRun, TransferRefusesAnotherNetworksModelAndAMissingOne) {
  const auto wide = builtin_workload("cosmoflow-mrt", {.size = 16, .width = 0.5});
  SpecNet other(wide, coarsened_spatial(wide, 1));
  fs::create_directories(dir / "wide");
  torch::save(other, (dir / "wide" / "model.pt").string());
  auto transfer = [&](const std::string& checkpoint) {
    Plan p = plan_from_yaml_text(mrplan::testing::tiny_plan_yaml(
                                     {.method = "transfer"},
                                     fmt::format("  - {{name: dense, resolution: 1, gpus: 1, local_batch: 8, pretrained: {{checkpoint: {}}}, "
                                                 "stop: {{epochs: 1}}}}\n",
                                                 checkpoint)),
                                 "tiny.yaml");
    p.data_dir = (dir / "data").string();
    return mrplan::testing::error_of([&] { run_plan(p, options("refused")); });
  };
  const auto shape = transfer((dir / "wide" / "model.pt").string());
  EXPECT_NE(shape.find("parameter 'conv1.weight'"), std::string::npos) << shape;
  EXPECT_NE(shape.find("in the pretrained model"), std::string::npos) << shape;
  const auto missing = transfer((dir / "none.pt").string());
  EXPECT_NE(missing.find("stages[0].pretrained.checkpoint"), std::string::npos) << missing;
  EXPECT_NE(missing.find("no such file"), std::string::npos) << missing;
}
