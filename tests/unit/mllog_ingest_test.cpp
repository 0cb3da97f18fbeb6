#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "calibrate/mllog_ingest.hpp"
#include "calibrate/calibrated_builtins.hpp"
#include "calibrate/validation.hpp"
#include "model/builtin_profiles.hpp"
#include "model/plan_yaml.hpp"
#include "tests/support/error_of.hpp"

using namespace mrplan;
using mrplan::testing::error_of;
namespace fs = std::filesystem;

namespace {

const fs::path kLogs = MRPLAN_MLPERF_LOGS;

std::vector<fs::path> fixture_logs() {
  std::vector<fs::path> logs;
  if (fs::exists(kLogs))
    for (const auto& e : fs::recursive_directory_iterator(kLogs))
      if (e.path().filename().string().starts_with("result_")) logs.push_back(e.path());
  std::sort(logs.begin(), logs.end());
  return logs;
}

std::string line(const std::string& key, double t, const std::string& value = "null", const std::string& meta = "{}") {
  return fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"key\": \"{}\", \"value\": {}, \"metadata\": {}}}\n", t, key, value,
                     meta);
}

std::string small_log(const std::string& extra_before_stop = "") {
  return line("number_of_nodes", 1, "2") + line("accelerators_per_node", 1, "4") + line("global_batch_size", 1, "16") +
         line("submission_benchmark", 1, "\"deepcam\"") + line("train_samples", 1, "1600") + line("eval_samples", 1, "160") +
         line("my_own_key", 1, "{\"a\": 1}") + line("run_start", 10) + line("epoch_start", 10, "null", R"({"epoch_num": 1})") +
         line("eval_start", 18, "null", R"({"epoch_num": 1})") + line("eval_accuracy", 19, "0.5", "{}") +
         line("eval_loss", 19, "0.9", R"({"epoch_num": 1})") + line("eval_stop", 20, "null", R"({"epoch_num": 1})") +
         line("epoch_stop", 20, "null", R"({"epoch_num": 1})") + extra_before_stop +
         line("run_stop", 30, "null", R"({"status": "success"})");
}

}  // namespace

TEST(MllogIngest, EveryPublicFixtureBecomesARecordWithAPlan) {
  const auto logs = fixture_logs();
  if (logs.empty()) GTEST_SKIP() << "no " << kLogs;
  EXPECT_EQ(logs.size(), 60u);  // ../shared/mlperf-logs/README.md: 20 rows of three
  for (const auto& l : logs) {
    SCOPED_TRACE(l.string());
    const auto r = load_mllog_file(l.string(), MllogOptions{.machine = "perlmutter", .gpus = {}, .precision = {}, .framework = {}, .software = {}});
    const bool cosmo = l.string().find("cosmoflow") != std::string::npos;
    EXPECT_EQ(r.workload, cosmo ? "cosmoflow-mlperf" : "deepcam");
    EXPECT_EQ(r.target_metric, cosmo ? "eval_error" : "eval_accuracy");  // DeepCAM's IoU, not its eval_loss
    EXPECT_EQ(r.target_maximize, !cosmo);
    EXPECT_TRUE(r.totals.reached_target);
    ASSERT_EQ(r.stages.size(), 1u);
    const auto& m = r.stages[0].single();
    EXPECT_GE(m.per_epoch.size(), 6u);
    EXPECT_EQ(r.stages[0].global_batch, m.gpus * m.local_batch);
    for (const auto& e : m.per_epoch) {
      EXPECT_GT(e.eval_s, 0);
      EXPECT_GT(e.epoch_s, e.eval_s);
      EXPECT_TRUE(e.metric);
    }
    EXPECT_TRUE(r.log_keys.count("submission_org"));
    const auto plan = plan_from_yaml_text(r.plan_spec, l.string());
    EXPECT_EQ(plan.stages[0].models[0].gpus, m.gpus);
    EXPECT_EQ(plan.stages[0].models[0].local_batch, m.local_batch);
    EXPECT_EQ(plan.train_samples, cosmo ? 524288 : 121266);
    EXPECT_EQ(plan.validation_samples, cosmo ? 65536 : 15158);
  }
}

TEST(MllogIngest, KeepsWhatTheLogSays) {
  if (!fs::exists(kLogs)) GTEST_SKIP() << "no " << kLogs;
  const auto c = load_mllog_file((kLogs / "v2.0/NVIDIA/dgxa100_n64_pytorch/cosmoflow/result_0.txt").string());
  EXPECT_EQ(c.stages[0].gpus, 512);  // 64 nodes x 8
  EXPECT_EQ(c.stages[0].single().per_epoch.size(), 24u);
  EXPECT_NEAR(*c.staging_s, 15.568, 1e-9);
  EXPECT_DOUBLE_EQ(c.target_value, 0.124);
  EXPECT_EQ(c.machine, "64xNVIDIA DGX A100");  // no --machine: the log's platform
  const auto d = load_mllog_file((kLogs / "v2.0/HelmholtzAI/horeka_gpu_n64_pytorch1.13/deepcam/result_1.txt").string());
  EXPECT_EQ(d.stages[0].gpus, 64);
  EXPECT_EQ(d.stages[0].single().local_batch, 2);
  const auto dp = plan_from_yaml_text(d.plan_spec);
  EXPECT_EQ(dp.precision, Precision::amp);
  EXPECT_EQ(dp.staging, Staging::host_memory);
  EXPECT_DOUBLE_EQ(d.target_value, 0.82);
  EXPECT_FALSE(dp.overlap_comm);  // disable_comm_overlap: true
  EXPECT_DOUBLE_EQ(dp.bucket_bytes, 220 * 1024.0 * 1024.0);  // and so DeepCAM's implementation's 220 MB buckets
  EXPECT_EQ(dp.batchnorm_group, 1);
  const auto j = load_mllog_file((kLogs / "v2.0/HelmholtzAI/juwelsbooster_gpu_n2048_pytorch1.13/deepcam/result_0.txt").string());
  EXPECT_EQ(plan_from_yaml_text(j.plan_spec).batchnorm_group, 2);  // batchnorm_group_size: 2
  EXPECT_EQ(j.log_keys.count("batchnorm_group_size") + j.log_keys.count("disable_comm_overlap"), 0u);  // read, not kept aside
  // Eos trains on after run_stop: the record ends there
  const auto e = load_mllog_file((kLogs / "v3.0/NVIDIA/eos_n64_ngc23.09_pytorch/cosmoflow/result_0.txt").string());
  EXPECT_EQ(e.stages[0].single().per_epoch.size(), 23u);
  // and stages before run_start, outside MLPerf's timed region: the copy counts as the plan prices it
  EXPECT_NEAR(e.totals.time_to_target_s, 143.669 + *e.staging_s, 1e-9);
  EXPECT_NEAR(*e.staging_s, 14.407, 1e-9);
  EXPECT_NE(std::find_if(e.warnings.begin(), e.warnings.end(), [](const std::string& w) { return w.starts_with("staging (14.4 s) is logged before run_start"); }),
            e.warnings.end());
  // v2.0 stages inside the timed region: nothing added
  EXPECT_TRUE(std::none_of(c.warnings.begin(), c.warnings.end(), [](const std::string& w) { return w.starts_with("staging"); }));
}

// NVIDIA's DeepCAM with synchronous_staging false copies beside the first epoch and logs no staging;
// data_oversampling_factor is the shares a node stages
TEST(MllogIngest, AnAsynchronousCopyIsStagedBesideTheFirstEpoch) {
  const auto plan_of = [](const std::string& extra) { return plan_from_yaml_text(record_from_mllog(small_log(extra), "a.txt").plan_spec); };
  const auto async = plan_of(line("synchronous_staging", 1, "false"));
  EXPECT_EQ(async.staging, Staging::host_memory);
  EXPECT_TRUE(async.staging_async);
  const auto logged = plan_of(line("synchronous_staging", 1, "true") + line("staging_start", 10) + line("staging_stop", 1010));
  EXPECT_EQ(logged.staging, Staging::host_memory);
  EXPECT_FALSE(logged.staging_async);
  // a staging of 22 ms copied nothing (CSCS's v0.7 CosmoFlow reads its file system): no staging, and why
  const auto empty = record_from_mllog(small_log(line("staging_start", 10) + line("staging_stop", 32)), "a.txt");
  EXPECT_EQ(plan_from_yaml_text(empty.plan_spec).staging, Staging::none);
  EXPECT_FALSE(empty.staging_s.has_value());
  EXPECT_NE(std::find(empty.warnings.begin(), empty.warnings.end(),
                      "staging took 0.022 s: it copied nothing the epochs read (the plan stages nothing)"),
            empty.warnings.end());
  EXPECT_EQ(plan_of("").staging, Staging::none);
  EXPECT_EQ(plan_of(line("data_oversampling_factor", 1, "2")).staging_oversampling, 1);  // nothing staged: nothing oversampled
  EXPECT_EQ(plan_of(line("data_oversampling_factor", 1, "2") + line("synchronous_staging", 1, "false")).staging_oversampling, 2);
  if (!fs::exists(kLogs)) GTEST_SKIP() << "no " << kLogs;
  const auto d = load_mllog_file((kLogs / "v2.0/NVIDIA/dgxa100_n256_pytorch/deepcam/result_0.txt").string());
  EXPECT_TRUE(plan_from_yaml_text(d.plan_spec).staging_async);
  EXPECT_EQ(plan_from_yaml_text(d.plan_spec).staging_oversampling, 2);  // data_oversampling_factor: 2
  EXPECT_FALSE(d.staging_s.has_value());
}

TEST(MllogIngest, TheRecipeIsTheHyperParametersAsLogged) {
  if (!fs::exists(kLogs)) GTEST_SKIP() << "no " << kLogs;
  auto recipe = [](const std::string& log) { return load_mllog_file((kLogs / log).string()).stages[0].single().recipe; };
  // NVIDIA's and Eos's DeepCAM at 2048: one recipe, though Eos logs the float32 0.005499999970197678
  const auto dgx = recipe("v2.0/NVIDIA/dgxa100_n256_pytorch/deepcam/result_0.txt");
  EXPECT_EQ(dgx, recipe("v3.0/NVIDIA/eos_n256_ngc23.09_pytorch/deepcam/result_0.txt"));
  EXPECT_NE(dgx.find("opt_lr=0.0055 "), std::string::npos) << dgx;
  EXPECT_NE(dgx.find("scheduler_milestones=[800] "), std::string::npos) << dgx;
  EXPECT_TRUE(dgx.starts_with("batchnorm_group_size=2 opt_name=lamb ")) << dgx;
  // JUWELS Booster ran 2048's learning rate at 256, without 2048's pooled batch norm: another recipe
  const auto juwels = recipe("v2.0/HelmholtzAI/juwelsbooster_gpu_n128_pytorch1.13/deepcam/result_1.txt");
  EXPECT_NE(juwels.find("opt_lr=0.0055 "), std::string::npos) << juwels;
  EXPECT_NE(juwels, dgx);
  // the plan carries it, and reads back
  const auto c = load_mllog_file((kLogs / "v1.0/LBNL/perlmutter_256x4_ngc21.09_mxnet/cosmoflow/result_1.txt").string());
  EXPECT_EQ(c.stages[0].single().recipe,
            "opt_name=sgd opt_base_learning_rate=0.012 opt_learning_rate_warmup_epochs=0 opt_learning_rate_warmup_factor=12 "
            "opt_learning_rate_decay_boundary_epochs=[32,64] opt_learning_rate_decay_factor=[0.25,0.125] dropout=0.5 opt_weight_decay=0");
  EXPECT_EQ(plan_from_yaml_text(c.plan_spec).stages[0].models[0].recipe, c.stages[0].single().recipe);
  EXPECT_EQ(plan_from_yaml_text(plan_to_yaml(plan_from_yaml_text(c.plan_spec))).stages[0].models[0].recipe, c.stages[0].single().recipe);
  // a record keeps it through JSON
  EXPECT_EQ(record_from_json(record_to_json(c)).stages[0].single().recipe, c.stages[0].single().recipe);
}

TEST(MllogIngest, WhatALogDoesNotSayComesFromTheOptions) {
  const std::string log = small_log();
  EXPECT_EQ(plan_from_yaml_text(record_from_mllog(log, "a.log").plan_spec).framework, CommFramework::ddp);
  const MllogOptions hvd{.machine = "", .gpus = {}, .precision = Precision::amp, .framework = CommFramework::horovod, .software = {}};
  const auto p = plan_from_yaml_text(record_from_mllog(log, "b.log", hvd).plan_spec);
  EXPECT_EQ(p.framework, CommFramework::horovod);
  EXPECT_EQ(p.precision, Precision::amp);
  EXPECT_TRUE(p.software.empty());
  // the ML framework, from the system description (ingest-mllog --system-json), through the plan's text
  MllogOptions ngc;
  ngc.software = "pytorch nvidia release";
  const auto text = record_from_mllog(log, "c.log", ngc).plan_spec;
  EXPECT_EQ(plan_from_yaml_text(text).software, "pytorch nvidia release");
  EXPECT_EQ(plan_from_yaml_text(plan_to_yaml(plan_from_yaml_text(text))).software, "pytorch nvidia release");
}

// NVIDIA's v3.0 DeepCAM instances log the whole system's nodes (256 x 8) beside their own global batch.
TEST(MllogIngest, AWeakScalingInstanceTakesItsGpusFromTheOption) {
  const std::string log = line("instance_id", 1, "3") + small_log(line("number_of_nodes", 25, "8"));  // 32 GPUs, global batch 16
  EXPECT_NE(error_of([&] { record_from_mllog(log, "w.log"); })
                .find("w.log: line 4: global_batch_size 16 is less than one sample per GPU of the log's 32: this log is one instance"),
            std::string::npos);
  const auto r = record_from_mllog(log, "w.log", MllogOptions{.machine = "", .gpus = 8, .precision = {}, .framework = {}, .software = {}});
  EXPECT_EQ(r.stages[0].gpus, 8);
  EXPECT_EQ(r.stages[0].single().local_batch, 2);
  EXPECT_EQ(plan_from_yaml_text(r.plan_spec).stages[0].models[0].gpus, 8);
  EXPECT_TRUE(std::any_of(r.warnings.begin(), r.warnings.end(), [](const auto& w) { return w.find("the whole system's") != std::string::npos; }));
  // a log that is no instance keeps its own count
  EXPECT_NE(error_of([&] { record_from_mllog(small_log(), "n.log", MllogOptions{.machine = "", .gpus = 4, .precision = {}, .framework = {}, .software = {}}); })
                .find("n.log: number_of_nodes: the log ran on 8 GPUs, --gpus says 4"),
            std::string::npos);
  const fs::path eos = fs::path(MRPLAN_SOURCE_DIR) / "studies/mlperf-scaling/logs/v3.0/NVIDIA/results/eos_n256_ngc23.09_pytorch/weak/deepcam/result_0.txt";
  const auto e = load_mllog_file(eos.string(), MllogOptions{.machine = "", .gpus = 16, .precision = {}, .framework = {}, .software = {}});
  EXPECT_EQ(e.stages[0].single().local_batch, 8);
  EXPECT_EQ(e.stages[0].single().per_epoch.size(), 6u);
}

TEST(MllogIngest, IngestedRecordsValidate) {
  if (!fs::exists(kLogs)) GTEST_SKIP() << "no " << kLogs;
  const auto path = (kLogs / "v1.0/LBNL/perlmutter_256x4_ngc21.09_mxnet/cosmoflow/result_1.txt").string();
  const auto rows = validate_records({{path, load_mllog_file(path, MllogOptions{.machine = "perlmutter", .gpus = {}, .precision = {}, .framework = {}, .software = {}})}},
                                     calibrated_builtin_profile("perlmutter"));
  EXPECT_TRUE(
      std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.quantity == "epoch_s" && r.measured > 9 && r.predicted > 0; }));
}

TEST(MllogIngest, EvaluationWithoutEpochNumberBelongsToTheOpenEpoch) {
  const auto r = record_from_mllog(small_log(), "s.log");
  const auto& m = r.stages[0].single();
  ASSERT_EQ(m.per_epoch.size(), 1u);
  EXPECT_DOUBLE_EQ(*m.per_epoch[0].metric, 0.5);
  EXPECT_DOUBLE_EQ(m.per_epoch[0].eval_s, 0.002);
  EXPECT_DOUBLE_EQ(m.per_epoch[0].epoch_s, 0.010);
  EXPECT_EQ(m.gpus, 8);
  EXPECT_EQ(m.local_batch, 2);
  EXPECT_EQ(r.log_keys.at("my_own_key"), "{\"a\":1}");  // unknown keys are kept as they are
  EXPECT_EQ(record_from_json(record_to_json(r), "s.json").log_keys, r.log_keys);
}

TEST(MllogIngest, SettingsEveryRankLogsAreReadOnceWhateverTheirOrder) {
  // TACC's TensorFlow CosmoFlow (hpc_results_v2.0 tacc/results/longhorn-tf) logs a model's settings
  // from every rank, their clocks apart (time_ms out of order), then epochs from rank 0 alone
  std::string ranks;
  for (int r = 0; r < 8; ++r) ranks += line("opt_weight_decay", 20 - r, "0") + line("dropout", 12 + r % 3, "0.5");
  const auto rec = record_from_mllog(ranks + small_log(), "tacc.log");
  EXPECT_EQ(rec.stages[0].single().per_epoch.size(), 1u);
  EXPECT_EQ(rec.log_keys.at("dropout"), "0.5");
  EXPECT_EQ(rec.log_keys.at("opt_weight_decay"), "0");
  EXPECT_DOUBLE_EQ(rec.stages[0].single().per_epoch[0].epoch_s, 0.010);  // epoch_start 10 ms, epoch_stop 20 ms
}

TEST(MllogIngest, ContradictionsAreRefusedWithTheirLine) {
  const auto base = small_log();
  EXPECT_NE(error_of([&] { record_from_mllog(base + line("run_start", 40), "a.log"); }).find("a.log: line 16: a second run_start"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] { record_from_mllog(line("run_stop", 5) + base, "b.log"); }).find("b.log: line 1: run_stop comes before run_start"),
      std::string::npos);
  EXPECT_NE(error_of([&] {
              record_from_mllog(line("global_batch_size", 1, "-8") + base, "c.log");
            }).find("c.log: line 1: 'global_batch_size' is -8: expected a whole count from 1 to 2147483647"),
            std::string::npos);
  const std::string no_size =
      line("run_start", 1) + line("epoch_start", 2, "null", R"({"epoch_num": 1})") + line("epoch_stop", 3, "null", R"({"epoch_num": 1})");
  EXPECT_NE(error_of([&] { record_from_mllog(no_size, "d.log"); }).find("d.log: number_of_nodes: the log gives neither"),
            std::string::npos);
  // a log whose epochs never close, or are MLPerf Training's blocks, has nothing to measure
  std::string blocks = base;
  for (const std::string key : {"epoch_start", "epoch_stop"})
    blocks.replace(blocks.find(key), key.size(), key == "epoch_start" ? "block_start" : "block_stop");
  EXPECT_NE(error_of([&] { record_from_mllog(blocks, "b.log"); }).find("b.log: epoch_start: the log marks blocks (block_start/block_stop)"),
            std::string::npos);
  const std::string open_epoch = line("run_start", 1) + line("epoch_start", 2, "null", R"({"epoch_num": 1})") + line("run_stop", 3);
  EXPECT_NE(error_of([&] {
              record_from_mllog(line("number_of_nodes", 1, "2") + line("accelerators_per_node", 1, "4") + open_epoch, "o.log");
            }).find("o.log: epoch_start: the log has no whole epoch"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              record_from_mllog(line("number_of_nodes", 1, "16") + line("accelerators_per_node", 1, "0") + no_size, "cpu.log");
            }).find("cpu.log: accelerators_per_node: 0: a CPU-only system, and mrplan models training on GPUs"),
            std::string::npos);
  EXPECT_EQ(record_from_mllog(no_size, "d.log", MllogOptions{.machine = "", .gpus = 12, .precision = {}, .framework = {}, .software = {}}).stages[0].gpus, 12);
  EXPECT_FALSE(plan_from_yaml_text(record_from_mllog(line("disable_comm_overlap", 1, "\"true\"") + base, "g.log").plan_spec).overlap_comm);
  EXPECT_DOUBLE_EQ(plan_from_yaml_text(record_from_mllog(base, "k.log").plan_spec).bucket_bytes, 25e6);  // DDP's default
  EXPECT_EQ(record_from_mllog(line("disable_comm_overlap", 1, "\"maybe\"") + base, "h.log").log_keys.at("disable_comm_overlap"), "\"maybe\"");
  // the reference's hdf5 format is read by a PyTorch DataLoader that starts its workers every epoch
  EXPECT_FALSE(plan_from_yaml_text(record_from_mllog(line("data_format", 1, "\"hdf5\"") + base, "i.log").plan_spec).persistent_workers);
  EXPECT_TRUE(plan_from_yaml_text(record_from_mllog(line("data_format", 1, "\"dali-numpy\"") + base, "j.log").plan_spec).persistent_workers);
  EXPECT_NE(error_of([&] {
              record_from_mllog(line("batchnorm_group_size", 1, "16") + base, "f.log");
            }).find("f.log: line 1: batchnorm_group_size 16 is more ranks than the run's 8 GPUs"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              record_from_mllog(line("run_start", 1), "e.log", MllogOptions{.machine = "", .gpus = 1, .precision = {}, .framework = {}, .software = {}});
            }).find("e.log: epoch_start: the log has no whole epoch"),
            std::string::npos);
}

// Concurrent models log from different ranks; their lines interleave in any order in the merged log.
TEST(MllogIngest, ConcurrentModelsComeBackInThePlansOrder) {
  auto model = [](const std::string& name, int index, double t) {
    const auto meta = fmt::format(R"({{"epoch_num": 1, "stage": "fusion1", "model": "{}"}})", name);
    return line("mrplan_model", t, "1", fmt::format(R"({{"stage": "fusion1", "model": "{}", "model_index": {}, "resolution": {}, "local_batch": 8}})",
                                                    name, index, index == 0 ? 2 : 1)) +
           line("epoch_start", t, "null", meta) + line("epoch_stop", t + 5, "null", meta);
  };
  const auto log = line("run_start", 1) + model("high", 1, 2) + model("low", 0, 3) + line("run_stop", 20);
  const auto r = record_from_mllog(log, "m.log", MllogOptions{.machine = "", .gpus = 2, .precision = {}, .framework = {}, .software = {}});
  ASSERT_EQ(r.stages.size(), 1u);
  ASSERT_EQ(r.stages[0].models.size(), 2u);
  EXPECT_EQ(r.method, Method::mrmf);
  EXPECT_EQ(r.stages[0].models[0].name, "low");
  EXPECT_EQ(r.stages[0].models[0].resolution, 2);
  EXPECT_EQ(r.stages[0].models[1].name, "high");
}

TEST(MllogIngest, MetadataOfTheWrongTypeIsRefusedWithItsLine) {
  const auto start = line("run_start", 1);
  EXPECT_NE(error_of([&] {
              record_from_mllog(start + line("mrplan_model", 2, "1", R"({"model": "m", "local_batch": "x"})"), "a.log");
            }).find("a.log: line 2: metadata.local_batch is \"x\": expected a whole count from 1"),
            std::string::npos);
  EXPECT_NE(error_of([&] { record_from_mllog(start + line("epoch_start", 2, "null", R"({"epoch_num": 1, "stage": 5})"), "b.log"); })
                .find("b.log: line 2: metadata.stage is 5: expected a string"),
            std::string::npos);
  EXPECT_NE(error_of([&] { record_from_mllog(start + line("mrplan_model", 2, "1e300", "{}"), "c.log"); })
                .find("c.log: line 2: 'mrplan_model' is 1e+300"),
            std::string::npos);
  EXPECT_NE(error_of([&] { record_from_mllog(start + line("run_stop", 2, "null", R"({"status": 0})"), "d.log"); })
                .find("d.log: line 2: metadata.status is 0: expected a string"),
            std::string::npos);
}
