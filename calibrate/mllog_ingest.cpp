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

Record record_from_mllog(const std::string& text, const std::string& file) {
  std::optional<double> run_start, run_stop;
  std::string status;
  int64_t global_batch = 0, nodes = 1, per_node = 1;
  std::map<int, double> start_ms, stop_ms, metric;
  std::string metric_key;
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
    auto epoch = [&]() -> int {
      if (!meta.contains("epoch_num"))
        fail_input(file, fmt::format("line {}", lineno), fmt::format("'{}' has no metadata.epoch_num", key));
      return meta["epoch_num"].get<int>();
    };
    if (key == "run_start") run_start = t;
    else if (key == "run_stop") run_stop = t, status = meta.value("status", "");
    else if (key == "epoch_start") start_ms[epoch()] = t;
    else if (key == "epoch_stop") stop_ms[epoch()] = t;
    else if (key.rfind("eval_", 0) == 0 && value.is_number()) metric[epoch()] = value.get<double>(), metric_key = key;
    else if (key == "global_batch_size" && value.is_number()) global_batch = value.get<int64_t>();
    else if (key == "number_of_nodes" && value.is_number()) nodes = value.get<int64_t>();
    else if (key == "accelerators_per_node" && value.is_number()) per_node = value.get<int64_t>();
  }
  if (!run_start) fail_input(file, "run_start", "no run_start event: not an MLPerf result log");
  Record r;
  r.source = Source::measured;
  r.plan = file;
  r.method = Method::baseline;
  r.machine = "mllog";
  r.target_metric = metric_key;
  r.target_maximize = metric_key == "eval_accuracy";  // MLPerf HPC logs eval_accuracy (DeepCAM's IoU) or eval_error
  StageRecord s;
  s.name = "train";
  ModelRecord mr;
  mr.name = s.name;
  mr.gpus = static_cast<int>(nodes * per_node);
  mr.local_batch = mr.gpus > 0 ? std::max(1, static_cast<int>(global_batch) / mr.gpus) : 1;
  for (const auto& [e, t0] : start_ms) {
    auto it = stop_ms.find(e);
    if (it == stop_ms.end()) continue;  // an epoch cut off by the end of the run
    if (it->second < t0) fail_input(file, fmt::format("epoch {}", e), "epoch_stop comes before epoch_start");
    EpochRecord er;
    er.epoch = e;
    er.epoch_s = (it->second - t0) / 1000.0;
    if (auto m = metric.find(e); m != metric.end()) er.metric = m->second;
    mr.per_epoch.push_back(er);
    mr.time_s += er.epoch_s;
  }
  mr.epochs = static_cast<double>(mr.per_epoch.size());
  mr.stop_reason = status.empty() ? "unknown" : status;
  s.models.push_back(mr);
  finish_stage(s);
  s.global_batch = static_cast<int>(global_batch);
  r.stages.push_back(s);
  r.totals = run_totals(r.stages, status == "success");
  // the log's own run time, from run_start to run_stop, includes what lies between its epochs
  if (run_stop) {
    r.totals.time_to_target_s = (*run_stop - *run_start) / 1000.0;
    r.totals.gpu_hours = r.totals.time_to_target_s * s.gpus / 3600.0;
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
