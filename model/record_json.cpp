#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "model/errors.hpp"
#include "model/text_file.hpp"
#include "model/record.hpp"
#include "model/method_table.hpp"

namespace mrplan {

using nlohmann::json;

namespace {

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json phases_j(const std::optional<StepPhases>& p) {
  if (!p) return json(nullptr);
  return {{"h2d_s", p->h2d_s}, {"forward_s", p->forward_s}, {"backward_s", p->backward_s}, {"optimizer_s", p->optimizer_s}};
}

json epoch_j(const EpochRecord& e) {
  return {{"epoch", e.epoch}, {"io_s", e.io_s}, {"comm_s", e.comm_s}, {"compute_s", e.compute_s}, {"epoch_s", e.epoch_s},
          {"eval_s", e.eval_s}, {"fraction", e.fraction}, {"loss", opt(e.loss)}, {"metric", opt(e.metric)},
          {"phases", phases_j(e.phases)}};
}

json model_j(const ModelRecord& m) {
  json j = {{"name", m.name}, {"workload", m.workload}, {"resolution", m.resolution}, {"gpus", m.gpus},
            {"local_batch", m.local_batch}, {"params", m.params}, {"memory_bytes", m.memory_bytes},
            {"memory_capacity_bytes", m.memory_capacity_bytes}, {"memory_fits", m.memory_fits},
            {"iterations_per_epoch", m.iterations_per_epoch}, {"iterations", m.iterations}, {"epochs", m.epochs},
            {"switch_epoch", opt(m.switch_epoch)}, {"stop_reason", to_string(m.stop_reason)},
            {"allreduce_algorithm", m.allreduce_algorithm}, {"data_tiers", m.data_tiers}, {"io_s", m.io_s}, {"comm_s", m.comm_s},
            {"compute_s", m.compute_s}, {"time_s", m.time_s}, {"eval_s", m.eval_s}, {"phases", phases_j(m.phases)}};
  if (!m.allreduce_library.empty()) j["allreduce_library"] = m.allreduce_library;
  if (!m.recipe.empty()) j["recipe"] = m.recipe;
  j["per_epoch"] = json::array();
  for (const auto& e : m.per_epoch) j["per_epoch"].push_back(epoch_j(e));
  return j;
}

json to_j(const Record& r) {
  json j;
  j["schema"] = r.schema;
  j["source"] = to_string(r.source);
  j["plan"] = r.plan;
  j["workload"] = r.workload;
  j["machine"] = r.machine;
  j["method"] = to_string(r.method);
  j["target"] = {{"metric", r.target_metric}, {"value", r.target_value}, {"goal", r.target_maximize ? "maximize" : "minimize"}};
  j["stages"] = json::array();
  for (const auto& s : r.stages) {
    json js = {{"name", s.name}, {"gpus", s.gpus}, {"global_batch", s.global_batch}, {"epochs", s.epochs},
               {"fusion_s", s.fusion_s}, {"io_s", s.io_s}, {"comm_s", s.comm_s}, {"compute_s", s.compute_s},
               {"eval_s", s.eval_s}, {"time_s", s.time_s}};
    js["models"] = json::array();
    for (const auto& m : s.models) js["models"].push_back(model_j(m));
    j["stages"].push_back(js);
  }
  const auto& t = r.totals;
  j["totals"] = {{"time_to_target_s", t.time_to_target_s}, {"gpu_hours", t.gpu_hours}, {"io_s", t.io_s},
                 {"comm_s", t.comm_s}, {"compute_s", t.compute_s}, {"epochs", t.epochs},
                 {"reached_target", t.reached_target}};
  j["warnings"] = r.warnings;
  if (r.spread) {
    auto q = [](const Quantiles& x) { return json{{"p10", x.p10}, {"p50", x.p50}, {"p90", x.p90}}; };
    j["spread"] = {{"time_to_target_s", q(r.spread->time_to_target_s)}, {"gpu_hours", q(r.spread->gpu_hours)},
                   {"samples", r.spread->samples}, {"reached", r.spread->reached}, {"seed", r.spread->seed}};
  }
  if (!r.plan_spec.empty()) j["plan_spec"] = r.plan_spec;
  if (r.device_matmul_flops_per_s) j["device_matmul_flops_per_s"] = *r.device_matmul_flops_per_s;
  if (r.staging_s) j["staging_s"] = *r.staging_s;
  if (!r.log_keys.empty()) j["log_keys"] = r.log_keys;
  if (!r.provenance.empty()) j["provenance"] = r.provenance;
  return j;
}

struct Reader {
  std::string file;

  [[noreturn]] void fail(const std::string& path, const std::string& message) const { fail_input(file, path, message); }

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

// A model's own fields; in schema 1 the breakdown sat on its stage (`bd`), one model per stage.
ModelRecord read_model(const Reader& R, const json& jm, const json& bd, const std::string& mp, const std::string& bp) {
  ModelRecord m;
  if (auto it = jm.find("name"); it != jm.end() && it->is_string()) m.name = *it;
  m.workload = R.str(jm, "workload", mp);
  m.resolution = static_cast<int>(R.integer(jm, "resolution", mp));
  m.gpus = static_cast<int>(R.integer(jm, "gpus", mp));
  if (m.gpus < 1) R.fail(mp + ".gpus", "must be >= 1");
  m.local_batch = static_cast<int>(R.integer(jm, "local_batch", mp));
  m.params = R.integer(jm, "params", mp);
  m.memory_bytes = R.optnum(jm, "memory_bytes", mp).value_or(0);
  m.memory_capacity_bytes = R.optnum(jm, "memory_capacity_bytes", mp).value_or(0);
  if (auto it = jm.find("memory_fits"); it != jm.end() && it->is_boolean()) m.memory_fits = *it;
  m.iterations_per_epoch = R.integer(bd, "iterations_per_epoch", bp);
  m.iterations = R.integer(bd, "iterations", bp);
  m.epochs = R.time(bd, "epochs", bp);
  m.switch_epoch = R.optnum(bd, "switch_epoch", bp);
  const auto why = stop_reason_from_string(R.str(bd, "stop_reason", bp));
  if (!why) R.fail(bp + ".stop_reason", "expected " + stop_reason_names());
  m.stop_reason = *why;
  if (auto it = bd.find("allreduce_algorithm"); it != bd.end() && it->is_string()) m.allreduce_algorithm = *it;
  if (auto it = bd.find("allreduce_library"); it != bd.end() && it->is_string()) m.allreduce_library = *it;
  // measured records before 2026-11-27 named the library in allreduce_algorithm
  if (m.allreduce_library.empty() && (m.allreduce_algorithm == "nccl" || m.allreduce_algorithm == "mpi"))
    m.allreduce_library = m.allreduce_algorithm, m.allreduce_algorithm.clear();
  if (auto it = bd.find("data_tiers"); it != bd.end() && it->is_string()) m.data_tiers = *it;
  if (auto it = bd.find("recipe"); it != bd.end() && it->is_string()) m.recipe = *it;
  m.io_s = R.time(bd, "io_s", bp), m.comm_s = R.time(bd, "comm_s", bp);
  m.compute_s = R.time(bd, "compute_s", bp), m.time_s = R.time(bd, "time_s", bp);
  m.eval_s = R.optnum(bd, "eval_s", bp).value_or(0.0);  // records before it was measured lack it
  if (!(m.eval_s >= 0 && m.eval_s <= m.time_s)) R.fail(bp + ".eval_s", "expected 0 <= eval_s <= time_s");
  m.phases = R.phases(bd, bp);
  const auto& pe = R.at(bd, "per_epoch", bp);
  if (!pe.is_array()) R.fail(bp + ".per_epoch", "expected a list");
  for (size_t e = 0; e < pe.size(); ++e) {
    const auto ep = fmt::format("{}.per_epoch[{}]", bp, e);
    EpochRecord er;
    er.epoch = static_cast<int>(R.integer(pe[e], "epoch", ep));
    er.io_s = R.time(pe[e], "io_s", ep), er.comm_s = R.time(pe[e], "comm_s", ep);
    er.compute_s = R.time(pe[e], "compute_s", ep), er.epoch_s = R.time(pe[e], "epoch_s", ep);
    er.fraction = R.optnum(pe[e], "fraction", ep).value_or(1.0);
    er.eval_s = R.optnum(pe[e], "eval_s", ep).value_or(0.0);
    if (!(er.eval_s >= 0)) R.fail(ep + ".eval_s", "expected a time >= 0");
    er.loss = R.optnum(pe[e], "loss", ep);
    er.metric = R.optnum(pe[e], "metric", ep);
    er.phases = R.phases(pe[e], ep);
    m.per_epoch.push_back(er);
  }
  return m;
}

StageRecord read_stage(const Reader& R, const json& js, const std::string& sp, bool schema1) {
  StageRecord s;
  s.name = R.str(js, "name", sp);
  const auto& models = R.at(js, "models", sp);
  if (!models.is_array()) R.fail(sp + ".models", "expected a list");
  if (models.empty()) R.fail(sp + ".models", "a stage trains at least one model");
  if (schema1 && models.size() != 1) R.fail(sp + ".models", "schema 1 records hold one model per stage");
  for (size_t k = 0; k < models.size(); ++k) {
    const auto mp = fmt::format("{}.models[{}]", sp, k);
    s.models.push_back(read_model(R, models[k], schema1 ? js : models[k], mp, schema1 ? sp : mp));
    if (s.models.back().name.empty()) s.models.back().name = models.size() == 1 ? s.name : fmt::format("model{}", k + 1);
  }
  s.gpus = static_cast<int>(R.integer(js, "gpus", sp));
  if (s.gpus < 1) R.fail(sp + ".gpus", "must be >= 1");
  s.global_batch = static_cast<int>(R.integer(js, "global_batch", sp));
  s.epochs = R.time(js, "epochs", sp);
  s.fusion_s = R.optnum(js, "fusion_s", sp).value_or(0.0);
  if (!(s.fusion_s >= 0)) R.fail(sp + ".fusion_s", "expected a time >= 0");
  s.io_s = R.time(js, "io_s", sp), s.comm_s = R.time(js, "comm_s", sp);
  s.compute_s = R.time(js, "compute_s", sp), s.time_s = R.time(js, "time_s", sp);
  s.eval_s = R.optnum(js, "eval_s", sp).value_or(0.0);
  if (!(s.eval_s >= 0 && s.eval_s <= s.time_s)) R.fail(sp + ".eval_s", "expected 0 <= eval_s <= time_s");
  return s;
}

}  // namespace

const char* to_string(Source s) { return s == Source::measured ? "measured" : "predicted"; }

const ModelRecord& StageRecord::single() const {
  if (models.size() != 1)
    fail_input("", "stages." + name, fmt::format("trains {} models at once; expected one (a baseline or MRT stage)", models.size()));
  return models.front();
}
ModelRecord& StageRecord::single() { return const_cast<ModelRecord&>(std::as_const(*this).single()); }

std::string record_to_json(const Record& r, int indent) { return to_j(r).dump(indent) + "\n"; }
std::string model_record_to_json(const ModelRecord& m) { return model_j(m).dump() + "\n"; }

namespace {

json parse(const std::string& text, const std::string& file) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number beyond double
    fail_input(file, "", std::string("not valid JSON: ") + e.what());
  }
}

}  // namespace

ModelRecord model_record_from_json(const std::string& text, const std::string& file) {
  const json j = parse(text, file);
  Reader R{file};
  return read_model(R, j, j, "", "");
}

namespace {

// target: its metric and value; its goal where written (records before it held losses and errors).
void read_target(const Reader& R, const json& tgt, Record& r) {
  r.target_metric = R.str(tgt, "metric", "target");
  r.target_value = R.num(tgt, "value", "target");
  if (tgt.contains("goal")) {
    const auto goal = R.str(tgt, "goal", "target");
    if (goal != "minimize" && goal != "maximize") R.fail("target.goal", fmt::format("'{}': expected minimize or maximize", goal));
    r.target_maximize = goal == "maximize";
  }
}

RecordTotals read_totals(const Reader& R, const json& t) {
  RecordTotals out;
  out.time_to_target_s = R.time(t, "time_to_target_s", "totals");
  out.gpu_hours = R.time(t, "gpu_hours", "totals");
  out.io_s = R.time(t, "io_s", "totals");
  out.comm_s = R.time(t, "comm_s", "totals");
  out.compute_s = R.time(t, "compute_s", "totals");
  out.epochs = R.time(t, "epochs", "totals");
  if (auto it = t.find("reached_target"); it != t.end() && it->is_boolean()) out.reached_target = *it;
  return out;
}

// spread: P10 <= P50 <= P90 of the time to target and GPU-hours, the draws and the seed.
RecordSpread read_spread(const Reader& R, const json& s) {
  auto q = [&](const char* key) {
    const auto& x = R.at(s, key, "spread");
    const auto path = fmt::format("spread.{}", key);
    Quantiles out{R.time(x, "p10", path), R.time(x, "p50", path), R.time(x, "p90", path)};
    if (!(out.p10 <= out.p50 && out.p50 <= out.p90)) R.fail(path, "expected p10 <= p50 <= p90");
    return out;
  };
  RecordSpread sp;
  sp.time_to_target_s = q("time_to_target_s");
  sp.gpu_hours = q("gpu_hours");
  sp.samples = static_cast<int>(R.time(s, "samples", "spread"));
  sp.reached = static_cast<int>(R.time(s, "reached", "spread"));
  if (auto it = s.find("seed"); it != s.end() && it->is_number_unsigned()) sp.seed = *it;
  return sp;
}

// An object of key: text (provenance, log_keys), where the record has one.
std::map<std::string, std::string> text_map(const Reader& R, const json& j, const std::string& key, const char* not_object,
                                            const char* not_text) {
  std::map<std::string, std::string> out;
  const auto it = j.find(key);
  if (it == j.end()) return out;
  if (!it->is_object()) R.fail(key, not_object);
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) R.fail(key + "." + k, not_text);
    out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace

Record record_from_json(const std::string& text, const std::string& file) {
  const json j = parse(text, file);
  Reader R{file};
  Record r;
  r.schema = R.str(j, "schema", "");
  if (r.schema != "mrplan.record/1" && r.schema != Record::current_schema)
    R.fail("schema", fmt::format("expected '{}' (or 'mrplan.record/1'), got '{}'", Record::current_schema, r.schema));
  const bool schema1 = r.schema == "mrplan.record/1";
  r.schema = Record::current_schema;  // read into today's form, written as such
  const auto source = R.str(j, "source", "");
  if (source != "predicted" && source != "measured") R.fail("source", "expected 'predicted' or 'measured'");
  r.source = source == "measured" ? Source::measured : Source::predicted;
  r.plan = R.str(j, "plan", "");
  r.workload = R.str(j, "workload", "");
  r.machine = R.str(j, "machine", "");
  const auto method = R.str(j, "method", "");
  const auto m = method_from_string(method);
  if (!m) R.fail("method", fmt::format("'{}': expected {}", method, method_names()));
  r.method = *m;
  read_target(R, R.at(j, "target", ""), r);
  const auto& stages = R.at(j, "stages", "");
  if (!stages.is_array()) R.fail("stages", "expected a list");
  for (size_t i = 0; i < stages.size(); ++i) r.stages.push_back(read_stage(R, stages[i], fmt::format("stages[{}]", i), schema1));
  r.totals = read_totals(R, R.at(j, "totals", ""));
  if (auto it = j.find("warnings"); it != j.end() && it->is_array())
    for (const auto& w : *it) r.warnings.push_back(w.get<std::string>());
  if (auto it = j.find("plan_spec"); it != j.end() && it->is_string()) r.plan_spec = *it;
  if (j.contains("spread")) r.spread = read_spread(R, R.at(j, "spread", ""));
  r.device_matmul_flops_per_s = R.optnum(j, "device_matmul_flops_per_s", "");
  if (r.device_matmul_flops_per_s && !(*r.device_matmul_flops_per_s > 0))
    R.fail("device_matmul_flops_per_s", "expected a rate > 0");
  r.staging_s = R.optnum(j, "staging_s", "");
  if (r.staging_s && !(*r.staging_s >= 0)) R.fail("staging_s", "expected a time >= 0");
  r.provenance = text_map(R, j, "provenance", "expected an object of key: text", "expected text");
  r.log_keys = text_map(R, j, "log_keys", "expected an object of key: JSON text", "expected the value's JSON text as a string");
  return r;
}

Record load_record_file(const std::string& path) {
  return record_from_json(read_text_file(path, "record file"), path);
}

}  // namespace mrplan
