// Issue 44's reproducers that need no process of their own: counts that wrapped, a second YAML
// document read as nothing, metrics that changed nothing, impossible times and qualities in MLPerf
// logs, a key given twice in a system description, and values that would have run as commands in a
// job script. Each is refused with a message naming the file (or option) and the key.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "calibrate/mllog_events.hpp"
#include "calibrate/mllog_ingest.hpp"
#include "calibrate/system_json.hpp"
#include "cli/jobscript.hpp"
#include "model/errors.hpp"
#include "model/builtin_workloads.hpp"
#include "model/hardware_catalogue.hpp"
#include "model/layer_table.hpp"
#include "model/plan_yaml.hpp"
#include "sim/builtin_plans.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/plan_edit.hpp"

using namespace mrplan;
using mrplan::testing::error_of;
using mrplan::testing::plan_error;
using mrplan::testing::plan_text;

namespace {

std::string mllog_line(double time_ms, const std::string& key, const std::string& value) {
  return fmt::format(":::MLLOG {{\"namespace\": \"\", \"time_ms\": {}, \"event_type\": \"POINT_IN_TIME\", \"key\": \"{}\", \"value\": {}, "
                     "\"metadata\": {{\"epoch_num\": 1}}}}\n",
                     time_ms, key, value);
}

}  // namespace

TEST(BoundedInputs, AGlobalBatchPastAnIntIsRefusedNotWrapped) {
  EXPECT_EQ(plan_error("local_batch: 8", "local_batch: 2147483647"),
            "p.yaml: stages[0].local_batch: 32 GPUs x local batch 2147483647 = 68719476704 samples a step is out of range (at most "
            "2147483647)");
}

TEST(BoundedInputs, OneYamlDocumentAFile) {
  const auto text = plan_text();
  const auto lines = std::count(text.begin(), text.end(), '\n');
  EXPECT_EQ(error_of([] { plan_from_yaml_text(plan_text() + "---\nname: second\n", "p.yaml"); }),
            fmt::format("p.yaml: line {}: a second YAML document (after --- or ...): expected one a file", lines + 2));
  // a document marker before the one document, and comments after its end, are one document
  EXPECT_EQ(error_of([] { plan_from_yaml_text("%YAML 1.2\n---\n" + plan_text() + "...\n# the end\n", "p.yaml"); }), "<no error>");
}

TEST(BoundedInputs, ATargetMetricMustBeKnownAndItsGoalItsDirection) {
  EXPECT_NE(plan_error("metric: val_mse", "metric: val_banana").find("p.yaml: target.metric: 'val_banana' is no metric mrplan knows"),
            std::string::npos);
  EXPECT_EQ(plan_error("goal: minimize", "goal: maximize"), "p.yaml: target.goal: maximize, but val_mse is an error: its goal is minimize");
  // an MLPerf log's own quality key passes with the goal the log gives it
  EXPECT_EQ(plan_error("metric: val_mse", "metric: eval_top5"), "<no error>");
}

TEST(BoundedInputs, NamesAreTextWithoutControlCharacters) {
  EXPECT_EQ(plan_error("name: cosmoflow-mrt@summit", "name: \"a\\u0007b\""),
            "p.yaml: name: 'a\\x07b' is not text: expected UTF-8 without control characters");
  EXPECT_EQ(plan_error("name: cosmoflow-mrt@summit", "name: \"caf\\u00e9\""), "<no error>");
  EXPECT_EQ(printable("a\nb\xff"), "a\\x0ab\\xff");
}

TEST(BoundedInputs, MlperfLogsWithImpossibleTimesOrQualitiesAreRefusedWithTheLine) {
  EXPECT_EQ(error_of([] { parse_mllog_events(mllog_line(-5, "run_start", "null"), "r.txt"); }),
            "r.txt: line 1: time_ms -5 is not a time (expected milliseconds since 1970, 0 to 1e13)");
  EXPECT_EQ(error_of([] { parse_mllog_events(mllog_line(1e305, "run_start", "null"), "r.txt"); }),
            "r.txt: line 1: time_ms 1e+305 is not a time (expected milliseconds since 1970, 0 to 1e13)");
  const std::string head = mllog_line(1, "run_start", "null") + mllog_line(2, "epoch_start", "null");
  EXPECT_EQ(error_of([&] { record_from_mllog(head + mllog_line(3, "eval_error", "-5"), "r.txt"); }),
            "r.txt: line 3: eval_error is -5: expected a finite value of at least 0");
  EXPECT_EQ(error_of([&] { record_from_mllog(head + mllog_line(3, "eval_accuracy", "\"0.9\""), "r.txt"); }),
            "r.txt: line 3: eval_accuracy is \"0.9\": expected a number");
}

TEST(BoundedInputs, ASystemDescriptionWithAKeyTwiceIsRefused) {
  EXPECT_EQ(error_of([] {
              system_from_json_text(R"({"accelerator_model_name": "A100", "accelerator_model_name": "V100"})", "s.json", builtin_catalogue());
            }),
            "s.json: the key 'accelerator_model_name' appears twice in one object");
}

TEST(BoundedInputs, AJobScriptCarriesNoCommandFromItsValues) {
  const Plan plan = builtin_plan("cosmoflow-mrt@perlmutter");
  JobRequest job;
  job.plan_file = "plans/my plan.yaml", job.out_dir = "out/$(touch x)", job.job_name = "cosmo", job.time_limit_s = 3600;
  const auto script = render_jobscript(plan, find_site("perlmutter", std::nullopt), 4, job);
  EXPECT_NE(script.find(" \"$MRPLAN\" run 'plans/my plan.yaml' --out 'out/$(touch x)' --device \"${MRPLAN_DEVICE:-cuda}\""), std::string::npos)
      << script;
  job.out_dir = "it's";
  EXPECT_NE(render_jobscript(plan, find_site("perlmutter", std::nullopt), 4, job).find("--out 'it'\\''s'"), std::string::npos);
  job.account = "m1\necho injected";
  EXPECT_EQ(error_of([&] { render_jobscript(plan, find_site("perlmutter", std::nullopt), 4, job); }),
            "--account: 'm1\\x0aecho injected' is not a name a batch script can carry: expected 1 to 128 letters, digits, '_', '-' or "
            "'.', not starting with '-' or '.'");
  job.account = "", job.job_name = "../up";
  EXPECT_NE(error_of([&] { render_jobscript(plan, find_site("perlmutter", std::nullopt), 4, job); }).find("--name (default: the plan's name): '../up'"),
            std::string::npos);
  job.job_name = "cosmo", job.out_dir = "a\nb";
  EXPECT_NE(error_of([&] { render_jobscript(plan, find_site("perlmutter", std::nullopt), 4, job); }).find("--run-out: 'a\\x0ab' holds a control character"),
            std::string::npos);
}

TEST(BoundedInputs, ANetworkPastCountsADoubleHoldsIsRefused) {
  EXPECT_EQ(error_of([] { builtin_workload("cosmoflow-mrt", {.size = 0, .width = 1e9}); }),
            "cosmoflow-mrt: width: 1000000000 is out of range (above 0, at most 1024)");
  EXPECT_EQ(error_of([] { resolve(builtin_workload("cosmoflow-mrt", {.size = 2000000000, .width = 1}), {2000000000, 2000000000, 2000000000}, 1); }),
            "workload: a layer would count more than 2^53 elements or parameters: its input size or width is out of range");
}

TEST(BoundedInputs, AnInterconnectOfAnotherGenerationIsNotReadAsTheGpusOwn) {
  const auto d = system_from_json_text(R"({"accelerator_model_name": "NVIDIA A100-SXM4-40GB", "accelerator_interconnect": "NVLink 7.0"})",
                                       "s.json", builtin_catalogue());
  ASSERT_TRUE(d.unread.count("--intra"));
  EXPECT_EQ(d.unread.at("--intra"), "accelerator_interconnect 'NVLink 7.0' names NVLink 7, but the catalogue's A100-SXM4-40GB has NVLink3");
  EXPECT_TRUE(d.request.intra.empty());
  const auto ok = system_from_json_text(R"({"accelerator_model_name": "NVIDIA A100-SXM4-40GB", "accelerator_interconnect": "NVLink-3"})",
                                        "s.json", builtin_catalogue());
  EXPECT_EQ(ok.request.intra, "NVLink3");
}
