#include "model/builtin_workloads.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "model/errors.hpp"
#include "model/layer_table.hpp"

namespace mrplan {

namespace {

struct OpList {
  std::vector<Op> ops;
  std::string last = "input";

  Op& push(Op op) {
    ops.push_back(std::move(op));
    last = ops.back().name;
    return ops.back();
  }
  Op& conv(const std::string& name, int64_t filters, int64_t kernel, int64_t stride = 1, int64_t padding = -1,
           bool bias = false, int64_t dilation = 1) {
    Op o;
    o.name = name, o.kind = OpKind::conv, o.filters = filters, o.kernel = kernel, o.stride = stride;
    o.padding = padding, o.bias = bias, o.dilation = dilation;
    return push(o);
  }
  Op& simple(const std::string& name, OpKind kind, const std::string& function = {}) {
    Op o;
    o.name = name, o.kind = kind, o.function = function;
    return push(o);
  }
  Op& pool(const std::string& name, OpKind kind, int64_t kernel) {
    Op o;
    o.name = name, o.kind = kind, o.kernel = kernel, o.stride = kernel;
    return push(o);
  }
  Op& linear(const std::string& name, int64_t features) {
    Op o;
    o.name = name, o.kind = OpKind::linear, o.filters = features, o.bias = true, o.transfer = false;
    return push(o);
  }
  Op& join(const std::string& name, OpKind kind, std::vector<std::string> from) {
    Op o;
    o.name = name, o.kind = kind, o.from = std::move(from);
    return push(o);
  }
  // Xception's SeparableConv2d_same: depthwise k x k (padding = dilation) then pointwise 1x1.
  void separable(const std::string& name, int64_t filters, int64_t stride = 1, int64_t dilation = 1) {
    Op dw;
    dw.name = name + ".depthwise", dw.kind = OpKind::depthwise_conv, dw.kernel = 3, dw.stride = stride;
    dw.padding = dilation, dw.dilation = dilation;
    push(dw);
    conv(name + ".pointwise", filters, 1, 1, 0);
  }
};

int64_t scaled(int64_t filters, double width) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::lround(static_cast<double>(filters) * width)));
}

int64_t log2_floor(int64_t v) {
  int64_t r = 0;
  while (v > 1) v >>= 1, ++r;
  return r;
}

// MRT paper Fig. 1a / the MRT authors' LBANN-style model: input BN, 7 conv3d+BN+ReLU,
// AvgPool3d(2) after the first five (fewer when the input is small), conv4 has stride 2.
NetworkSpec cosmoflow_mrt(const WorkloadOptions& opt) {
  const int64_t size = opt.size > 0 ? opt.size : 128;
  NetworkSpec s;
  s.name = "cosmoflow-mrt";
  s.input_channels = 4;
  s.input_spatial = {size, size, size};
  s.sample_bytes_per_element = 2;  // int16 particle counts
  s.label_elements = 4;
  // dense must keep >= 2 cells at the end so the 2x coarse model keeps >= 1
  const int64_t pools = std::clamp<int64_t>(log2_floor(size) - 2, 0, 5);
  OpList L;
  L.simple("input_bn", OpKind::batch_norm);
  const int64_t filters[7] = {16, 32, 64, 128, 256, 256, 256};
  for (int i = 0; i < 7; ++i) {
    const auto n = std::to_string(i + 1);
    L.conv("conv" + n, scaled(filters[i], opt.width), 3, i == 3 ? 2 : 1, -1, true);
    L.simple("bn" + n, OpKind::batch_norm);
    L.simple("relu" + n, OpKind::activation, "relu");
    // ceil mode: a single cell stays one, so the model exists at a quarter of the dense resolution
    // (the lowest of MRMF's three resolutions with two fusions); even extents pool as before
    if (i < pools) L.pool("pool" + n, OpKind::avg_pool, 2).ceil_mode = true;
  }
  L.simple("flatten", OpKind::flatten);
  s.fusion_split_after = L.last;  // the convolutions below, the fully connected layers above (MRMF Fig. 1)
  L.linear("fc1", 2048);
  L.simple("fc1_relu", OpKind::activation, "relu");
  L.simple("fc1_dropout", OpKind::dropout).rate = 0.05;
  L.linear("fc2", 256);
  L.simple("fc2_relu", OpKind::activation, "relu");
  L.simple("fc2_dropout", OpKind::dropout).rate = 0.05;
  L.linear("fc3", 4);
  s.ops = std::move(L.ops);
  return s;
}

// mlcommons/hpc cosmoflow reference: 5 x (conv3d k3 same + bias, LeakyReLU 0.3, MaxPool3d 2), 3 FC, tanh.
NetworkSpec cosmoflow_mlperf(const WorkloadOptions& opt) {
  const int64_t size = opt.size > 0 ? opt.size : 128;
  NetworkSpec s;
  s.name = "cosmoflow-mlperf";
  s.input_channels = 4;
  s.input_spatial = {size, size, size};
  s.sample_bytes_per_element = 2;
  s.label_elements = 4;
  const int64_t blocks = std::clamp<int64_t>(log2_floor(size) - 1, 1, 5);
  OpList L;
  const int64_t filters[5] = {32, 64, 128, 256, 512};
  for (int i = 0; i < blocks; ++i) {
    const auto n = std::to_string(i + 1);
    L.conv("conv" + n, scaled(filters[i], opt.width), 3, 1, -1, true);
    L.simple("act" + n, OpKind::activation, "leaky_relu").rate = 0.3;
    L.pool("pool" + n, OpKind::max_pool, 2);
  }
  L.simple("flatten", OpKind::flatten);
  s.fusion_split_after = L.last;
  L.linear("fc1", 128);
  L.simple("fc1_act", OpKind::activation, "leaky_relu").rate = 0.3;
  L.linear("fc2", 64);
  L.simple("fc2_act", OpKind::activation, "leaky_relu").rate = 0.3;
  L.linear("fc3", 4);
  L.simple("output_tanh", OpKind::activation, "tanh");
  s.ops = std::move(L.ops);
  return s;
}

// mlcommons/hpc deepcam DeepLabv3+ with modified aligned Xception, output stride 16.
NetworkSpec deepcam(const WorkloadOptions& opt) {
  const int64_t h = opt.size > 0 ? opt.size : 768;
  NetworkSpec s;
  s.name = "deepcam";
  s.input_channels = 16;
  s.input_spatial = {h, h * 3 / 2};
  s.sample_bytes_per_element = 4;
  s.label_elements = 1;
  s.labels_scale_with_resolution = true;
  s.coarse_upsamples_output = true;
  const double w = opt.width;
  auto F = [&](int64_t f) { return scaled(f, w); };
  OpList L;
  auto bn_relu = [&](const std::string& n, bool relu = true) {
    L.simple(n + ".bn", OpKind::batch_norm);
    if (relu) L.simple(n + ".relu", OpKind::activation, "relu");
  };
  // Xception Block: separable convs (+BN, ReLU except after the last), optional strided or
  // extra separable conv, skip (1x1 conv + BN when shape changes), add, optional ReLU.
  auto block = [&](const std::string& n, int64_t in, int64_t out, int reps, int64_t stride, int64_t dilation,
                   bool grow_first, bool is_last, bool end_relu, bool relu_before = false) {
    std::string entry = L.last;
    if (relu_before) {
      L.simple(n + ".pre_relu", OpKind::activation, "relu");
      entry = L.last;
    }
    std::vector<int64_t> widths;
    if (grow_first) {
      widths.push_back(out);
      for (int r = 1; r < reps; ++r) widths.push_back(out);
    } else {
      for (int r = 1; r < reps; ++r) widths.push_back(in);
      widths.push_back(out);
    }
    for (size_t r = 0; r < widths.size(); ++r) {
      const auto sn = fmt::format("{}.sep{}", n, r + 1);
      L.separable(sn, widths[r], 1, dilation);
      bn_relu(sn, r + 1 < widths.size());
    }
    if (stride != 1) L.separable(n + ".sep_stride", out, stride, 1);
    if (stride == 1 && is_last) L.separable(n + ".sep_last", out, 1, 1);
    const std::string main = L.last;
    std::string skip = entry;
    if (out != in || stride != 1) {
      Op sk;
      sk.name = n + ".skip", sk.kind = OpKind::conv, sk.filters = out, sk.kernel = 1, sk.stride = stride;
      sk.padding = 0, sk.from = {entry};
      L.push(sk);
      L.simple(n + ".skipbn", OpKind::batch_norm);
      skip = L.last;
    }
    L.join(n + ".add", OpKind::add, {main, skip});
    if (end_relu) L.simple(n + ".relu", OpKind::activation, "relu");
  };

  L.conv("conv1", F(32), 3, 2, 1);
  bn_relu("conv1");
  L.conv("conv2", F(64), 3, 1, 1);
  bn_relu("conv2");
  block("block1", F(64), F(128), 2, 2, 1, true, false, false);
  const std::string low_level = L.last;
  block("block2", F(128), F(256), 2, 2, 1, true, false, true, /*relu_before=*/true);
  block("block3", F(256), F(728), 2, 2, 1, true, true, true);
  for (int b = 4; b <= 19; ++b) block(fmt::format("block{}", b), F(728), F(728), 3, 1, 1, true, false, true);
  block("block20", F(728), F(1024), 2, 1, 1, false, true, false);
  const int64_t exit_w[3] = {1536, 1536, 2048};
  for (int i = 0; i < 3; ++i) {
    const auto n = fmt::format("conv{}", i + 3);
    L.separable(n, F(exit_w[i]), 1, 2);
    bn_relu(n);
  }
  const std::string features = L.last;
  s.fusion_split_after = features;  // the Xception encoder below; ASPP and decoder above
  // ASPP (rates 1, 6, 12, 18) + image pooling, concat, 1x1 projection.
  std::vector<std::string> branches;
  const int64_t rates[4] = {1, 6, 12, 18};
  for (int i = 0; i < 4; ++i) {
    Op a;
    a.name = fmt::format("aspp{}", i + 1), a.kind = OpKind::conv, a.filters = F(256);
    a.kernel = rates[i] == 1 ? 1 : 3, a.dilation = rates[i], a.padding = rates[i] == 1 ? 0 : rates[i];
    a.from = {features};
    L.push(a);
    bn_relu(a.name);
    branches.push_back(L.last);
  }
  Op gap;
  gap.name = "image_pool", gap.kind = OpKind::global_avg_pool, gap.from = {features};
  L.push(gap);
  L.conv("image_pool.conv", F(256), 1, 1, 0);
  L.simple("image_pool.affine", OpKind::affine);
  L.simple("image_pool.relu", OpKind::activation, "relu");
  L.join("image_pool.tile", OpKind::tile, {L.last, branches.front()});
  branches.push_back(L.last);
  L.join("aspp.concat", OpKind::concat, branches);
  L.conv("aspp.conv", F(256), 1, 1, 0);
  bn_relu("aspp");
  const std::string aspp_out = L.last;
  // Decoder: low-level 1x1 128->48, two x2 deconvs, concat 304, convs, two more x2 deconvs.
  Op ll;
  ll.name = "low_level.conv", ll.kind = OpKind::conv, ll.filters = F(48), ll.kernel = 1, ll.padding = 0;
  ll.from = {low_level};
  L.push(ll);
  bn_relu("low_level");
  const std::string ll_out = L.last;
  auto deconv = [&](const std::string& n, int64_t filters, const std::string& from, bool norm) {
    Op d;
    d.name = n, d.kind = OpKind::transposed_conv, d.filters = filters, d.kernel = 3, d.stride = 2;
    d.padding = 1, d.output_padding = 1;
    if (!from.empty()) d.from = {from};
    L.push(d);
    if (norm) bn_relu(n);
  };
  deconv("deconv1a", F(256), aspp_out, true);
  deconv("deconv1b", F(256), "", true);
  L.join("decoder.concat", OpKind::concat, {L.last, ll_out});
  L.conv("decoder.conv1", F(256), 3, 1, 1);
  bn_relu("decoder.conv1");
  L.conv("decoder.conv2", F(256), 3, 1, 1);
  bn_relu("decoder.conv2");
  L.conv("decoder.conv3", F(256), 1, 1, 0, true);
  deconv("deconv2", F(256), "", true);
  deconv("last_deconv", 3, "", false);
  s.ops = std::move(L.ops);
  return s;
}

// balewski/neuron_inverter_benchmark: 3 x (conv1d k4 valid, maxpool 4, ReLU), BN1d, FC stack.
NetworkSpec neuron_inverter(const WorkloadOptions& opt) {
  const int64_t bins = opt.size > 0 ? opt.size : 1600;
  NetworkSpec s;
  s.name = "neuron-inverter";
  s.input_channels = 4;
  s.input_spatial = {bins};
  s.sample_bytes_per_element = 4;
  s.label_elements = 15;
  s.samples_per_file = 1 << 20;  // the benchmark's one HDF5 file per split, each rank reading its shard
  OpList L;
  const int64_t filters[3] = {30, 90, 180};
  for (int i = 0; i < 3; ++i) {
    const auto n = std::to_string(i + 1);
    L.conv("conv" + n, scaled(filters[i], opt.width), 4, 1, 0, true);
    L.pool("pool" + n, OpKind::max_pool, 4);
    L.simple("relu" + n, OpKind::activation, "relu");
  }
  L.simple("flatten", OpKind::flatten);
  s.fusion_split_after = L.last;  // the flattened features' batch norm depends on the resolution: top group
  L.simple("flat_bn", OpKind::batch_norm).transfer = false;
  const int64_t fc[5] = {512, 512, 512, 256, 128};
  for (int i = 0; i < 5; ++i) {
    const auto n = fmt::format("fc{}", i + 1);
    L.linear(n, fc[i]);
    L.simple(n + "_relu", OpKind::activation, "relu");
    L.simple(n + "_dropout", OpKind::dropout).rate = 0.05;
  }
  L.linear("fc6", 15);
  s.ops = std::move(L.ops);
  return s;
}

}  // namespace

std::vector<std::string> builtin_workload_names() {
  return {"cosmoflow-mrt", "cosmoflow-mlperf", "deepcam", "neuron-inverter"};
}

NetworkSpec builtin_workload(const std::string& name, const WorkloadOptions& options) {
  if (options.width <= 0) fail_input(name, "width", "must be > 0");
  if (name == "cosmoflow-mrt") return cosmoflow_mrt(options);
  if (name == "cosmoflow-mlperf") return cosmoflow_mlperf(options);
  if (name == "deepcam") return deepcam(options);
  if (name == "neuron-inverter") return neuron_inverter(options);
  fail_input("", "workload", fmt::format("unknown built-in workload '{}' (known: {})", name,
                                         fmt::join(builtin_workload_names(), ", ")));
}

std::vector<int64_t> nearest_working_sizes(const std::string& name, const WorkloadOptions& options, const std::vector<int64_t>& resolutions) {
  const int64_t size = builtin_workload(name, options).input_spatial.at(0);
  auto works = [&](int64_t s) {
    try {
      const auto spec = builtin_workload(name, {s, options.width});
      for (int64_t r : resolutions) resolve(spec, coarsened_spatial(spec, r), 1, 4.0, spec.coarse_upsamples_output ? r : 1);
      return true;
    } catch (const InputError&) {
      return false;
    }
  };
  std::vector<int64_t> out;
  for (int64_t s = size - 1; s >= std::max<int64_t>(1, size / 2); --s)
    if (works(s)) {
      out.push_back(s);
      break;
    }
  for (int64_t s = size + 1; s <= 2 * size; ++s)
    if (works(s)) {
      out.push_back(s);
      break;
    }
  return out;
}

}  // namespace mrplan
