#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/errors.hpp"
#include "model/record.hpp"

namespace mrplan {

using nlohmann::json;

namespace {

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json phases_j(const std::optional<StepPhases>& p) {
  if (!p) return json(nullptr);
  return {{"h2d_s", p->h2d_s}, {"forward_s", p->forward_s}, {"backward_s", p->backward_s}, {"optimizer_s", p->optimizer_s}};
}

json to_j(const Record& r) {
  json j;
  j["schema"] = r.schema;
  j["source"] = r.source;
  j["plan"] = r.plan;
  j["workload"] = r.workload;
  j["machine"] = r.machine;
  j["method"] = r.method;
  j["target"] = {{"metric", r.target_metric}, {"value", r.target_value}, {"goal", r.target_maximize ? "maximize" : "minimize"}};
  j["stages"] = json::array();
  for (const auto& s : r.stages) {
    json js;
    js["name"] = s.name;
    js["models"] = json::array();
    for (const auto& m : s.models)
      js["models"].push_back({{"workload", m.workload}, {"resolution", m.resolution}, {"gpus", m.gpus},
                              {"local_batch", m.local_batch}, {"params", m.params}, {"memory_bytes", m.memory_bytes},
                              {"memory_capacity_bytes", m.memory_capacity_bytes}, {"memory_fits", m.memory_fits}});
    js["gpus"] = s.gpus;
    js["global_batch"] = s.global_batch;
    js["iterations_per_epoch"] = s.iterations_per_epoch;
    js["iterations"] = s.iterations;
    js["epochs"] = s.epochs;
    js["switch_epoch"] = opt(s.switch_epoch);
    js["stop_reason"] = s.stop_reason;
    js["allreduce_algorithm"] = s.allreduce_algorithm;
    js["io_s"] = s.io_s, js["comm_s"] = s.comm_s, js["compute_s"] = s.compute_s, js["time_s"] = s.time_s;
    js["eval_s"] = s.eval_s;
    js["phases"] = phases_j(s.phases);
    js["per_epoch"] = json::array();
    for (const auto& e : s.per_epoch)
      js["per_epoch"].push_back({{"epoch", e.epoch}, {"io_s", e.io_s}, {"comm_s", e.comm_s}, {"compute_s", e.compute_s},
                                 {"epoch_s", e.epoch_s}, {"eval_s", e.eval_s}, {"fraction", e.fraction}, {"loss", opt(e.loss)},
                                 {"metric", opt(e.metric)}, {"phases", phases_j(e.phases)}});
    j["stages"].push_back(js);
  }
  const auto& t = r.totals;
  j["totals"] = {{"time_to_target_s", t.time_to_target_s}, {"gpu_hours", t.gpu_hours}, {"io_s", t.io_s},
                 {"comm_s", t.comm_s}, {"compute_s", t.compute_s}, {"epochs", t.epochs},
                 {"reached_target", t.reached_target}};
  j["warnings"] = r.warnings;
  if (!r.plan_spec.empty()) j["plan_spec"] = r.plan_spec;
  if (r.device_matmul_flops_per_s) j["device_matmul_flops_per_s"] = *r.device_matmul_flops_per_s;
  return j;
}

struct Reader {
  std::string file;

  const json& at(const json& j, const std::string& key, const std::string& path) const {
    if (!j.is_object()) fail_input(file, path, "expected an object");
    auto it = j.find(key);
    if (it == j.end()) fail_input(file, path + (path.empty() ? "" : ".") + key, "missing required field");
    return *it;
  }
  std::string p(const std::string& path, const std::string& key) const { return path.empty() ? key : path + "." + key; }
  double num(const json& j, const std::string& key, const std::string& path) const {
    const auto& v = at(j, key, path);
    if (!v.is_number()) fail_input(file, p(path, key), "expected a number");
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail_input(file, p(path, key), "expected a finite number");
    return d;
  }
  double time(const json& j, const std::string& key, const std::string& path) const {
    const double d = num(j, key, path);
    if (d < 0) fail_input(file, p(path, key), fmt::format("a time cannot be negative, got {}", d));
    return d;
  }
  std::optional<double> optnum(const json& j, const std::string& key, const std::string& path) const {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) fail_input(file, p(path, key), "expected a number or null");
    const double d = it->get<double>();
    if (!std::isfinite(d)) fail_input(file, p(path, key), "NaN or infinite value");
    return d;
  }
  std::string str(const json& j, const std::string& key, const std::string& path) const {
    const auto& v = at(j, key, path);
    if (!v.is_string()) fail_input(file, p(path, key), "expected a string");
    return v.get<std::string>();
  }
  std::optional<StepPhases> phases(const json& j, const std::string& path) const {
    auto it = j.find("phases");
    if (it == j.end() || it->is_null()) return std::nullopt;
    const std::string pp = p(path, "phases");
    return StepPhases{time(*it, "h2d_s", pp), time(*it, "forward_s", pp), time(*it, "backward_s", pp), time(*it, "optimizer_s", pp)};
  }
  int64_t integer(const json& j, const std::string& key, const std::string& path) const {
    const auto& v = at(j, key, path);
    if (!v.is_number_integer()) fail_input(file, p(path, key), "expected an integer");
    return v.get<int64_t>();
  }
};

}  // namespace

std::string record_to_json(const Record& r, int indent) { return to_j(r).dump(indent) + "\n"; }

Record record_from_json(const std::string& text, const std::string& file) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    fail_input(file, "", std::string("not valid JSON: ") + e.what());
  }
  Reader R{file};
  Record r;
  r.schema = R.str(j, "schema", "");
  if (r.schema != "mrplan.record/1")
    fail_input(file, "schema", fmt::format("expected 'mrplan.record/1', got '{}'", r.schema));
  r.source = R.str(j, "source", "");
  if (r.source != "predicted" && r.source != "measured")
    fail_input(file, "source", "expected 'predicted' or 'measured'");
  r.plan = R.str(j, "plan", "");
  r.workload = R.str(j, "workload", "");
  r.machine = R.str(j, "machine", "");
  r.method = R.str(j, "method", "");
  const auto& tgt = R.at(j, "target", "");
  r.target_metric = R.str(tgt, "metric", "target");
  r.target_value = R.num(tgt, "value", "target");
  if (tgt.contains("goal")) {  // records written before it existed held losses and errors
    const auto goal = R.str(tgt, "goal", "target");
    if (goal != "minimize" && goal != "maximize") fail_input(file, "target.goal", fmt::format("'{}': expected minimize or maximize", goal));
    r.target_maximize = goal == "maximize";
  }
  const auto& stages = R.at(j, "stages", "");
  if (!stages.is_array()) fail_input(file, "stages", "expected a list");
  for (size_t i = 0; i < stages.size(); ++i) {
    const auto& js = stages[i];
    const std::string sp = fmt::format("stages[{}]", i);
    StageRecord s;
    s.name = R.str(js, "name", sp);
    const auto& models = R.at(js, "models", sp);
    if (!models.is_array()) fail_input(file, sp + ".models", "expected a list");
    for (size_t k = 0; k < models.size(); ++k) {
      const auto mp = fmt::format("{}.models[{}]", sp, k);
      ModelRecord m;
      m.workload = R.str(models[k], "workload", mp);
      m.resolution = static_cast<int>(R.integer(models[k], "resolution", mp));
      m.gpus = static_cast<int>(R.integer(models[k], "gpus", mp));
      m.local_batch = static_cast<int>(R.integer(models[k], "local_batch", mp));
      m.params = R.integer(models[k], "params", mp);
      m.memory_bytes = R.optnum(models[k], "memory_bytes", mp).value_or(0);
      m.memory_capacity_bytes = R.optnum(models[k], "memory_capacity_bytes", mp).value_or(0);
      if (auto it = models[k].find("memory_fits"); it != models[k].end() && it->is_boolean()) m.memory_fits = *it;
      s.models.push_back(m);
    }
    s.gpus = static_cast<int>(R.integer(js, "gpus", sp));
    if (s.gpus < 1) fail_input(file, sp + ".gpus", "must be >= 1");
    s.global_batch = static_cast<int>(R.integer(js, "global_batch", sp));
    s.iterations_per_epoch = R.integer(js, "iterations_per_epoch", sp);
    s.iterations = R.integer(js, "iterations", sp);
    s.epochs = R.time(js, "epochs", sp);
    s.switch_epoch = R.optnum(js, "switch_epoch", sp);
    s.stop_reason = R.str(js, "stop_reason", sp);
    if (auto it = js.find("allreduce_algorithm"); it != js.end() && it->is_string()) s.allreduce_algorithm = *it;
    s.io_s = R.time(js, "io_s", sp), s.comm_s = R.time(js, "comm_s", sp);
    s.compute_s = R.time(js, "compute_s", sp), s.time_s = R.time(js, "time_s", sp);
    s.eval_s = R.optnum(js, "eval_s", sp).value_or(0.0);  // records before it was measured lack it
    if (!(s.eval_s >= 0 && s.eval_s <= s.time_s)) fail_input(file, sp + ".eval_s", "expected 0 <= eval_s <= time_s");
    s.phases = R.phases(js, sp);
    const auto& pe = R.at(js, "per_epoch", sp);
    if (!pe.is_array()) fail_input(file, sp + ".per_epoch", "expected a list");
    for (size_t e = 0; e < pe.size(); ++e) {
      const auto ep = fmt::format("{}.per_epoch[{}]", sp, e);
      EpochRecord er;
      er.epoch = static_cast<int>(R.integer(pe[e], "epoch", ep));
      er.io_s = R.time(pe[e], "io_s", ep), er.comm_s = R.time(pe[e], "comm_s", ep);
      er.compute_s = R.time(pe[e], "compute_s", ep), er.epoch_s = R.time(pe[e], "epoch_s", ep);
      er.fraction = R.optnum(pe[e], "fraction", ep).value_or(1.0);
      er.eval_s = R.optnum(pe[e], "eval_s", ep).value_or(0.0);
      if (!(er.eval_s >= 0)) fail_input(file, ep + ".eval_s", "expected a time >= 0");
      er.loss = R.optnum(pe[e], "loss", ep);
      er.metric = R.optnum(pe[e], "metric", ep);
      er.phases = R.phases(pe[e], ep);
      s.per_epoch.push_back(er);
    }
    r.stages.push_back(std::move(s));
  }
  const auto& t = R.at(j, "totals", "");
  r.totals.time_to_target_s = R.time(t, "time_to_target_s", "totals");
  r.totals.gpu_hours = R.time(t, "gpu_hours", "totals");
  r.totals.io_s = R.time(t, "io_s", "totals");
  r.totals.comm_s = R.time(t, "comm_s", "totals");
  r.totals.compute_s = R.time(t, "compute_s", "totals");
  r.totals.epochs = R.time(t, "epochs", "totals");
  if (auto it = t.find("reached_target"); it != t.end() && it->is_boolean()) r.totals.reached_target = *it;
  if (auto it = j.find("warnings"); it != j.end() && it->is_array())
    for (const auto& w : *it) r.warnings.push_back(w.get<std::string>());
  if (auto it = j.find("plan_spec"); it != j.end() && it->is_string()) r.plan_spec = *it;
  r.device_matmul_flops_per_s = R.optnum(j, "device_matmul_flops_per_s", "");
  if (r.device_matmul_flops_per_s && !(*r.device_matmul_flops_per_s > 0))
    fail_input(file, "device_matmul_flops_per_s", "expected a rate > 0");
  return r;
}

Record load_record_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail_input(path, "", "cannot open record file");
  std::stringstream ss;
  ss << in.rdbuf();
  return record_from_json(ss.str(), path);
}

}  // namespace mrplan
