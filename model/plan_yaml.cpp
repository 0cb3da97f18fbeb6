#include "model/plan_yaml.hpp"
#include "model/yaml_number.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <fmt/format.h>

#include "model/errors.hpp"
#include "model/method_rules.hpp"
#include "model/method_table.hpp"
#include "model/yaml_fields.hpp"

namespace mrplan {

const char* to_string(StopRule::Kind k) {
  switch (k) {
    case StopRule::Kind::epochs: return "epochs";
    case StopRule::Kind::iterations: return "iterations";
    case StopRule::Kind::switch_rule: return "switch_rule";
    case StopRule::Kind::target: return "target";
    case StopRule::Kind::plateau: return "plateau";
  }
  return "?";
}

const char* to_string(Method m) { return method_row(m).name; }

std::optional<Method> method_from_string(const std::string& name) {
  for (const auto& r : method_table())
    if (name == r.name) return r.method;
  return std::nullopt;
}

const char* to_string(Precision p) { return p == Precision::amp ? "amp" : "fp32"; }
const char* to_string(StepExecution s) { return s == StepExecution::captured ? "captured" : "eager"; }

const char* to_string(Staging s) {
  switch (s) {
    case Staging::none: return "none";
    case Staging::nvme: return "nvme";
    case Staging::host_memory: return "host_memory";
    case Staging::device_memory: return "device_memory";
    case Staging::nearest: return "nearest";
  }
  return "?";
}

const char* to_string(Scaling s) { return s == Scaling::weak ? "weak" : "strong"; }

const char* to_string(CommFramework f) { return f == CommFramework::horovod ? "horovod" : "ddp"; }

std::optional<CommFramework> comm_framework_from_string(const std::string& name) {
  for (auto f : {CommFramework::ddp, CommFramework::horovod})
    if (name == to_string(f)) return f;
  return std::nullopt;
}

std::optional<Scaling> scaling_from_string(const std::string& name) {
  for (auto s : {Scaling::strong, Scaling::weak})
    if (name == to_string(s)) return s;
  return std::nullopt;
}

std::optional<Staging> staging_from_string(const std::string& name) {
  for (auto s : {Staging::none, Staging::nvme, Staging::host_memory, Staging::device_memory, Staging::nearest})
    if (name == to_string(s)) return s;
  return std::nullopt;
}

int Stage::gpus() const {
  int g = 0;
  for (const auto& m : models) g += m.gpus;
  return g;
}
int Stage::global_batch() const {
  int b = 0;
  for (const auto& m : models) b += m.gpus * m.local_batch;
  return b;
}
const ModelRun* Stage::find(const std::string& name) const {
  for (const auto& m : models)
    if (m.name == name) return &m;
  return nullptr;
}

namespace {

StopRule read_stop(const YamlFields& st) {
  st.only({"epochs", "iterations", "switch_rule", "target", "plateau", "max_epochs", "eval_iterations"});
  const int kinds = st.has("epochs") + st.has("iterations") + st.has("switch_rule") + st.has("target") + st.has("plateau");
  if (kinds != 1)
    fail_input(st.file(), st.key_path("<kind>"),
               "give exactly one of epochs: N, iterations: N, switch_rule: {...}, target: true, plateau: true");
  StopRule s;
  s.max_epochs = st.int32("max_epochs", 1000);
  if (s.max_epochs < 1) fail_input(st.file(), st.key_path("max_epochs"), "must be >= 1");
  s.eval_iterations = st.int32("eval_iterations", 0);
  if (s.eval_iterations < 0) fail_input(st.file(), st.key_path("eval_iterations"), "must be >= 0");
  if (st.has("epochs")) {
    s.kind = StopRule::Kind::epochs;
    s.epochs = st.positive("epochs");
  } else if (st.has("iterations")) {
    s.kind = StopRule::Kind::iterations;
    s.iterations = st.integer("iterations");
    if (s.iterations < 1) fail_input(st.file(), st.key_path("iterations"), "must be >= 1");
  } else if (st.has("switch_rule")) {
    s.kind = StopRule::Kind::switch_rule;
    auto r = st.child("switch_rule");
    r.only({"patience", "epsilon", "window_iterations"});
    s.rule.patience = r.int32("patience");
    if (s.rule.patience < 1) fail_input(st.file(), r.key_path("patience"), "must be >= 1");
    s.rule.epsilon = r.positive("epsilon");
    s.window_iterations = r.int32("window_iterations", 0);
    if (s.window_iterations < 0) fail_input(st.file(), r.key_path("window_iterations"), "must be >= 0");
  } else if (st.has("target")) {
    s.kind = StopRule::Kind::target;
    if (!st.boolean("target", true)) fail_input(st.file(), st.key_path("target"), "write target: true or choose another stop");
  } else {
    s.kind = StopRule::Kind::plateau;
  }
  return s;
}

// The training settings a stage may give once for all its models.
struct TrainingDefaults {
  Optimizer optimizer = Optimizer::adam;
  double learning_rate = 1e-3;
  int warmup_epochs = 0;
  std::vector<std::pair<int, double>> lr_decay;
  std::string recipe;
};

TrainingDefaults read_training(const YamlFields& f, const TrainingDefaults& d) {
  TrainingDefaults t;
  t.optimizer = parse_optimizer(f.text("optimizer", to_string(d.optimizer)), f.file(), f.key_path("optimizer"));
  t.learning_rate = f.positive("learning_rate", d.learning_rate);
  t.warmup_epochs = f.int32("warmup_epochs", d.warmup_epochs);
  t.recipe = f.text("recipe", d.recipe);
  if (t.warmup_epochs < 0) fail_input(f.file(), f.key_path("warmup_epochs"), "must be >= 0");
  t.lr_decay = d.lr_decay;
  if (f.has("lr_decay")) {
    t.lr_decay.clear();
    for (const auto& step : f.list("lr_decay")) {
      step.only({"epoch", "factor"});
      t.lr_decay.emplace_back(step.int32("epoch"), step.positive("factor"));
    }
  }
  return t;
}

// The validation metrics the execution backend reports (exec/objective) and MLPerf HPC's quality
// keys (its rules: CosmoFlow's eval_error falls, DeepCAM's eval_accuracy rises), with their direction.
struct KnownMetric {
  const char* name;
  bool maximize;
};
constexpr KnownMetric kKnownMetrics[] = {{"val_mse", false},   {"val_mae", false},   {"val_loss", false},     {"val_iou", true},
                                         {"eval_error", false}, {"eval_loss", false}, {"eval_accuracy", true}};

std::optional<KnownMetric> known_metric(const std::string& name) {
  for (const auto& m : kKnownMetrics)
    if (name == m.name) return m;
  return std::nullopt;
}

std::string known_metric_list() {
  std::string out;
  for (const auto& m : kKnownMetrics) out += (out.empty() ? "" : ", ") + std::string(m.name);
  return out;
}

// The keys of one model, shared by the one-model shorthand (on the stage) and the models: list.
ModelRun read_model(const YamlFields& f, const TrainingDefaults& defaults) {
  ModelRun m;
  m.resolution = f.int32("resolution", 1);
  if (m.resolution < 1) fail_input(f.file(), f.key_path("resolution"), "coarsening factor must be >= 1");
  m.gpus = f.int32("gpus");
  if (m.gpus < 1) fail_input(f.file(), f.key_path("gpus"), fmt::format("must be >= 1, got {}", m.gpus));
  if (f.has("local_batch") == f.has("global_batch"))
    fail_input(f.file(), f.key_path("local_batch"), "give exactly one of local_batch or global_batch");
  if (f.has("local_batch")) {
    m.local_batch = f.int32("local_batch");
    if (m.local_batch < 1) fail_input(f.file(), f.key_path("local_batch"), "must be >= 1");
  } else {
    const auto gb = f.integer("global_batch");
    if (gb < m.gpus)
      fail_input(f.file(), f.key_path("global_batch"),
                 fmt::format("global batch {} is smaller than the {} GPUs: every GPU needs at least one sample", gb, m.gpus));
    if (gb % m.gpus != 0)
      fail_input(f.file(), f.key_path("global_batch"), fmt::format("global batch {} is not a multiple of {} GPUs", gb, m.gpus));
    m.local_batch = static_cast<int>(gb / m.gpus);
  }
  // the global batch is an int everywhere after this: a product past it would wrap negative (issue 44)
  if (const int64_t global = int64_t{m.gpus} * m.local_batch; global > std::numeric_limits<int>::max())
    fail_input(f.file(), f.key_path("local_batch"), fmt::format("{} GPUs x local batch {} = {} samples a step is out of range (at most {})",
                                                                m.gpus, m.local_batch, global, std::numeric_limits<int>::max()));
  const auto t = read_training(f, defaults);
  m.optimizer = t.optimizer, m.learning_rate = t.learning_rate, m.warmup_epochs = t.warmup_epochs, m.lr_decay = t.lr_decay;
  m.recipe = t.recipe;
  m.stop = read_stop(f.child("stop"));
  return m;
}

Handoff read_handoff(const YamlFields& f) {
  Handoff h;
  if (!f.has("handoff")) return h;
  const auto& n = f.node()["handoff"];
  if (n.IsScalar()) {
    if (n.as<std::string>() != "transfer")
      fail_input(f.file(), f.key_path("handoff"), fmt::format("'{}': expected transfer or {{fuse: {{bottom_from, top_from}}}}", n.as<std::string>()));
    return h;
  }
  auto hf = f.child("handoff");
  hf.only({"fuse"});
  auto fu = hf.child("fuse");
  fu.only({"bottom_from", "top_from", "split_after"});
  h.kind = Handoff::Kind::fuse;
  h.bottom_from = fu.text("bottom_from");
  h.top_from = fu.text("top_from");
  h.split_after = fu.text("split_after", "");
  return h;
}

Pretrained read_pretrained(const YamlFields& stage) {
  auto f = stage.child("pretrained");
  f.only({"checkpoint", "freeze_through", "freeze_epochs"});
  Pretrained p;
  p.checkpoint = f.text("checkpoint", "");
  p.freeze_through = f.text("freeze_through", "");
  p.freeze_epochs = f.int32("freeze_epochs", 0);
  if (p.freeze_epochs < 0) fail_input(f.file(), f.key_path("freeze_epochs"), "must be >= 0 (0: nothing frozen)");
  if (p.freeze_epochs > 0 && p.freeze_through.empty())
    fail_input(f.file(), f.key_path("freeze_through"), "freeze_epochs without freeze_through: name the last op of the frozen bottom layers");
  if (p.freeze_epochs == 0 && !p.freeze_through.empty())
    fail_input(f.file(), f.key_path("freeze_epochs"), fmt::format("freeze_through: {} without freeze_epochs: say for how many epochs", p.freeze_through));
  return p;
}

Scaling read_scaling(const YamlFields& f, const std::string& name) {
  const auto s = scaling_from_string(name);
  if (!s) fail_input(f.file(), f.key_path("scaling"), fmt::format("unknown scaling '{}' (expected strong: keep the global batch, or weak: keep the local batch)", name));
  return *s;
}

Stage read_stage(const YamlFields& f, size_t index) {
  Stage s;
  s.name = f.text("name", fmt::format("stage{}", index + 1));
  if (f.has("models")) {
    f.only({"name", "gpus", "models", "handoff", "optimizer", "learning_rate", "warmup_epochs", "lr_decay", "recipe", "scaling"});
    const auto defaults = read_training(f, {});
    const auto list = f.list("models");
    if (list.empty()) fail_input(f.file(), f.key_path("models"), "a stage needs at least one model");
    for (size_t j = 0; j < list.size(); ++j) {
      list[j].only({"name", "resolution", "gpus", "local_batch", "global_batch", "optimizer", "learning_rate", "warmup_epochs",
                    "lr_decay", "recipe", "init", "stop"});
      ModelRun m = read_model(list[j], defaults);
      m.name = list[j].text("name", fmt::format("model{}", j + 1));
      const auto init = list[j].text("init", "previous");
      if (init != "previous" && init != "scratch")
        fail_input(f.file(), list[j].key_path("init"), fmt::format("'{}': expected previous or scratch", init));
      m.from_previous = init == "previous";
      if (s.find(m.name)) fail_input(f.file(), list[j].key_path("name"), fmt::format("a second model named '{}' in this stage", m.name));
      s.models.push_back(std::move(m));
    }
    if (f.has("gpus") && f.integer("gpus") != s.gpus()) {
      std::string parts;
      for (const auto& m : s.models) parts += fmt::format("{}{} ({})", parts.empty() ? "" : " + ", m.gpus, m.name);
      fail_input(f.file(), f.key_path("gpus"), fmt::format("the stage has {} GPUs but its models are given {} = {}: the split does not add up",
                                                           f.integer("gpus"), parts, s.gpus()));
    }
  } else {
    f.only({"name", "resolution", "gpus", "local_batch", "global_batch", "optimizer", "learning_rate", "warmup_epochs",
            "lr_decay", "recipe", "transfer", "pretrained", "stop", "handoff", "scaling"});
    ModelRun m = read_model(f, {});
    m.name = s.name;
    m.from_previous = f.boolean("transfer", true);
    if (f.has("pretrained")) m.pretrained = read_pretrained(f);
    s.models.push_back(std::move(m));
  }
  s.handoff = read_handoff(f);
  if (f.has("scaling")) s.scaling = read_scaling(f, f.text("scaling"));
  return s;
}

// target: the metric, its value and goal (a known metric's goal is its own), precise batch norm.
void read_target(YamlFields t, Plan& p) {
  const std::string& file = p.source_file;
  t.only({"metric", "value", "goal", "precise_bn_batches"});
  p.target_metric = t.text("metric");
  p.target_value = t.number("value");
  const auto known = known_metric(p.target_metric);
  if (!known && p.target_metric.rfind("eval_", 0) != 0)
    fail_input(file, "target.metric",
               fmt::format("'{}' is no metric mrplan knows: expected {} (or an MLPerf log's eval_* key)", printable(p.target_metric),
                           known_metric_list()));
  const auto goal = t.text("goal", known && known->maximize ? "maximize" : "minimize");
  if (goal != "minimize" && goal != "maximize") fail_input(file, "target.goal", "expected minimize or maximize");
  p.maximize = goal == "maximize";
  if (known && known->maximize != p.maximize)
    fail_input(file, "target.goal",
               fmt::format("{}, but {} is {}: its goal is {}", goal, p.target_metric, known->maximize ? "a score" : "an error",
                           known->maximize ? "maximize" : "minimize"));
  if (!p.maximize && p.target_value < 0)  // errors and losses are >= 0
    fail_input(file, "target.value", fmt::format("{} is below 0: a minimised {} can never reach it", p.target_value, p.target_metric));
  p.precise_bn_batches = t.int32("precise_bn_batches", 0);
  if (p.precise_bn_batches < 0) fail_input(file, "target.precise_bn_batches", "must be >= 0 (0: the running averages)");
}

// comm: the gradient buckets and overlap, who pools batch-norm statistics, the allreduce library.
void read_comm(YamlFields c, Plan& p) {
  const std::string& file = p.source_file;
  c.only({"bucket_mb", "overlap", "batchnorm_group", "batchnorm_samples", "framework"});
  p.bucket_bytes = c.positive("bucket_mb", 25.0) * 1e6;
  p.overlap_comm = c.boolean("overlap", true);
  p.batchnorm_group = c.int32("batchnorm_group", 1);
  if (p.batchnorm_group < 1) fail_input(file, c.key_path("batchnorm_group"), "must be >= 1 (1: each rank its own batch-norm statistics)");
  p.batchnorm_samples = c.int32("batchnorm_samples", 0);
  if (p.batchnorm_samples < 0)
    fail_input(file, c.key_path("batchnorm_samples"), "must be >= 0 (0: batchnorm_group alone sets who pools batch-norm statistics)");
  const auto framework = c.text("framework", "ddp");
  if (!comm_framework_from_string(framework))
    fail_input(file, c.key_path("framework"), fmt::format("unknown framework '{}' (expected ddp or horovod)", framework));
  p.framework = *comm_framework_from_string(framework);
}

// io: staging (where, beside the first epoch or before), the loader's copy and workers, the codec and where it decodes.
void read_io(YamlFields io, Plan& p) {
  const std::string& file = p.source_file;
  io.only({"staging", "staging_async", "staging_oversampling", "staged_to_nvme", "filesystem_nodes", "h2d_overlapped", "persistent_workers",
           "codec", "decoder"});
  const auto staging = io.text("staging", io.boolean("staged_to_nvme", false) ? "nvme" : "none");  // staged_to_nvme: before staging
  if (!staging_from_string(staging))
    fail_input(file, io.key_path("staging"),
               fmt::format("unknown staging '{}' (expected none, nvme, host_memory, device_memory or nearest)", staging));
  p.staging = *staging_from_string(staging);
  p.staging_async = io.boolean("staging_async", false);
  if (p.staging_async && p.staging == Staging::none)
    fail_input(file, io.key_path("staging_async"),
               "true needs a tier to stage to: set staging (nvme, host_memory, device_memory or nearest)");
  p.staging_oversampling = io.int32("staging_oversampling", 1);
  if (p.staging_oversampling < 1)
    fail_input(file, io.key_path("staging_oversampling"),
               fmt::format("must be >= 1 (the shares a node stages), got {}", p.staging_oversampling));
  p.filesystem_nodes = io.int32("filesystem_nodes", 0);
  if (p.filesystem_nodes < 0)
    fail_input(file, io.key_path("filesystem_nodes"),
               fmt::format("must be >= 0 (the nodes reading the file system at once, this job's among them; 0: its own alone), got {}",
                           p.filesystem_nodes));
  p.h2d_overlapped = io.boolean("h2d_overlapped", true);
  p.persistent_workers = io.boolean("persistent_workers", true);
  p.codec = codec_from_name(io.text("codec", "raw"), fmt::format("{}: {}", file, io.key_path("codec")));
  p.codec_named = io.has("codec");
  p.decoder = decoder_place_from_name(io.text("decoder", "host"), fmt::format("{}: {}", file, io.key_path("decoder")));
  check_data_path(p, file);
}

Plan read_plan(const YAML::Node& root, const std::string& file) {
  YamlFields f(root, file, "");
  f.only({"name", "workload", "workload_options", "machine", "scaling", "method", "precision", "steps", "software", "dataset", "target", "comm", "io",
          "stages", "data", "checkpoint_every"});
  Plan p;
  p.source_file = file;
  p.name = f.text("name", file);
  p.workload = f.text("workload");
  if (f.has("workload_options")) {
    auto w = f.child("workload_options");
    w.only({"size", "width"});
    p.workload_options.size = w.int32("size", 0);
    if (p.workload_options.size < 0) fail_input(file, "workload_options.size", "must be >= 1 (or left out: the workload's own)");
    p.workload_options.width = w.positive("width", 1.0);
  }
  p.machine = f.text("machine");
  p.scaling = read_scaling(f, f.text("scaling", "strong"));
  const auto method = f.text("method", "baseline");
  const auto m = method_from_string(method);
  if (!m) fail_input(file, "method", fmt::format("unknown method '{}' (expected {})", method, method_names()));
  p.method = *m;
  const auto precision = f.text("precision", "fp32");
  if (precision != "fp32" && precision != "amp")
    fail_input(file, "precision", fmt::format("unknown precision '{}' (expected fp32 or amp)", precision));
  p.precision = precision == "amp" ? Precision::amp : Precision::fp32;
  const auto steps = f.text("steps", "eager");
  if (steps != "eager" && steps != "captured")
    fail_input(file, "steps", fmt::format("unknown step execution '{}' (expected eager or captured)", steps));
  p.steps = steps == "captured" ? StepExecution::captured : StepExecution::eager;
  p.software = f.text("software", "");
  auto d = f.child("dataset");
  d.only({"train_samples", "validation_samples"});
  p.train_samples = d.integer("train_samples");
  if (p.train_samples < 1) fail_input(file, "dataset.train_samples", "must be >= 1");
  p.validation_samples = d.integer("validation_samples", 0);
  if (p.validation_samples < 0) fail_input(file, "dataset.validation_samples", "must be >= 0");
  read_target(f.child("target"), p);
  if (f.has("comm")) read_comm(f.child("comm"), p);
  if (f.has("io")) read_io(f.child("io"), p);
  if (f.has("data")) {
    auto d = f.child("data");
    d.only({"dir"});
    p.data_dir = d.text("dir");
  }
  p.checkpoint_every = f.int32("checkpoint_every", 0);
  if (p.checkpoint_every < 0) fail_input(file, "checkpoint_every", "must be >= 0 (0: at stage ends only)");
  auto stages = f.list("stages");
  if (stages.empty()) fail_input(file, "stages", "a plan needs at least one stage");
  for (size_t i = 0; i < stages.size(); ++i) p.stages.push_back(read_stage(stages[i], i));
  check_method_structure(p);
  return p;
}

void emit_stop(YAML::Emitter& e, const StopRule& s) {
  e << YAML::Key << "stop" << YAML::Value << YAML::Flow << YAML::BeginMap;
  switch (s.kind) {
    case StopRule::Kind::epochs: e << YAML::Key << "epochs" << YAML::Value << s.epochs; break;
    case StopRule::Kind::iterations: e << YAML::Key << "iterations" << YAML::Value << s.iterations; break;
    case StopRule::Kind::switch_rule:
      e << YAML::Key << "switch_rule" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "patience"
        << YAML::Value << s.rule.patience << YAML::Key << "epsilon" << YAML::Value << ShortestNumber{s.rule.epsilon};
      if (s.window_iterations > 0) e << YAML::Key << "window_iterations" << YAML::Value << s.window_iterations;
      e << YAML::EndMap;
      break;
    case StopRule::Kind::target: e << YAML::Key << "target" << YAML::Value << true; break;
    case StopRule::Kind::plateau: e << YAML::Key << "plateau" << YAML::Value << true; break;
  }
  if (s.eval_iterations > 0) e << YAML::Key << "eval_iterations" << YAML::Value << s.eval_iterations;
  e << YAML::Key << "max_epochs" << YAML::Value << s.max_epochs << YAML::EndMap;
}

// The keys of one model, in the order read_model reads them.
void emit_model(YAML::Emitter& e, const ModelRun& m) {
  e << YAML::Key << "resolution" << YAML::Value << m.resolution;
  e << YAML::Key << "gpus" << YAML::Value << m.gpus;
  e << YAML::Key << "local_batch" << YAML::Value << m.local_batch;
  e << YAML::Key << "optimizer" << YAML::Value << to_string(m.optimizer);
  e << YAML::Key << "learning_rate" << YAML::Value << ShortestNumber{m.learning_rate};
  if (m.warmup_epochs > 0) e << YAML::Key << "warmup_epochs" << YAML::Value << m.warmup_epochs;
  if (!m.lr_decay.empty()) {
    e << YAML::Key << "lr_decay" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& [ep, fac] : m.lr_decay)
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "epoch" << YAML::Value << ep << YAML::Key << "factor" << YAML::Value << ShortestNumber{fac} << YAML::EndMap;
    e << YAML::EndSeq;
  }
  if (!m.recipe.empty()) e << YAML::Key << "recipe" << YAML::Value << YAML::DoubleQuoted << m.recipe;
}

void emit_stage(YAML::Emitter& e, const Stage& s) {
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << s.name;
  if (s.models.size() == 1 && s.models[0].name == s.name) {  // the one-model shorthand
    const auto& m = s.models[0];
    emit_model(e, m);
    if (!m.from_previous) e << YAML::Key << "transfer" << YAML::Value << false;
    if (m.pretrained) {
      e << YAML::Key << "pretrained" << YAML::Value << YAML::Flow << YAML::BeginMap;
      if (!m.pretrained->checkpoint.empty()) e << YAML::Key << "checkpoint" << YAML::Value << m.pretrained->checkpoint;
      if (m.pretrained->freeze_epochs > 0)
        e << YAML::Key << "freeze_through" << YAML::Value << m.pretrained->freeze_through << YAML::Key << "freeze_epochs" << YAML::Value
          << m.pretrained->freeze_epochs;
      e << YAML::EndMap;
    }
    emit_stop(e, m.stop);
  } else {
    e << YAML::Key << "models" << YAML::Value << YAML::BeginSeq;
    for (const auto& m : s.models) {
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << m.name;
      emit_model(e, m);
      if (!m.from_previous) e << YAML::Key << "init" << YAML::Value << "scratch";
      emit_stop(e, m.stop);
      e << YAML::EndMap;
    }
    e << YAML::EndSeq;
  }
  if (s.handoff.kind == Handoff::Kind::fuse) {
    e << YAML::Key << "handoff" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "fuse" << YAML::Value
      << YAML::Flow << YAML::BeginMap << YAML::Key << "bottom_from" << YAML::Value << s.handoff.bottom_from << YAML::Key
      << "top_from" << YAML::Value << s.handoff.top_from;
    if (!s.handoff.split_after.empty()) e << YAML::Key << "split_after" << YAML::Value << s.handoff.split_after;
    e << YAML::EndMap << YAML::EndMap;
  }
  if (s.scaling) e << YAML::Key << "scaling" << YAML::Value << to_string(*s.scaling);  // written only when set
  e << YAML::EndMap;
}

}  // namespace

Plan plan_from_yaml_text(const std::string& text, const std::string& file) {
  return read_plan(parse_yaml_text(text, file), file);
}

Plan load_plan_file(const std::string& path) { return read_plan(load_yaml_file(path), path); }

std::string plan_to_yaml(const Plan& p) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << p.name;
  e << YAML::Key << "workload" << YAML::Value << p.workload;
  if (p.workload_options.size > 0 || p.workload_options.width != 1.0) {
    e << YAML::Key << "workload_options" << YAML::Value << YAML::Flow << YAML::BeginMap;
    if (p.workload_options.size > 0) e << YAML::Key << "size" << YAML::Value << p.workload_options.size;
    e << YAML::Key << "width" << YAML::Value << ShortestNumber{p.workload_options.width} << YAML::EndMap;
  }
  e << YAML::Key << "machine" << YAML::Value << p.machine;
  if (p.scaling != Scaling::strong)  // written only when set: a strong plan's text (and hash) stays as before
    e << YAML::Key << "scaling" << YAML::Value << to_string(p.scaling);
  e << YAML::Key << "method" << YAML::Value << to_string(p.method);
  e << YAML::Key << "precision" << YAML::Value << to_string(p.precision);
  if (p.steps != StepExecution::eager)  // written only when set: an eager plan's text (and hash) stays as before
    e << YAML::Key << "steps" << YAML::Value << to_string(p.steps);
  if (!p.software.empty()) e << YAML::Key << "software" << YAML::Value << YAML::DoubleQuoted << p.software;
  e << YAML::Key << "dataset" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "train_samples"
    << YAML::Value << p.train_samples << YAML::Key << "validation_samples" << YAML::Value << p.validation_samples
    << YAML::EndMap;
  e << YAML::Key << "target" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "metric" << YAML::Value
    << p.target_metric << YAML::Key << "value" << YAML::Value << ShortestNumber{p.target_value} << YAML::Key << "goal" << YAML::Value
    << (p.maximize ? "maximize" : "minimize");
  if (p.precise_bn_batches > 0) e << YAML::Key << "precise_bn_batches" << YAML::Value << p.precise_bn_batches;
  e << YAML::EndMap;
  e << YAML::Key << "comm" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "bucket_mb" << YAML::Value
    << ShortestNumber{p.bucket_bytes / 1e6} << YAML::Key << "overlap" << YAML::Value << p.overlap_comm;
  if (p.batchnorm_group > 1)  // written only when set: a plan's text (and hash) stays as before
    e << YAML::Key << "batchnorm_group" << YAML::Value << p.batchnorm_group;
  if (p.batchnorm_samples > 0) e << YAML::Key << "batchnorm_samples" << YAML::Value << p.batchnorm_samples;
  if (p.framework != CommFramework::ddp) e << YAML::Key << "framework" << YAML::Value << to_string(p.framework);
  e << YAML::EndMap;
  e << YAML::Key << "io" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "staging"
    << YAML::Value << to_string(p.staging) << YAML::Key << "h2d_overlapped" << YAML::Value << p.h2d_overlapped;
  if (p.staging_async)  // written only when set: a plan's text (and hash) stays as before
    e << YAML::Key << "staging_async" << YAML::Value << true;
  if (p.staging_oversampling > 1) e << YAML::Key << "staging_oversampling" << YAML::Value << p.staging_oversampling;
  if (p.filesystem_nodes > 0) e << YAML::Key << "filesystem_nodes" << YAML::Value << p.filesystem_nodes;
  if (!p.persistent_workers)  // written only when set: a plan's text (and hash) stays as before
    e << YAML::Key << "persistent_workers" << YAML::Value << false;
  if (p.codec != Codec::raw || p.codec_named)  // written only when set: a raw plan's text (and hash) stays as before
    e << YAML::Key << "codec" << YAML::Value << codec_name(p.codec) << YAML::Key << "decoder" << YAML::Value << decoder_place_name(p.decoder);
  e << YAML::EndMap;
  if (!p.data_dir.empty())
    e << YAML::Key << "data" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "dir" << YAML::Value << p.data_dir << YAML::EndMap;
  if (p.checkpoint_every > 0) e << YAML::Key << "checkpoint_every" << YAML::Value << p.checkpoint_every;
  e << YAML::Key << "stages" << YAML::Value << YAML::BeginSeq;
  for (const auto& s : p.stages) emit_stage(e, s);
  e << YAML::EndSeq << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

void check_data_path(const Plan& p, const std::string& file) {
  if (p.decoder == DecoderPlace::device && (p.codec == Codec::raw || p.codec == Codec::deflate))
    fail_input(file, "io.decoder", fmt::format("'{}' is read by HDF5 on the host: a device decoder needs codec lut or diff", codec_name(p.codec)));
  // the GPU holds the samples as stored; only a device decoder turns them into the network's input
  if (p.staging == Staging::device_memory && p.decoder != DecoderPlace::device)
    fail_input(file, "io.staging", "'device_memory' keeps encoded samples on the GPU for a device decoder: set codec lut or diff "
                                   "and decoder: device, or stage to host_memory");
}

void check_plan_against_machine(const Plan& p, const MachineProfile& m) {
  if (p.staging == Staging::nvme && !(m.io.nvme.capacity_per_node_bytes > 0 && m.io.nvme.per_node_bandwidth_Bps > 0))
    fail_input(p.source_file, "io.staging",
               fmt::format("'nvme', but machine '{}' has no node NVMe (its profile's io.tiers.nvme.capacity_per_node_GB and per_node_bandwidth_GBps "
                           "must be above 0): stage to host_memory, or none",
                           m.name));
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const auto& s = p.stages[i];
    const auto key = fmt::format("stages[{}].gpus", i);
    if (m.whole_nodes && s.gpus() % m.gpus_per_node != 0)
      fail_input(p.source_file, key,
                 fmt::format("{} GPUs is not a multiple of the {} GPUs per node that machine '{}' allocates", s.gpus(),
                             m.gpus_per_node, m.name));
    for (size_t j = 0; j < s.models.size(); ++j) {
      const auto& mr = s.models[j];
      const auto mkey = s.models.size() == 1 ? fmt::format("stages[{}]", i) : fmt::format("stages[{}].models[{}]", i, j);
      if (int64_t{mr.gpus} * mr.local_batch > p.train_samples)
        fail_input(p.source_file, mkey + ".local_batch",
                   fmt::format("global batch {} exceeds the {} training samples", mr.gpus * mr.local_batch, p.train_samples));
    }
  }
}

}  // namespace mrplan
