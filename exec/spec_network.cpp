#include "exec/spec_network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>

#include "model/error_summary.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace nn = torch::nn;

namespace {

// 'same' padding for odd kernels: d(k-1)/2 on each side gives ceil(in/stride) outputs.
int64_t pad_of(const Op& op, const std::string& spec_name) {
  if (op.padding >= 0) return op.padding;
  if (op.kernel % 2 == 0)
    fail_input(spec_name, "ops." + op.name, "'same' padding needs an odd kernel; give an explicit padding");
  return op.dilation * (op.kernel - 1) / 2;
}

template <size_t D>
nn::AnyModule conv_module(const Op& op, int64_t c_in, int64_t c_out, int64_t groups, int64_t pad) {
  using Opts = nn::ConvOptions<D>;
  Opts o(c_in, c_out, torch::ExpandingArray<D>(op.kernel));
  o.stride(op.stride).padding(pad).dilation(op.dilation).groups(groups).bias(op.bias);
  if constexpr (D == 1) return nn::AnyModule(nn::Conv1d(o));
  if constexpr (D == 2) return nn::AnyModule(nn::Conv2d(o));
  if constexpr (D == 3) return nn::AnyModule(nn::Conv3d(o));
}

template <size_t D>
nn::AnyModule deconv_module(const Op& op, int64_t c_in, int64_t c_out, int64_t pad) {
  nn::ConvTransposeOptions<D> o(c_in, c_out, torch::ExpandingArray<D>(op.kernel));
  o.stride(op.stride).padding(pad).output_padding(op.output_padding).dilation(op.dilation).bias(op.bias);
  if constexpr (D == 1) return nn::AnyModule(nn::ConvTranspose1d(o));
  if constexpr (D == 2) return nn::AnyModule(nn::ConvTranspose2d(o));
  if constexpr (D == 3) return nn::AnyModule(nn::ConvTranspose3d(o));
}

// Per-channel scale and shift (DeepCAM's TrainableAffine): weight 1, bias 0 at start.
struct AffineImpl : nn::Module {
  explicit AffineImpl(int64_t c) {
    weight = register_parameter("weight", torch::ones({c}));
    bias = register_parameter("bias", torch::zeros({c}));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    std::vector<int64_t> shape(x.dim(), 1);
    shape[1] = x.size(1);
    return x * weight.view(shape) + bias.view(shape);
  }
  torch::Tensor weight, bias;
};
TORCH_MODULE(Affine);

// The module of an op with parameters or a training mode (convolutions, normalisations, linear,
// dropout), sized from its resolved layer; none for the functional ops forward applies itself.
std::optional<nn::AnyModule> module_of(const Op& op, const Layer& l, const std::string& spec_name) {
  const int rank = l.spatial_rank;
  const int64_t c_in = l.in_shape[0], c_out = l.out_shape[0];
  const bool conv = op.kind == OpKind::conv || op.kind == OpKind::depthwise_conv || op.kind == OpKind::transposed_conv;
  if (conv && (rank < 1 || rank > 3)) fail_input(spec_name, "ops." + op.name, fmt::format("unsupported spatial rank {}", rank));
  switch (op.kind) {
    case OpKind::conv:
    case OpKind::depthwise_conv: {
      const int64_t groups = op.kind == OpKind::depthwise_conv ? c_in : 1;
      const int64_t pad = pad_of(op, spec_name);
      return rank == 1   ? conv_module<1>(op, c_in, c_out, groups, pad)
             : rank == 2 ? conv_module<2>(op, c_in, c_out, groups, pad)
                         : conv_module<3>(op, c_in, c_out, groups, pad);
    }
    case OpKind::transposed_conv: {
      const int64_t pad = op.padding < 0 ? 0 : op.padding;
      return rank == 1   ? deconv_module<1>(op, c_in, c_out, pad)
             : rank == 2 ? deconv_module<2>(op, c_in, c_out, pad)
                         : deconv_module<3>(op, c_in, c_out, pad);
    }
    case OpKind::batch_norm:
      if (rank <= 1) return nn::AnyModule(nn::BatchNorm1d(c_in));
      if (rank == 2) return nn::AnyModule(nn::BatchNorm2d(c_in));
      return nn::AnyModule(nn::BatchNorm3d(c_in));
    case OpKind::affine:
      return nn::AnyModule(Affine(c_in));
    case OpKind::linear: {
      int64_t f_in = 1;
      for (auto v : l.in_shape) f_in *= v;
      return nn::AnyModule(nn::Linear(nn::LinearOptions(f_in, c_out).bias(op.bias)));
    }
    case OpKind::dropout:
      return nn::AnyModule(nn::Dropout(nn::DropoutOptions(op.rate)));
    default:
      return std::nullopt;
  }
}

// A max or average pool over the input's spatial axes; the stride is the kernel's unless given.
torch::Tensor pool(const Op& op, const torch::Tensor& a) {
  const int64_t s = op.stride > 1 ? op.stride : op.kernel;
  const int r = static_cast<int>(a.dim()) - 2;
  const bool c = op.ceil_mode;
  if (op.kind == OpKind::max_pool)
    return r == 1   ? torch::max_pool1d(a, op.kernel, s, 0, 1, c)
           : r == 2 ? torch::max_pool2d(a, op.kernel, s, 0, 1, c)
                    : torch::max_pool3d(a, op.kernel, s, 0, 1, c);
  return r == 1   ? torch::avg_pool1d(a, op.kernel, s, 0, c)
         : r == 2 ? torch::avg_pool2d(a, op.kernel, s, 0, c)
                  : torch::avg_pool3d(a, op.kernel, s, 0, c);
}

// An op without parameters on its inputs (the first, and the others a join names).
torch::Tensor functional_op(const Op& op, const std::vector<torch::Tensor>& ins) {
  const auto& a = ins[0];
  switch (op.kind) {
    case OpKind::max_pool:
    case OpKind::avg_pool:
      return pool(op, a);
    case OpKind::global_avg_pool: {
      std::vector<int64_t> dims;
      for (int64_t d = 2; d < a.dim(); ++d) dims.push_back(d);
      return a.mean(dims, /*keepdim=*/true);
    }
    case OpKind::activation:
      if (op.function == "leaky_relu") return torch::leaky_relu(a, op.rate);
      if (op.function == "tanh") return torch::tanh(a);
      return torch::relu(a);
    case OpKind::flatten:
      return a.flatten(1);
    case OpKind::upsample: {
      std::vector<double> f(a.dim() - 2, static_cast<double>(op.factor));
      return nn::functional::interpolate(a, nn::functional::InterpolateFuncOptions().scale_factor(f).mode(torch::kNearest));
    }
    case OpKind::tile: {
      std::vector<int64_t> size(ins[1].sizes().begin(), ins[1].sizes().end());
      size[1] = a.size(1);
      return a.expand(size).contiguous();
    }
    case OpKind::concat:
      return torch::cat(ins, 1);
    case OpKind::add: {
      torch::Tensor y = a;
      for (size_t k = 1; k < ins.size(); ++k) y = y + ins[k];
      return y;
    }
    default:
      throw std::logic_error(fmt::format("op {}: no module and no function", op.name));
  }
}

}  // namespace

std::string SpecNetImpl::module_name(const std::string& op_name) {
  std::string s = op_name;
  for (auto& c : s)
    if (c == '.') c = '_';
  return s;
}

SpecNetImpl::SpecNetImpl(const NetworkSpec& spec, const std::vector<int64_t>& spatial, int64_t coarse_output_factor) {
  table_ = resolve(spec, spatial, 1, 4.0, coarse_output_factor);
  std::vector<Op> ops = spec.ops;
  if (coarse_output_factor > 1) {
    Op up;
    up.name = "coarse_output_upsample", up.kind = OpKind::upsample, up.factor = coarse_output_factor;
    ops.push_back(up);
  }
  std::map<std::string, int> index{{"input", -1}};
  for (size_t i = 0; i < ops.size(); ++i) {
    Node n;
    n.op = ops[i];
    if (n.op.from.empty()) n.inputs = {static_cast<int>(i) - 1};
    for (const auto& f : n.op.from) n.inputs.push_back(index.at(f));
    if (auto m = module_of(n.op, table_.layers[i], spec.name)) {
      n.module = std::move(*m), n.has_module = true;
      register_module(module_name(n.op.name), n.module.ptr());
    }
    index[n.op.name] = static_cast<int>(i);
    nodes_.push_back(std::move(n));
  }
}

torch::Tensor SpecNetImpl::apply(Node& n, const std::vector<torch::Tensor>& ins) {
  const auto& a = ins[0];
  if (!n.has_module) return functional_op(n.op, ins);
  return n.module.forward(n.op.kind == OpKind::linear && a.dim() > 2 ? a.flatten(1) : a);
}

std::vector<torch::Tensor> SpecNetImpl::inputs_of(const Node& n, const torch::Tensor& x, const std::vector<torch::Tensor>& out) {
  std::vector<torch::Tensor> ins;
  for (int k : n.inputs) ins.push_back(k < 0 ? x : out[static_cast<size_t>(k)]);
  return ins;
}

std::vector<torch::Tensor> SpecNetImpl::forward_all(const torch::Tensor& x) {
  std::vector<torch::Tensor> out;
  out.reserve(nodes_.size());
  for (auto& n : nodes_) out.push_back(apply(n, inputs_of(n, x, out)));
  return out;
}

std::vector<OpTiming> SpecNetImpl::time_ops(const torch::Tensor& x, int repeats, int warmups) {
  std::vector<torch::Tensor> acts;
  {
    torch::NoGradGuard ng;
    acts = forward_all(x);
  }
  const bool cuda = x.is_cuda();
  auto now = [cuda, &x] {
    if (cuda) torch::cuda::synchronize(x.device().index());
    return std::chrono::steady_clock::now();
  };
  auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::vector<OpTiming> times;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    auto& n = nodes_[i];
    // the op alone, on its real inputs; the network input needs no gradient, as in training
    std::vector<torch::Tensor> ins;
    for (int k : n.inputs) {
      auto t = (k < 0 ? x : acts[static_cast<size_t>(k)]).detach().clone();
      if (k >= 0) t.requires_grad_(true);
      ins.push_back(t);
    }
    const auto grad_out = torch::ones_like(acts[i]);
    std::vector<double> fwd, bwd;
    for (int r = 0; r < repeats + warmups; ++r) {
      // forward records the graph as a training step's does (saved activations, training-mode
      // kernels): timed without it, that cost would be booked to backward
      const auto t0 = now();
      auto y = apply(n, ins);
      const auto t1 = now();
      if (y.requires_grad()) y.backward(grad_out);
      const auto t2 = now();
      for (auto& t : ins)
        if (t.grad().defined()) t.mutable_grad().reset();
      if (r >= warmups) fwd.push_back(secs(t0, t1)), bwd.push_back(secs(t1, t2));
    }
    times.push_back({n.op.name, median(fwd), median(bwd)});
  }
  return times;
}

torch::Tensor SpecNetImpl::forward(const torch::Tensor& x) { return forward_all(x).back(); }

size_t SpecNetImpl::op_index_of(const std::string& parameter_name) const {
  const auto module = parameter_name.substr(0, parameter_name.find('.'));
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (module_name(nodes_[i].op.name) == module) return i;
  throw std::logic_error("no op owns parameter '" + parameter_name + "'");
}

std::vector<std::string> SpecNetImpl::transferable_parameter_names() const {
  std::vector<std::string> names;
  for (const auto& n : nodes_)
    if (n.has_module && n.op.transfer)
      for (const auto& p : n.module.ptr()->named_parameters()) names.push_back(module_name(n.op.name) + "." + p.key());
  return names;
}

}  // namespace mrplan
