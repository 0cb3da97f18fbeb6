#include "calibrate/mllog_ingest.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <span>

#include "calibrate/mllog_events.hpp"
#include "model/errors.hpp"
#include "model/mllog_keys.hpp"
#include "model/method_table.hpp"
#include "model/text_file.hpp"
#include "model/time_to_target.hpp"
#include "model/method_rules.hpp"
#include "model/plan_yaml.hpp"
#include "sim/builtin_plans.hpp"

namespace mrplan {

namespace {

// MLPerf HPC training rules, benchmarks table: each benchmark's quality metric and its direction
// (the target is the built-in MLPerf plan's, one place).
struct BenchmarkFacts {
  const char* benchmark;
  const char* plan_family;  // mrplan's built-in `FAMILY-mlperf` plan; empty: no workload for it
  const char* metric_key;
  bool maximize;
  Precision unlogged_precision;  // a log without precision_mode: its reference code's (CosmoFlow's TensorFlow fp32, DeepCAM's amp)
  std::span<const char* const> recipe_keys;  // the hyper-parameters a submission may set, but for the batch
};
// The hyper-parameters per benchmark that the MLPerf HPC logging package's result summary extracts
// (mlcommons/logging, mlperf_logging/result_summarizer: cosmoflow_ and deepcam_hyperparam_metrics),
// less the global batch (a tuning's slot of its own) and what is not a setting (seed, samples, metrics).
constexpr const char* kCosmoflowRecipe[] = {"opt_name", "opt_base_learning_rate", "opt_learning_rate_warmup_epochs",
                                            "opt_learning_rate_warmup_factor", "opt_learning_rate_decay_boundary_epochs",
                                            "opt_learning_rate_decay_factor", "dropout", "opt_weight_decay"};
constexpr const char* kDeepcamRecipe[] = {"batchnorm_group_size", "opt_name", "opt_lr", "opt_betas", "opt_eps", "scheduler_type",
                                          "scheduler_lr_warmup_steps", "scheduler_lr_warmup_factor", "scheduler_t_max",
                                          "scheduler_eta_min", "opt_bias_correction", "opt_grad_averaging", "opt_max_grad_norm",
                                          "scheduler_milestones", "scheduler_decay_rate", "opt_weight_decay"};
constexpr BenchmarkFacts kBenchmarks[] = {
    {"cosmoflow", "cosmoflow", "eval_error", false, Precision::fp32, kCosmoflowRecipe},
    {"deepcam", "deepcam", "eval_accuracy", true, Precision::amp, kDeepcamRecipe},
    {"oc20", "", "eval_error", false, Precision::fp32, {}},
    {"opencatalyst", "", "eval_error", false, Precision::fp32, {}},
};
const BenchmarkFacts* benchmark_facts(const std::string& name) {
  for (const auto& b : kBenchmarks)
    if (name == b.benchmark) return &b;
  return nullptr;
}

struct EpochMarks {
  std::optional<double> start_ms, stop_ms, eval_start_ms, eval_stop_ms;
  std::map<std::string, double> evals;  // eval_* values logged for this epoch
};
// One model's epochs (mrplan's own logs name stage and model in the metadata; others train one).
struct ModelMarks {
  std::string stage, model;
  std::optional<int> gpus, local_batch, resolution;
  std::optional<int> index;  // the model's place in its stage (concurrent models log in any order)
  std::map<int, EpochMarks> epochs;
  std::optional<int> current;  // the epoch last started: where an eval_* without epoch_num belongs
};

struct LogFacts {
  std::optional<double> run_start, run_stop, staging_start, staging_stop;
  std::string status, benchmark, precision, optimizer, platform;
  std::optional<double> learning_rate;
  std::optional<int64_t> global_batch, nodes, per_node, ranks, accumulation, train_samples, eval_samples;
  int global_batch_line = 0;
  std::optional<int64_t> batchnorm_group;  // the MLPerf HPC DeepCAM reference's batchnorm_group_size
  int batchnorm_group_line = 0;
  std::optional<bool> comm_overlap;        // its disable_comm_overlap, negated
  std::optional<bool> persistent_workers;  // its data_format: hdf5 is a PyTorch DataLoader, dali-* are not
  std::vector<ModelMarks> models;  // in the order they first appear
  std::map<std::string, double> fusion_s;
  std::map<std::string, std::string> log_keys;
  std::map<std::string, nlohmann::json> settings;  // every key's first value, for the recipe
  std::vector<LoggedTime> times;  // every line's, for the run's time (model/time_to_target)
};

// Whether the log's staging copied the dataset: an interval under a second copied none of it (an MLPerf
// HPC node's share is gigabytes; CSCS's v0.7 CosmoFlow logs a 22 ms staging and reads the file system).
bool staged(const LogFacts& f) { return f.staging_start && f.staging_stop && *f.staging_stop - *f.staging_start >= 1000; }

int64_t count_of(const MllogEvent& e, const std::string& file, int64_t least) {
  constexpr double most = 2147483647;  // counts go into ints downstream: never wrapped
  if (!e.value.is_number() || e.value.get<double>() != std::floor(e.value.get<double>()) || e.value.get<double>() < least ||
      e.value.get<double>() > most)
    fail_input(file, fmt::format("line {}", e.line),
               fmt::format("'{}' is {}: expected a whole count from {} to {}", e.key, e.value.dump(), least, most));
  return e.value.get<int64_t>();
}

// metadata.KEY as a string (absent: `fallback`); any other type is refused
std::string meta_text(const MllogEvent& e, const char* key, const std::string& fallback, const std::string& file) {
  const auto it = e.metadata.find(key);
  if (it == e.metadata.end()) return fallback;
  if (!it->is_string()) fail_input(file, fmt::format("line {}", e.line), fmt::format("metadata.{} is {}: expected a string", key, it->dump()));
  return it->get<std::string>();
}

// metadata.KEY as a whole count from `least` (absent: none); any other value is refused
std::optional<int> meta_count(const MllogEvent& e, const char* key, int least, const std::string& file) {
  const auto it = e.metadata.find(key);
  if (it == e.metadata.end()) return std::nullopt;
  if (!it->is_number_integer() || it->get<double>() < least || it->get<double>() > 2147483647)
    fail_input(file, fmt::format("line {}", e.line), fmt::format("metadata.{} is {}: expected a whole count from {}", key, it->dump(), least));
  return it->get<int>();
}

ModelMarks& model_of(LogFacts& f, const MllogEvent& e, const std::string& file) {
  const std::string stage = meta_text(e, "stage", "train", file), name = meta_text(e, "model", stage, file);
  for (auto& m : f.models)
    if (m.stage == stage && m.model == name) return m;
  f.models.push_back({stage, name, {}, {}, {}, {}, {}, {}});
  return f.models.back();
}

// The epoch an event belongs to: its own epoch_num, else the one its model last started.
EpochMarks* epoch_of(LogFacts& f, const MllogEvent& e, const std::string& file) {
  auto& m = model_of(f, e, file);
  if (const auto r = meta_count(e, "resolution", 1, file)) m.resolution = r;
  const auto n = event_epoch(e);
  if (!n && !m.current) return nullptr;
  return &m.epochs[n.value_or(*m.current)];
}

void require_epoch(EpochMarks* ep, const MllogEvent& e, const std::string& file) {
  if (!ep) fail_input(file, fmt::format("line {}", e.line), fmt::format("'{}' comes before any epoch_start and has no metadata.epoch_num", e.key));
}

// The keys a quality is logged under (MLPerf HPC rules): a value there that is no number is an error.
bool quality_key(const std::string& key) { return key == "eval_accuracy" || key == "eval_error" || key == "eval_loss"; }

bool absorb_run(LogFacts& f, const MllogEvent& e, const std::string& file) {
  const auto where = fmt::format("line {}", e.line);
  if (e.key == "run_start") {
    if (f.run_start) fail_input(file, where, "a second run_start: two runs in one file (split the log, one run per file)");
    f.run_start = e.time_ms;
  } else if (e.key == "run_stop") {
    if (!f.run_start) fail_input(file, where, "run_stop comes before run_start");
    if (f.run_stop) fail_input(file, where, "a second run_stop: two runs in one file (split the log, one run per file)");
    if (e.time_ms < *f.run_start) fail_input(file, where, "run_stop's time_ms is earlier than run_start's");
    f.run_stop = e.time_ms, f.status = meta_text(e, "status", "", file);
  } else if (e.key == "staging_start") {
    f.staging_start = e.time_ms;
  } else if (e.key == "staging_stop") {
    if (!f.staging_start || e.time_ms < *f.staging_start) fail_input(file, where, "staging_stop comes before staging_start");
    f.staging_stop = e.time_ms;
  } else {
    return false;
  }
  return true;
}

bool absorb_epoch(LogFacts& f, const MllogEvent& e, const std::string& file) {
  const auto where = fmt::format("line {}", e.line);
  if (e.key == "epoch_start") {
    if (!event_epoch(e)) fail_input(file, where, "'epoch_start' has no metadata.epoch_num");
    auto& m = model_of(f, e, file);
    m.current = *event_epoch(e);
    epoch_of(f, e, file)->start_ms = e.time_ms;
  } else if (e.key == "epoch_stop") {
    auto* ep = epoch_of(f, e, file);
    require_epoch(ep, e, file);
    ep->stop_ms = e.time_ms;
  } else if (e.key == "eval_start" || e.key == "eval_stop") {
    auto* ep = epoch_of(f, e, file);
    require_epoch(ep, e, file);
    (e.key == "eval_start" ? ep->eval_start_ms : ep->eval_stop_ms) = e.time_ms;
  } else if (e.key.rfind("eval_", 0) == 0 && e.key != "eval_samples" && (e.value.is_number() || quality_key(e.key))) {
    auto* ep = epoch_of(f, e, file);
    if (!ep) return false;  // a setting, not a measurement: kept with the unknown keys
    const auto where = fmt::format("line {}", e.line);
    if (!e.value.is_number()) fail_input(file, where, fmt::format("{} is {}: expected a number", e.key, e.value.dump()));
    const double v = e.value.get<double>();
    // an error or a loss below 0, or an accuracy (a fraction, an IoU) outside [0, 1], measured nothing
    if (!std::isfinite(v) || ((e.key == "eval_error" || e.key == "eval_loss") && v < 0))
      fail_input(file, where, fmt::format("{} is {}: expected a finite value of at least 0", e.key, v));
    ep->evals[e.key] = v;
  } else {
    return false;
  }
  return true;
}

// A flag as submitters log it: a JSON boolean, or its text.
std::optional<bool> flag_of(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v == "true" || v == "false") return v == "true";
  return std::nullopt;
}

bool absorb_setting(LogFacts& f, const MllogEvent& e, const std::string& file) {
  const auto& k = e.key;
  if (k == "global_batch_size") {
    f.global_batch = count_of(e, file, 1);
    f.global_batch_line = e.line;
  } else if (k == "number_of_nodes") f.nodes = count_of(e, file, 1);
  else if (k == "accelerators_per_node") f.per_node = count_of(e, file, 0);  // 0: a CPU run (the rules allow it)
  else if (k == "number_of_ranks") f.ranks = count_of(e, file, 1);
  else if (k == "gradient_accumulation_frequency") f.accumulation = count_of(e, file, 1);
  else if (k == "train_samples") f.train_samples = count_of(e, file, 1);
  else if (k == "eval_samples") f.eval_samples = count_of(e, file, 0);
  else if (k == "submission_benchmark" && e.value.is_string()) f.benchmark = e.value.get<std::string>();
  else if (k == "submission_platform" && e.value.is_string()) f.platform = e.value.get<std::string>();
  else if (k == "precision_mode" && e.value.is_string()) f.precision = e.value.get<std::string>();
  else if (k == "opt_name" && e.value.is_string()) f.optimizer = e.value.get<std::string>();
  else if (k == "batchnorm_group_size") {
    f.batchnorm_group = count_of(e, file, 1);
    f.batchnorm_group_line = e.line;
  } else if (k == "disable_comm_overlap" && flag_of(e.value)) f.comm_overlap = !*flag_of(e.value);
  else if (k == "data_format" && e.value.is_string() && e.value.get<std::string>() == "hdf5") f.persistent_workers = false;
  else if ((k == "opt_base_learning_rate" || k == "opt_lr") && e.value.is_number()) f.learning_rate = e.value.get<double>();
  else if (k == kModelKey && e.value.is_number()) {  // a model's GPUs and batch, as it starts
    auto& m = model_of(f, e, file);
    m.gpus = static_cast<int>(count_of(e, file, 1));
    if (const auto b = meta_count(e, "local_batch", 1, file)) m.local_batch = b;
    if (const auto r = meta_count(e, "resolution", 1, file)) m.resolution = r;
    if (const auto i = meta_count(e, "model_index", 0, file)) m.index = i;
  } else if (k == kFusionKey && e.value.is_number()) {
    f.fusion_s[meta_text(e, "stage", "", file)] = e.value.get<double>();
  } else {
    return false;
  }
  return true;
}

LogFacts read_facts(const std::vector<MllogEvent>& events, const std::string& file) {
  LogFacts f;
  for (const auto& e : events) {
    f.times.push_back({e.key, e.time_ms});
    // some submitters train on after run_stop: the run, and what is measured of it, ends there
    if (f.run_stop && e.key != "run_stop" && e.key != "run_start") continue;
    f.settings.emplace(e.key, e.value);
    if (absorb_run(f, e, file) || absorb_epoch(f, e, file) || absorb_setting(f, e, file)) continue;
    f.log_keys.emplace(e.key, e.value.dump());  // the first value of a key mrplan does not interpret
  }
  if (!f.run_start) fail_input(file, "run_start", "no run_start event: not an MLPerf result log");
  return f;
}

// The quality metric: the benchmark's own (MLPerf HPC rules), else an error (logs with both carry
// the error beside its negation as eval_accuracy), else an accuracy, else the first eval_* value
// the log reports per epoch.
std::pair<std::string, bool> metric_of(const LogFacts& f) {
  std::map<std::string, int> seen;
  std::string first;
  for (const auto& m : f.models)
    for (const auto& [n, ep] : m.epochs)
      for (const auto& [k, v] : ep.evals) {
        if (first.empty()) first = k;
        ++seen[k];
      }
  if (const auto* b = benchmark_facts(f.benchmark); b && seen.count(b->metric_key)) return {b->metric_key, b->maximize};
  if (seen.count("eval_error")) return {"eval_error", false};
  if (seen.count("eval_accuracy")) return {"eval_accuracy", true};
  return {first, false};
}

// A weak-scaling submission trains many instances at once, each logging its own instance_id; some
// (NVIDIA's v3.0 DeepCAM) log the whole system's nodes and ranks, not the instance's.
int gpus_of(const LogFacts& f, const MllogOptions& o, const std::string& file, std::vector<std::string>& warnings) {
  std::optional<int64_t> g;
  if (f.nodes && f.per_node && *f.per_node > 0) g = *f.nodes * *f.per_node;
  if (g && f.ranks && *f.ranks != *g)
    warnings.push_back(fmt::format("number_of_ranks {} differs from number_of_nodes x accelerators_per_node = {}: using the latter", *f.ranks, *g));
  if (!g) g = f.ranks;
  const bool instance = f.log_keys.count("instance_id") > 0;
  if (g && o.gpus && *o.gpus != *g) {
    if (!instance) fail_input(file, "number_of_nodes", fmt::format("the log ran on {} GPUs, --gpus says {}", *g, *o.gpus));
    warnings.push_back(fmt::format("one instance of a weak-scaling run: {} GPUs from --gpus; the log's {} are the whole system's", *o.gpus, *g));
    return *o.gpus;
  }
  if (!g && !o.gpus && f.per_node && *f.per_node == 0)
    fail_input(file, "accelerators_per_node",
               "0: a CPU-only system, and mrplan models training on GPUs (pass --gpus N to count its ranks as GPUs anyway)");
  if (!g && !o.gpus)
    fail_input(file, "number_of_nodes",
               "the log gives neither number_of_nodes with accelerators_per_node nor number_of_ranks: pass --gpus N");
  const int64_t gpus = g.value_or(o.gpus.value_or(1));
  if (instance && f.global_batch && *f.global_batch < gpus * f.accumulation.value_or(1))
    fail_input(file, fmt::format("line {}", f.global_batch_line),
               fmt::format("global_batch_size {} is less than one sample per GPU of the log's {}: this log is one instance of a "
                           "weak-scaling run (instance_id) whose node count is the whole system's; pass --gpus with the instance's GPUs",
                           *f.global_batch, gpus));
  return static_cast<int>(gpus);
}

ModelRecord model_from_marks(const ModelMarks& m, int gpus_default, const std::string& metric, const std::string& file) {
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
    // the evaluation pass is part of the epoch's wall time, whether the log closes the epoch before or after it
    er.epoch_s = (std::max(*marks.stop_ms, marks.eval_stop_ms.value_or(0)) - *marks.start_ms) / 1000.0;
    if (marks.eval_start_ms && marks.eval_stop_ms) {
      if (*marks.eval_stop_ms < *marks.eval_start_ms) fail_input(file, fmt::format("epoch {}", e), "eval_stop comes before eval_start");
      er.eval_s = (*marks.eval_stop_ms - *marks.eval_start_ms) / 1000.0;
    }
    if (auto it = marks.evals.find(metric); it != marks.evals.end()) er.metric = it->second;
    mr.per_epoch.push_back(er);
    mr.time_s += er.epoch_s;
    mr.eval_s += er.eval_s;
  }
  mr.epochs = static_cast<double>(mr.per_epoch.size());
  return mr;
}

// One logged value as recipe text: numbers to 4 significant digits (a submission logs 0.0055 as the
// float32 0.005499999970197678 in one log and as 0.0055 in the next), text lower-case.
std::string recipe_value(const nlohmann::json& v) {
  if (v.is_number()) return fmt::format("{:.4g}", v.get<double>());
  if (v.is_string()) return lower_case(v.get<std::string>());
  if (v.is_array()) {
    std::vector<std::string> parts;
    for (const auto& x : v) parts.push_back(recipe_value(x));
    return fmt::format("[{}]", fmt::join(parts, ","));
  }
  return v.dump();
}

// The run's recipe: its benchmark's hyper-parameters as logged, "key=value" in the rules' order;
// empty where the log states none of them.
std::string recipe_text(const LogFacts& f, const BenchmarkFacts& b) {
  std::vector<std::string> parts;
  for (const char* k : b.recipe_keys)
    if (auto it = f.settings.find(k); it != f.settings.end() && !it->second.is_null()) parts.push_back(fmt::format("{}={}", k, recipe_value(it->second)));
  return fmt::format("{}", fmt::join(parts, " "));
}

// The plan it ran, as mrplan's built-in MLPerf plan with the log's GPUs, batch, dataset,
// precision and optimizer: what validate and calibrate records re-predict.
void add_plan_spec(Record& r, const LogFacts& f, const BenchmarkFacts& b, const std::string& file, const MllogOptions& o) {
  const int gpus = r.stages[0].gpus;
  Plan p = builtin_plan(std::string(b.plan_family) + "-mlperf@" + r.machine, gpus);
  // what the log does not say is not the built-in plan's (LBNL's code: Horovod, amp, DeepCAM's wide
  // buckets) but DDP's defaults, 25 MB buckets overlapped, and the reference's precision (warned below)
  const Plan defaults;
  p.framework = defaults.framework, p.overlap_comm = defaults.overlap_comm, p.bucket_bytes = defaults.bucket_bytes;
  p.precision = b.unlogged_precision;
  p.name = std::filesystem::path(file).stem().string();
  p.source_file = file;
  auto& m = p.stages[0].models[0];
  m.gpus = gpus;
  m.local_batch = r.stages[0].models[0].local_batch;
  // the benchmark's target, unless mrplan wrote the log for a plan of its own
  if (r.target_metric == b.metric_key && !f.log_keys.count(kMethodKey)) r.target_value = p.target_value;
  if (f.train_samples) p.train_samples = *f.train_samples;
  if (f.eval_samples) p.validation_samples = *f.eval_samples;
  if (f.precision == "amp" || f.precision == "fp16" || f.precision == "bf16") p.precision = Precision::amp;
  else if (f.precision == "fp32") p.precision = Precision::fp32;
  else if (f.precision.empty() && o.precision) p.precision = *o.precision;
  else if (f.precision.empty()) r.warnings.push_back(fmt::format("the log does not say its precision: the plan assumes {}", to_string(p.precision)));
  else r.warnings.push_back(fmt::format("precision_mode '{}' is not fp32 or amp: the plan keeps {}", f.precision, to_string(p.precision)));
  if (const auto o = optimizer_from_string(f.optimizer)) m.optimizer = *o;
  if (f.learning_rate) m.learning_rate = *f.learning_rate;
  m.recipe = recipe_text(f, b);
  r.stages[0].models[0].recipe = m.recipe;
  if (f.comm_overlap) p.overlap_comm = *f.comm_overlap;
  if (o.framework) p.framework = *o.framework;
  p.software = o.software;
  if (f.persistent_workers) p.persistent_workers = *f.persistent_workers;
  if (f.batchnorm_group) {
    if (*f.batchnorm_group > gpus)
      fail_input(file, fmt::format("line {}", f.batchnorm_group_line),
                 fmt::format("batchnorm_group_size {} is more ranks than the run's {} GPUs", *f.batchnorm_group, gpus));
    p.batchnorm_group = static_cast<int>(*f.batchnorm_group);
  }
  // DeepCAM's implementations widen DDP's buckets from 25 to 220 MB where batch norm is pooled or
  // the allreduce waits for backward (mlcommons/hpc deepcam train.py; NVIDIA's, with the latter)
  if (p.batchnorm_group > 1 || f.comm_overlap == false) p.bucket_bytes = 220 * 1024.0 * 1024.0;
  // MLPerf HPC submissions stage into node memory, or node-local NVMe where the share does not fit;
  // NVIDIA's DeepCAM with synchronous_staging false copies beside the first epoch and logs no staging
  const auto sync = f.settings.find("synchronous_staging");
  const bool async = sync != f.settings.end() && sync->second.is_boolean() && !sync->second.get<bool>();
  if (staged(f) || async) p.staging = Staging::host_memory;
  p.staging_async = async && !staged(f);
  if (const auto o = f.settings.find("data_oversampling_factor");
      p.staging != Staging::none && o != f.settings.end() && o->second.is_number_integer() && o->second.get<int>() > 1)
    p.staging_oversampling = o->second.get<int>();
  r.plan_spec = plan_to_yaml(p);
}

// The log's stages, each of its models in the plan's order where the log says it (log order
// otherwise); `concurrent`: whether a stage trains several models at once. A log without one whole
// epoch is refused.
std::vector<StageRecord> stages_of(const LogFacts& f, int gpus, const std::string& metric, const std::string& file, bool& concurrent) {
  std::vector<std::vector<const ModelMarks*>> stages;  // models grouped by stage, in log order
  for (const auto& m : f.models) {
    if (stages.empty() || stages.back().front()->stage != m.stage) stages.emplace_back();
    stages.back().push_back(&m);
  }
  for (auto& ms : stages)
    std::stable_sort(ms.begin(), ms.end(), [](const ModelMarks* a, const ModelMarks* b) { return a->index.value_or(0) < b->index.value_or(0); });
  std::vector<StageRecord> out;
  bool timed = false;
  for (const auto& ms : stages) {
    StageRecord s;
    s.name = ms.front()->stage;
    if (auto it = f.fusion_s.find(s.name); it != f.fusion_s.end()) s.fusion_s = it->second;
    concurrent = concurrent || ms.size() > 1;
    for (const auto* m : ms) {  // a model whose GPUs the log does not say: an even share of the job's
      s.models.push_back(model_from_marks(*m, gpus / static_cast<int>(ms.size()), metric, file));
      s.models.back().stop_reason = &ms != &stages.back() ? StopReason::logged
                                    : f.status == "success"     ? StopReason::run_success
                                    : f.status == "aborted"     ? StopReason::run_aborted
                                                                : StopReason::unknown;
      timed = timed || !s.models.back().per_epoch.empty();
    }
    finish_stage(s);
    out.push_back(std::move(s));
  }
  if (!timed && f.log_keys.count("block_start"))  // MLPerf Training's blocks of epochs, which no HPC benchmark logs
    fail_input(file, "epoch_start",
               "the log marks blocks (block_start/block_stop), not epochs: mrplan reads MLPerf HPC's epoch_start/epoch_stop");
  if (!timed) fail_input(file, "epoch_start", "the log has no whole epoch (an epoch_start with its epoch_stop): nothing to measure");
  return out;
}

// A one-stage run's global batch, and its models' local batch where the log does not say it.
void take_global_batch(Record& r, const LogFacts& f, int gpus) {
  if (r.stages.size() != 1 || !f.global_batch) return;
  auto& s = r.stages[0];
  s.global_batch = static_cast<int>(*f.global_batch);
  const int64_t per_step = static_cast<int64_t>(gpus) * f.accumulation.value_or(1);
  if (*f.global_batch % per_step != 0)
    r.warnings.push_back(fmt::format("global batch {} is not a multiple of {} GPUs x {} accumulation steps: local batch rounded down",
                                     *f.global_batch, gpus, f.accumulation.value_or(1)));
  for (auto& m : s.models)
    if (m.local_batch <= 1) m.local_batch = static_cast<int>(std::max<int64_t>(1, *f.global_batch / per_step));
}

// The log's own run time, from run_start to run_stop, which includes what lies between its epochs,
// and its staging.
void take_run_time(Record& r, const LogFacts& f, int gpus) {
  if (staged(f)) r.staging_s = (*f.staging_stop - *f.staging_start) / 1000.0;
  else if (f.staging_start && f.staging_stop)
    r.warnings.push_back(fmt::format("staging took {:.3f} s: it copied nothing the epochs read (the plan stages nothing)",
                                     (*f.staging_stop - *f.staging_start) / 1000.0));
  if (!f.run_stop) return r.warnings.push_back("no run_stop event: the run did not finish");
  r.totals.time_to_target_s = trained_time_s(f.times);
  // mrplan's time to target counts the copy, as its plans price it; MLPerf HPC v3.0 logs stage
  // before run_start, outside the timed region (v1.0 and v2.0 stage inside it)
  if (r.staging_s && f.run_start && *f.staging_stop <= *f.run_start) {
    r.totals.time_to_target_s += *r.staging_s;
    r.warnings.push_back(
        fmt::format("staging ({:.1f} s) is logged before run_start, outside MLPerf's timed region: added to the time to "
                    "target, which counts it as the plan prices it",
                    *r.staging_s));
  }
  r.totals.gpu_hours = r.totals.time_to_target_s * gpus / 3600.0;
}

}  // namespace

Record record_from_mllog(const std::string& text, const std::string& file, const MllogOptions& options) {
  const LogFacts f = read_facts(parse_mllog_events(text, file), file);
  Record r;
  r.source = Source::measured;
  r.plan = file;
  r.machine = !options.machine.empty() ? options.machine : !f.platform.empty() ? f.platform : "mllog";
  const auto* bench = benchmark_facts(f.benchmark);
  r.workload = bench && *bench->plan_family ? (std::string(bench->plan_family) == "cosmoflow" ? "cosmoflow-mlperf" : bench->plan_family)
                                            : f.benchmark;
  std::tie(r.target_metric, r.target_maximize) = metric_of(f);
  r.log_keys = f.log_keys;
  const int gpus = gpus_of(f, options, file, r.warnings);
  bool concurrent = false;
  r.stages = stages_of(f, gpus, r.target_metric, file, concurrent);
  r.method = method_of_shape(concurrent, r.stages.size());
  if (auto it = f.log_keys.find(kMethodKey); it != f.log_keys.end())  // mrplan's own log says it (transfer learning has the baseline's shape)
    if (const auto v = nlohmann::json::parse(it->second, nullptr, false); v.is_string())
      if (const auto named = method_from_string(v.get<std::string>())) r.method = *named;
  take_global_batch(r, f, gpus);
  r.totals = run_totals(r.stages, f.status == "success");
  take_run_time(r, f, gpus);
  if (bench && *bench->plan_family && r.stages.size() == 1 && r.stages[0].models.size() == 1) add_plan_spec(r, f, *bench, file, options);
  else if (!f.benchmark.empty() && (!bench || !*bench->plan_family))
    r.warnings.push_back(fmt::format("mrplan has no workload for benchmark '{}': the record carries no plan to re-predict", f.benchmark));
  return r;
}

Record load_mllog_file(const std::string& path, const MllogOptions& options) {
  return record_from_mllog(read_text_file(path, "the log file"), path, options);
}

}  // namespace mrplan
