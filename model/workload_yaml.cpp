#include "model/workload_yaml.hpp"
#include "model/yaml_number.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "model/errors.hpp"
#include "model/yaml_fields.hpp"

namespace mrplan {

namespace {

struct KindName {
  OpKind kind;
  const char* name;
};
constexpr KindName kKinds[] = {
    {OpKind::conv, "conv"},
    {OpKind::depthwise_conv, "depthwise_conv"},
    {OpKind::transposed_conv, "transposed_conv"},
    {OpKind::max_pool, "max_pool"},
    {OpKind::avg_pool, "avg_pool"},
    {OpKind::global_avg_pool, "global_avg_pool"},
    {OpKind::batch_norm, "batch_norm"},
    {OpKind::affine, "affine"},
    {OpKind::activation, "activation"},
    {OpKind::dropout, "dropout"},
    {OpKind::linear, "linear"},
    {OpKind::flatten, "flatten"},
    {OpKind::upsample, "upsample"},
    {OpKind::tile, "tile"},
    {OpKind::concat, "concat"},
    {OpKind::add, "add"},
};

void read_input(const YamlFields& top, NetworkSpec& s, const std::string& file) {
  auto in = top.child("input");
  in.only({"channels", "spatial", "bytes_per_element", "samples_per_file"});
  s.input_channels = in.integer("channels");
  s.input_spatial = in.integers("spatial");
  s.sample_bytes_per_element = in.integer("bytes_per_element", 4);
  s.samples_per_file = in.integer("samples_per_file", 1);
  if (s.samples_per_file < 1) fail_input(file, "input.samples_per_file", "must be >= 1");
  if (s.sample_bytes_per_element != 1 && s.sample_bytes_per_element != 2 && s.sample_bytes_per_element != 4 && s.sample_bytes_per_element != 8)
    fail_input(file, "input.bytes_per_element", fmt::format("expected 1, 2, 4 or 8, got {}", s.sample_bytes_per_element));
  if (s.input_channels < 1) fail_input(file, "input.channels", "must be >= 1");
  for (auto v : s.input_spatial)
    if (v < 1) fail_input(file, "input.spatial", "every extent must be >= 1");
  if (!top.has("labels")) return;
  auto lb = top.child("labels");
  lb.only({"elements", "per_pixel"});
  s.label_elements = lb.integer("elements", 1);
  if (s.label_elements < 1) fail_input(file, "labels.elements", "must be >= 1");
  s.labels_scale_with_resolution = lb.boolean("per_pixel", false);
}

Op op_from(const YamlFields& o, const std::string& file) {
  o.only({"name", "kind", "from", "filters", "kernel", "stride", "dilation", "padding", "output_padding", "factor", "bias", "function",
          "rate", "transfer", "ceil_mode", "min_size", "fixed_filters"});
  Op op;
  op.name = o.text("name");
  try {
    op.kind = op_kind_from_string(o.text("kind"));
  } catch (const std::invalid_argument& e) {
    fail_input(file, o.key_path("kind"), e.what());
  }
  if (o.has("from")) op.from = o.texts("from");
  op.filters = o.integer("filters", 0);
  op.kernel = o.integer("kernel", 1);
  op.stride = o.integer("stride", 1);
  op.dilation = o.integer("dilation", 1);
  if (o.has("padding") && o.text("padding") == "same") op.padding = -1;
  else op.padding = o.integer("padding", -1);
  op.output_padding = o.integer("output_padding", 0);
  op.factor = o.integer("factor", 1);
  op.bias = o.boolean("bias", false);
  op.function = o.text("function", op.kind == OpKind::activation ? "relu" : "");
  if (op.kind == OpKind::activation && op.function != "relu" && op.function != "leaky_relu" && op.function != "tanh")
    fail_input(file, o.key_path("function"), fmt::format("unknown activation '{}' (expected relu, leaky_relu or tanh)", op.function));
  op.rate = o.number("rate", 0.0);
  if (op.rate < 0 || (op.kind == OpKind::dropout && op.rate >= 1))
    fail_input(file, o.key_path("rate"), "dropout rate must be in [0, 1); slopes must be >= 0");
  op.transfer = o.boolean("transfer", true);
  op.ceil_mode = o.boolean("ceil_mode", false);
  op.min_size = o.integer("min_size", 0);
  if (op.min_size < 0) fail_input(file, o.key_path("min_size"), "must be >= 0 (0: always present)");
  op.fixed_filters = o.boolean("fixed_filters", false);
  if (op.kernel < 1 || op.stride < 1 || op.dilation < 1) fail_input(file, o.key_path("kernel"), "kernel, stride and dilation must be >= 1");
  return op;
}

NetworkSpec from_node(const YAML::Node& root, const std::string& file) {
  YamlFields top(root, file, "");
  top.only({"name", "input", "labels", "coarse_upsamples_output", "fusion_split_after", "ops"});
  NetworkSpec s;
  s.name = top.text("name");
  read_input(top, s, file);
  s.coarse_upsamples_output = top.boolean("coarse_upsamples_output", false);
  s.fusion_split_after = top.text("fusion_split_after", "");
  for (const auto& o : top.list("ops")) s.ops.push_back(op_from(o, file));
  if (s.ops.empty()) fail_input(file, "ops", "a network needs at least one op");
  return s;
}

}  // namespace

const char* to_string(OpKind kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return k.name;
  return "?";
}

OpKind op_kind_from_string(const std::string& name) {
  for (const auto& k : kKinds)
    if (name == k.name) return k.kind;
  std::string list;
  for (const auto& k : kKinds) list += (list.empty() ? "" : ", ") + std::string(k.name);
  throw std::invalid_argument(fmt::format("unknown layer kind '{}' (expected one of: {})", name, list));
}

NetworkSpec workload_from_yaml_text(const std::string& text, const std::string& file) {
  return from_node(parse_yaml_text(text, file), file);
}

NetworkSpec load_workload_file(const std::string& path) { return from_node(load_yaml_file(path), path); }

std::string workload_to_yaml(const NetworkSpec& s) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << s.name;
  e << YAML::Key << "input" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "channels" << YAML::Value
    << s.input_channels << YAML::Key << "spatial" << YAML::Value << YAML::Flow << s.input_spatial << YAML::Key
    << "bytes_per_element" << YAML::Value << s.sample_bytes_per_element << YAML::Key << "samples_per_file" << YAML::Value
    << s.samples_per_file << YAML::EndMap;
  e << YAML::Key << "labels" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "elements" << YAML::Value
    << s.label_elements << YAML::Key << "per_pixel" << YAML::Value << s.labels_scale_with_resolution << YAML::EndMap;
  e << YAML::Key << "coarse_upsamples_output" << YAML::Value << s.coarse_upsamples_output;
  if (!s.fusion_split_after.empty()) e << YAML::Key << "fusion_split_after" << YAML::Value << s.fusion_split_after;
  e << YAML::Key << "ops" << YAML::Value << YAML::BeginSeq;
  const Op d;
  for (const auto& op : s.ops) {
    e << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "name" << YAML::Value << op.name << YAML::Key << "kind" << YAML::Value << to_string(op.kind);
    if (!op.from.empty()) e << YAML::Key << "from" << YAML::Value << YAML::Flow << op.from;
    if (op.filters != d.filters) e << YAML::Key << "filters" << YAML::Value << op.filters;
    if (op.kernel != d.kernel) e << YAML::Key << "kernel" << YAML::Value << op.kernel;
    if (op.stride != d.stride) e << YAML::Key << "stride" << YAML::Value << op.stride;
    if (op.dilation != d.dilation) e << YAML::Key << "dilation" << YAML::Value << op.dilation;
    if (op.padding != d.padding) e << YAML::Key << "padding" << YAML::Value << op.padding;
    if (op.output_padding != d.output_padding) e << YAML::Key << "output_padding" << YAML::Value << op.output_padding;
    if (op.factor != d.factor) e << YAML::Key << "factor" << YAML::Value << yaml_value(op.factor);
    if (op.bias) e << YAML::Key << "bias" << YAML::Value << true;
    if (!op.function.empty()) e << YAML::Key << "function" << YAML::Value << op.function;
    if (op.rate != d.rate) e << YAML::Key << "rate" << YAML::Value << yaml_value(op.rate);
    if (!op.transfer) e << YAML::Key << "transfer" << YAML::Value << false;
    if (op.ceil_mode) e << YAML::Key << "ceil_mode" << YAML::Value << true;
    if (op.min_size > 0) e << YAML::Key << "min_size" << YAML::Value << op.min_size;
    if (op.fixed_filters) e << YAML::Key << "fixed_filters" << YAML::Value << true;
    e << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace mrplan
