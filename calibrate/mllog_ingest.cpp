#include "calibrate/mllog_ingest.hpp"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "model/errors.hpp"
#include "model/method_rules.hpp"

namespace mrplan {

using nlohmann::json;

namespace {

// What the log says about one model's epochs (mrplan's logs name stage and model; others have one).
struct EpochMarks {
  std::optional<double> start_ms, stop_ms, metric;
};
struct ModelMarks {
  std::string stage, model;
  std::optional<int> gpus, local_batch, resolution;
  std::map<int, EpochMarks> epochs;
};

ModelRecord model_from_marks(const ModelMarks& m, int gpus_default, const std::string& file) {
  ModelRecord mr;
  mr.name = m.model;
  mr.resolution = m.resolution.value_or(1);
  mr.gpus = m.gpus.value_or(gpus_default);
  mr.local_batch = m.local_batch.value_or(1);
  int n = 0;
  for (const auto& [e, marks] : m.epochs) {
    if (!marks.start_ms || !marks.stop_ms) continue;  // an epoch cut off by the end of the run
    if (*marks.stop_ms < *marks.start_ms) fail_input(file, fmt::format("epoch {}", e), "epoch_stop comes before epoch_start");
    EpochRecord er;
    er.epoch = ++n;
    er.epoch_s = (*marks.stop_ms - *marks.start_ms) / 1000.0;
    er.metric = marks.metric;
    mr.per_epoch.push_back(er);
    mr.time_s += er.epoch_s;
  }
  mr.epochs = static_cast<double>(mr.per_epoch.size());
  return mr;
}

}  // namespace

Record record_from_mllog(const std::string& text, const std::string& file) {
  std::optional<double> run_start, run_stop;
  std::string status;
  int64_t global_batch = 0, nodes = 1, per_node = 1;
  std::string metric_key;
  std::vector<ModelMarks> models;  // in the order they first appear
  std::map<std::string, double> fusion_s;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  for (; std::getline(in, line); ) {
    ++lineno;
    const auto pos = line.find(":::MLLOG ");
    if (pos == std::string::npos) continue;
    json j;
    try {
      j = json::parse(line.substr(pos + 9));
    } catch (const json::parse_error& e) {
      fail_input(file, fmt::format("line {}", lineno), std::string("malformed :::MLLOG line: ") + e.what());
    }
    if (!j.contains("key") || !j.contains("time_ms"))
      fail_input(file, fmt::format("line {}", lineno), "an :::MLLOG line needs 'key' and 'time_ms'");
    const std::string key = j["key"];
    const double t = j["time_ms"].get<double>();
    const json meta = j.value("metadata", json::object());
    const json value = j.value("value", json());
    auto model = [&]() -> ModelMarks& {
      const std::string stage = meta.value("stage", "train"), name = meta.value("model", stage);
      for (auto& m : models)
        if (m.stage == stage && m.model == name) return m;
      models.push_back({stage, name, {}, {}, {}, {}});
      return models.back();
    };
    auto epoch = [&]() -> EpochMarks& {
      if (!meta.contains("epoch_num"))
        fail_input(file, fmt::format("line {}", lineno), fmt::format("'{}' has no metadata.epoch_num", key));
      auto& m = model();
      if (meta.contains("resolution")) m.resolution = meta["resolution"].get<int>();
      return m.epochs[meta["epoch_num"].get<int>()];
    };
    if (key == "run_start") run_start = t;
    else if (key == "run_stop") run_stop = t, status = meta.value("status", "");
    else if (key == "epoch_start") epoch().start_ms = t;
    else if (key == "epoch_stop") epoch().stop_ms = t;
    else if (key.rfind("eval_", 0) == 0 && value.is_number()) epoch().metric = value.get<double>(), metric_key = key;
    else if (key == "global_batch_size" && value.is_number()) global_batch = value.get<int64_t>();
    else if (key == "number_of_nodes" && value.is_number()) nodes = value.get<int64_t>();
    else if (key == "accelerators_per_node" && value.is_number()) per_node = value.get<int64_t>();
    else if (key == "mrplan_model" && value.is_number()) {  // a model's GPUs and batch, as it starts
      auto& m = model();
      m.gpus = value.get<int>();
      if (meta.contains("local_batch")) m.local_batch = meta["local_batch"].get<int>();
      if (meta.contains("resolution")) m.resolution = meta["resolution"].get<int>();
    } else if (key == "mrplan_fusion" && value.is_number()) {
      fusion_s[meta.value("stage", "")] = value.get<double>();
    }
  }
  if (!run_start) fail_input(file, "run_start", "no run_start event: not an MLPerf result log");
  Record r;
  r.source = Source::measured;
  r.plan = file;
  r.machine = "mllog";
  r.target_metric = metric_key;
  r.target_maximize = metric_key == "eval_accuracy";  // MLPerf HPC logs eval_accuracy (DeepCAM's IoU) or eval_error
  const int gpus = static_cast<int>(nodes * per_node);
  std::vector<std::vector<const ModelMarks*>> stages;  // models grouped by stage, in log order
  for (const auto& m : models) {
    if (stages.empty() || stages.back().front()->stage != m.stage) stages.emplace_back();
    stages.back().push_back(&m);
  }
  bool concurrent = false;
  for (const auto& ms : stages) {
    StageRecord s;
    s.name = ms.front()->stage;
    s.fusion_s = fusion_s[s.name];
    concurrent = concurrent || ms.size() > 1;
    for (const auto* m : ms) {  // a model whose GPUs the log does not say: an even share of the job's
      s.models.push_back(model_from_marks(*m, gpus / static_cast<int>(ms.size()), file));
      s.models.back().stop_reason = &ms == &stages.back() ? (status.empty() ? "unknown" : status) : "logged";
    }
    finish_stage(s);
    r.stages.push_back(std::move(s));
  }
  r.method = concurrent ? Method::mrmf : r.stages.size() > 1 ? Method::mrt : Method::baseline;
  if (r.stages.size() == 1) r.stages[0].global_batch = static_cast<int>(global_batch);
  r.totals = run_totals(r.stages, status == "success");
  // the log's own run time, from run_start to run_stop, includes what lies between its epochs
  if (run_stop) {
    r.totals.time_to_target_s = (*run_stop - *run_start) / 1000.0;
    r.totals.gpu_hours = r.totals.time_to_target_s * gpus / 3600.0;
  }
  if (!run_stop) r.warnings.push_back("no run_stop event: the run did not finish");
  return r;
}

Record load_mllog_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail_input(path, "", "cannot open the log file");
  std::stringstream ss;
  ss << in.rdbuf();
  return record_from_mllog(ss.str(), path);
}

}  // namespace mrplan
