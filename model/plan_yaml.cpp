#include "model/plan_yaml.hpp"

#include <fmt/format.h>

#include "model/errors.hpp"
#include "model/yaml_fields.hpp"

namespace mrplan {

const char* to_string(StopRule::Kind k) {
  switch (k) {
    case StopRule::Kind::epochs: return "epochs";
    case StopRule::Kind::switch_rule: return "switch_rule";
    case StopRule::Kind::target: return "target";
    case StopRule::Kind::plateau: return "plateau";
  }
  return "?";
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

namespace {

Stage read_stage(const YamlFields& f, size_t index) {
  f.only({"name", "resolution", "gpus", "local_batch", "global_batch", "optimizer", "learning_rate", "warmup_epochs",
          "lr_decay", "transfer", "stop"});
  Stage s;
  s.name = f.text("name", fmt::format("stage{}", index + 1));
  ModelRun m;
  m.resolution = static_cast<int>(f.integer("resolution", 1));
  if (m.resolution < 1) fail_input(f.file(), f.key_path("resolution"), "coarsening factor must be >= 1");
  m.gpus = static_cast<int>(f.integer("gpus"));
  if (m.gpus < 1) fail_input(f.file(), f.key_path("gpus"), fmt::format("must be >= 1, got {}", m.gpus));
  if (f.has("local_batch") == f.has("global_batch"))
    fail_input(f.file(), f.key_path("local_batch"), "give exactly one of local_batch or global_batch");
  if (f.has("local_batch")) {
    m.local_batch = static_cast<int>(f.integer("local_batch"));
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
  s.models.push_back(m);
  s.optimizer = f.text("optimizer", "adam");
  if (s.optimizer != "sgd" && s.optimizer != "momentum" && s.optimizer != "adam" && s.optimizer != "lamb")
    fail_input(f.file(), f.key_path("optimizer"), fmt::format("unknown optimizer '{}' (expected sgd, momentum, adam or lamb)", s.optimizer));
  s.learning_rate = f.positive("learning_rate", 1e-3);
  s.transfer_from_previous = f.boolean("transfer", true);
  s.warmup_epochs = static_cast<int>(f.integer("warmup_epochs", 0));
  if (s.warmup_epochs < 0) fail_input(f.file(), f.key_path("warmup_epochs"), "must be >= 0");
  if (f.has("lr_decay"))
    for (const auto& d : f.list("lr_decay")) {
      d.only({"epoch", "factor"});
      s.lr_decay.emplace_back(static_cast<int>(d.integer("epoch")), d.positive("factor"));
    }
  auto st = f.child("stop");
  st.only({"epochs", "switch_rule", "target", "plateau", "max_epochs", "eval_iterations"});
  const int kinds = st.has("epochs") + st.has("switch_rule") + st.has("target") + st.has("plateau");
  if (kinds != 1)
    fail_input(f.file(), st.key_path("<kind>"), "give exactly one of epochs, switch_rule, target: true, plateau: true");
  s.stop.max_epochs = static_cast<int>(st.integer("max_epochs", 1000));
  if (s.stop.max_epochs < 1) fail_input(f.file(), st.key_path("max_epochs"), "must be >= 1");
  s.stop.eval_iterations = static_cast<int>(st.integer("eval_iterations", 0));
  if (s.stop.eval_iterations < 0) fail_input(f.file(), st.key_path("eval_iterations"), "must be >= 0");
  if (st.has("epochs")) {
    s.stop.kind = StopRule::Kind::epochs;
    s.stop.epochs = st.positive("epochs");
  } else if (st.has("switch_rule")) {
    s.stop.kind = StopRule::Kind::switch_rule;
    auto r = st.child("switch_rule");
    r.only({"patience", "epsilon", "window_iterations"});
    s.stop.rule.patience = static_cast<int>(r.integer("patience"));
    if (s.stop.rule.patience < 1) fail_input(f.file(), r.key_path("patience"), "must be >= 1");
    s.stop.rule.epsilon = r.positive("epsilon");
    s.stop.window_iterations = static_cast<int>(r.integer("window_iterations", 0));
    if (s.stop.window_iterations < 0) fail_input(f.file(), r.key_path("window_iterations"), "must be >= 0");
  } else if (st.has("target")) {
    s.stop.kind = StopRule::Kind::target;
    if (!st.boolean("target", true)) fail_input(f.file(), st.key_path("target"), "write target: true or choose another stop");
  } else {
    s.stop.kind = StopRule::Kind::plateau;
  }
  return s;
}

Plan read_plan(const YAML::Node& root, const std::string& file) {
  YamlFields f(root, file, "");
  f.only({"name", "workload", "workload_options", "machine", "method", "precision", "dataset", "target", "comm", "io",
          "stages", "data", "checkpoint_every"});
  Plan p;
  p.source_file = file;
  p.name = f.text("name", file);
  p.workload = f.text("workload");
  if (f.has("workload_options")) {
    auto w = f.child("workload_options");
    w.only({"size", "width"});
    p.workload_options.size = w.integer("size", 0);
    p.workload_options.width = w.positive("width", 1.0);
  }
  p.machine = f.text("machine");
  p.method = f.text("method", "baseline");
  if (p.method != "baseline" && p.method != "mrt")
    fail_input(file, "method", fmt::format("unknown method '{}' (expected baseline or mrt)", p.method));
  p.precision = f.text("precision", "fp32");
  if (p.precision != "fp32" && p.precision != "amp")
    fail_input(file, "precision", fmt::format("unknown precision '{}' (expected fp32 or amp)", p.precision));
  auto d = f.child("dataset");
  d.only({"train_samples", "validation_samples"});
  p.train_samples = d.integer("train_samples");
  if (p.train_samples < 1) fail_input(file, "dataset.train_samples", "must be >= 1");
  p.validation_samples = d.integer("validation_samples", 0);
  auto t = f.child("target");
  t.only({"metric", "value", "goal", "precise_bn_batches"});
  p.target_metric = t.text("metric");
  p.target_value = t.number("value");
  const auto goal = t.text("goal", "minimize");
  if (goal != "minimize" && goal != "maximize") fail_input(file, "target.goal", "expected minimize or maximize");
  p.maximize = goal == "maximize";
  p.precise_bn_batches = static_cast<int>(t.integer("precise_bn_batches", 0));
  if (p.precise_bn_batches < 0) fail_input(file, "target.precise_bn_batches", "must be >= 0 (0: the running averages)");
  if (f.has("comm")) {
    auto c = f.child("comm");
    c.only({"bucket_mb", "overlap"});
    p.bucket_bytes = c.positive("bucket_mb", 25.0) * 1e6;
    p.overlap_comm = c.boolean("overlap", true);
  }
  if (f.has("io")) {
    auto io = f.child("io");
    io.only({"staged_to_nvme", "h2d_overlapped"});
    p.staged_to_nvme = io.boolean("staged_to_nvme", false);
    p.h2d_overlapped = io.boolean("h2d_overlapped", true);
  }
  if (f.has("data")) {
    auto d = f.child("data");
    d.only({"dir"});
    p.data_dir = d.text("dir");
  }
  p.checkpoint_every = static_cast<int>(f.integer("checkpoint_every", 0));
  auto stages = f.list("stages");
  if (stages.empty()) fail_input(file, "stages", "a plan needs at least one stage");
  for (size_t i = 0; i < stages.size(); ++i) p.stages.push_back(read_stage(stages[i], i));
  if (p.method == "baseline" && p.stages.size() != 1)
    fail_input(file, "stages", "a baseline plan has exactly one stage");
  if (p.method == "mrt") {
    if (p.stages.size() != 2) fail_input(file, "stages", "an mrt plan has two stages: coarse, then dense");
    if (p.stages[0].model().resolution <= p.stages[1].model().resolution)
      fail_input(file, "stages[0].resolution", "the first MRT stage must be coarser (larger factor) than the second");
    if (p.stages[1].stop.kind == StopRule::Kind::switch_rule)
      fail_input(file, "stages[1].stop", "the dense stage ends at the target or after epochs, not by the switch rule");
  }
  return p;
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
    e << YAML::Key << "width" << YAML::Value << p.workload_options.width << YAML::EndMap;
  }
  e << YAML::Key << "machine" << YAML::Value << p.machine;
  e << YAML::Key << "method" << YAML::Value << p.method;
  e << YAML::Key << "precision" << YAML::Value << p.precision;
  e << YAML::Key << "dataset" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "train_samples"
    << YAML::Value << p.train_samples << YAML::Key << "validation_samples" << YAML::Value << p.validation_samples
    << YAML::EndMap;
  e << YAML::Key << "target" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "metric" << YAML::Value
    << p.target_metric << YAML::Key << "value" << YAML::Value << p.target_value << YAML::Key << "goal" << YAML::Value
    << (p.maximize ? "maximize" : "minimize");
  if (p.precise_bn_batches > 0) e << YAML::Key << "precise_bn_batches" << YAML::Value << p.precise_bn_batches;
  e << YAML::EndMap;
  e << YAML::Key << "comm" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "bucket_mb" << YAML::Value
    << p.bucket_bytes / 1e6 << YAML::Key << "overlap" << YAML::Value << p.overlap_comm << YAML::EndMap;
  e << YAML::Key << "io" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "staged_to_nvme"
    << YAML::Value << p.staged_to_nvme << YAML::Key << "h2d_overlapped" << YAML::Value << p.h2d_overlapped
    << YAML::EndMap;
  if (!p.data_dir.empty())
    e << YAML::Key << "data" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "dir" << YAML::Value << p.data_dir << YAML::EndMap;
  if (p.checkpoint_every > 0) e << YAML::Key << "checkpoint_every" << YAML::Value << p.checkpoint_every;
  e << YAML::Key << "stages" << YAML::Value << YAML::BeginSeq;
  for (const auto& s : p.stages) {
    const auto& m = s.model();
    e << YAML::BeginMap;
    e << YAML::Key << "name" << YAML::Value << s.name;
    e << YAML::Key << "resolution" << YAML::Value << m.resolution;
    e << YAML::Key << "gpus" << YAML::Value << m.gpus;
    e << YAML::Key << "local_batch" << YAML::Value << m.local_batch;
    e << YAML::Key << "optimizer" << YAML::Value << s.optimizer;
    e << YAML::Key << "learning_rate" << YAML::Value << s.learning_rate;
    if (s.warmup_epochs > 0) e << YAML::Key << "warmup_epochs" << YAML::Value << s.warmup_epochs;
    if (!s.lr_decay.empty()) {
      e << YAML::Key << "lr_decay" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (const auto& [ep, fac] : s.lr_decay)
        e << YAML::Flow << YAML::BeginMap << YAML::Key << "epoch" << YAML::Value << ep << YAML::Key << "factor" << YAML::Value << fac << YAML::EndMap;
      e << YAML::EndSeq;
    }
    if (!s.transfer_from_previous) e << YAML::Key << "transfer" << YAML::Value << false;
    e << YAML::Key << "stop" << YAML::Value << YAML::Flow << YAML::BeginMap;
    switch (s.stop.kind) {
      case StopRule::Kind::epochs: e << YAML::Key << "epochs" << YAML::Value << s.stop.epochs; break;
      case StopRule::Kind::switch_rule:
        e << YAML::Key << "switch_rule" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "patience"
          << YAML::Value << s.stop.rule.patience << YAML::Key << "epsilon" << YAML::Value << s.stop.rule.epsilon;
        if (s.stop.window_iterations > 0)
          e << YAML::Key << "window_iterations" << YAML::Value << s.stop.window_iterations;
        e << YAML::EndMap;
        break;
      case StopRule::Kind::target: e << YAML::Key << "target" << YAML::Value << true; break;
      case StopRule::Kind::plateau: e << YAML::Key << "plateau" << YAML::Value << true; break;
    }
    if (s.stop.eval_iterations > 0) e << YAML::Key << "eval_iterations" << YAML::Value << s.stop.eval_iterations;
    e << YAML::Key << "max_epochs" << YAML::Value << s.stop.max_epochs << YAML::EndMap;
    e << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

void check_plan_against_machine(const Plan& p, const MachineProfile& m) {
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const auto& s = p.stages[i];
    const auto key = fmt::format("stages[{}].gpus", i);
    if (m.whole_nodes && s.gpus() % m.gpus_per_node != 0)
      fail_input(p.source_file, key,
                 fmt::format("{} GPUs is not a multiple of the {} GPUs per node that machine '{}' allocates", s.gpus(),
                             m.gpus_per_node, m.name));
    if (s.global_batch() < s.gpus())
      fail_input(p.source_file, key, fmt::format("global batch {} is smaller than {} GPUs", s.global_batch(), s.gpus()));
    if (s.global_batch() > p.train_samples)
      fail_input(p.source_file, fmt::format("stages[{}].local_batch", i),
                 fmt::format("global batch {} exceeds the {} training samples", s.global_batch(), p.train_samples));
  }
}

}  // namespace mrplan
