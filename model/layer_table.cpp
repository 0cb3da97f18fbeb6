#include "model/layer_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <numeric>
#include <stdexcept>

#include "model/errors.hpp"

namespace mrplan {

namespace {

// Element and parameter counts stay at most 2^53, where a double still counts them exactly; past it
// a size or a width is no network, and int64 products would wrap (`--size 2e9` gave negative
// parameters, issue 44). Products are taken in 128 bits and checked.
constexpr int64_t kMaxCount = int64_t{1} << 53;
int64_t bounded(__int128 v) {
  if (v > kMaxCount)
    fail_input("", "workload", "a layer would count more than 2^53 elements or parameters: its input size or width is out of range");
  return static_cast<int64_t>(v);
}

int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  __int128 p = 1;
  for (size_t i = from; i < v.size(); ++i) p = bounded(p * v[i]);
  return static_cast<int64_t>(p);
}

int64_t ipow(int64_t base, int exp) {
  __int128 r = 1;
  for (int i = 0; i < exp; ++i) r = bounded(r * base);
  return static_cast<int64_t>(r);
}

struct Builder {
  const NetworkSpec& spec;
  int64_t batch;
  double element_bytes;
  std::map<std::string, std::vector<int64_t>> shapes;
  std::vector<int64_t> last;
  LayerTable table;

  [[noreturn]] void fail(const Op& op, const std::string& what) const {
    fail_input(spec.name, "ops." + op.name, what);
  }

  std::vector<std::vector<int64_t>> inputs_of(const Op& op) const {
    if (op.from.empty()) return {last};
    std::vector<std::vector<int64_t>> in;
    for (const auto& name : op.from) {
      auto it = shapes.find(name);
      if (it == shapes.end())
        fail(op, fmt::format("input '{}' is not an earlier op (or 'input')", name));
      in.push_back(it->second);
    }
    return in;
  }

  // Output size of a strided window along one axis; 'same' padding as TensorFlow: ceil(in/stride).
  int64_t window_out(const Op& op, int64_t in, int64_t kernel) const {
    if (op.padding < 0) return (in + op.stride - 1) / op.stride;
    int64_t eff_k = op.dilation * (kernel - 1) + 1;
    int64_t out = (in + 2 * op.padding - eff_k) / op.stride + 1;
    if (in + 2 * op.padding < eff_k || out < 1)
      fail(op, fmt::format("input extent {} is smaller than the window {} (reduce depth or raise the input size)", in, eff_k));
    return out;
  }

  void add(const Op& op) {
    auto ins = inputs_of(op);
    const auto& x = ins.front();
    if (x.empty()) fail(op, "has no input");
    const int rank = static_cast<int>(x.size()) - 1;
    const int64_t c_in = x[0];
    const double in_elems = static_cast<double>(product(x)) * batch;
    Layer l;
    l.name = op.name;
    l.kind = op.kind;
    l.spatial_rank = rank;
    l.in_shape = x;
    l.transfer = op.transfer;
    std::vector<int64_t> y = x;
    double reads = in_elems;

    switch (op.kind) {
      case OpKind::conv:
      case OpKind::depthwise_conv: {
        if (rank < 1) fail(op, "convolution needs a spatial input (did a flatten come before it?)");
        const bool dw = op.kind == OpKind::depthwise_conv;
        const int64_t c_out = dw ? (op.filters > 0 ? op.filters : c_in) : op.filters;
        if (c_out <= 0) fail(op, "filters must be positive");
        const int64_t groups = dw ? c_in : 1;
        const int64_t taps = ipow(op.kernel, rank);
        y[0] = c_out;
        for (int a = 1; a <= rank; ++a) y[a] = window_out(op, x[a], op.kernel);
        l.params = bounded(static_cast<__int128>(c_out) * (c_in / groups) * taps + (op.bias ? c_out : 0));
        l.param_tensors = op.bias ? 2 : 1;
        // MACs x 2 per output element (e.g. Goodfellow et al. ch. 9); backward = dgrad + wgrad.
        l.fwd_flops = 2.0 * static_cast<double>(c_in / groups) * taps * static_cast<double>(product(y)) * batch;
        l.bwd_flops = 2.0 * l.fwd_flops;
        break;
      }
      case OpKind::transposed_conv: {
        if (rank < 1) fail(op, "transposed convolution needs a spatial input");
        if (op.filters <= 0) fail(op, "filters must be positive");
        const int64_t taps = ipow(op.kernel, rank);
        const int64_t pad = op.padding < 0 ? 0 : op.padding;
        y[0] = op.filters;
        // PyTorch ConvTranspose: (in-1)*s - 2p + d(k-1) + output_padding + 1
        for (int a = 1; a <= rank; ++a)
          y[a] = (x[a] - 1) * op.stride - 2 * pad + op.dilation * (op.kernel - 1) + op.output_padding + 1;
        l.params = bounded(static_cast<__int128>(c_in) * op.filters * taps + (op.bias ? op.filters : 0));
        l.param_tensors = op.bias ? 2 : 1;
        l.fwd_flops = 2.0 * static_cast<double>(c_in) * op.filters * taps * static_cast<double>(product(x, 1)) * batch;
        l.bwd_flops = 2.0 * l.fwd_flops;
        break;
      }
      case OpKind::max_pool:
      case OpKind::avg_pool: {
        if (rank < 1) fail(op, "pooling needs a spatial input");
        const int64_t stride = op.stride > 1 ? op.stride : op.kernel;
        for (int a = 1; a <= rank; ++a) {
          if (op.ceil_mode) {  // PyTorch's ceil_mode: a window that starts inside the input counts
            const int64_t n = x[a] - op.kernel + stride - 1;
            y[a] = (n >= 0 ? n / stride : -((-n + stride - 1) / stride)) + 1;  // floor division
            if ((y[a] - 1) * stride >= x[a]) --y[a];
            continue;
          }
          if (x[a] < op.kernel)
            fail(op, fmt::format("input extent {} is smaller than the pooling window {} (too many pooling stages for this input size)", x[a], op.kernel));
          y[a] = (x[a] - op.kernel) / stride + 1;
        }
        l.fwd_flops = static_cast<double>(product(y)) * batch * static_cast<double>(ipow(op.kernel, rank));
        l.bwd_flops = l.fwd_flops;
        break;
      }
      case OpKind::global_avg_pool:
        for (int a = 1; a <= rank; ++a) y[a] = 1;
        l.fwd_flops = in_elems;
        l.bwd_flops = in_elems;
        break;
      case OpKind::batch_norm:
      case OpKind::affine:
        l.params = 2 * c_in;
        l.param_tensors = 2;
        // normalise + scale + shift per element, statistics pass; backward roughly twice that.
        l.fwd_flops = 4.0 * in_elems;
        l.bwd_flops = 8.0 * in_elems;
        break;
      case OpKind::activation:
      case OpKind::dropout:
        l.fwd_flops = in_elems;
        l.bwd_flops = in_elems;
        break;
      case OpKind::flatten:
        y = {product(x)};
        break;
      case OpKind::linear: {
        if (op.filters <= 0) fail(op, "filters (output features) must be positive");
        const int64_t f_in = product(x);
        y = {op.filters};
        l.spatial_rank = 0;
        l.params = bounded(static_cast<__int128>(f_in) * op.filters + (op.bias ? op.filters : 0));
        l.param_tensors = op.bias ? 2 : 1;
        l.fwd_flops = 2.0 * static_cast<double>(f_in) * op.filters * batch;
        l.bwd_flops = 2.0 * l.fwd_flops;
        break;
      }
      case OpKind::upsample:
        if (op.factor < 1) fail(op, "factor must be >= 1");
        for (int a = 1; a <= rank; ++a) y[a] = x[a] * op.factor;
        l.fwd_flops = static_cast<double>(product(y)) * batch;
        l.bwd_flops = l.fwd_flops;
        break;
      case OpKind::tile: {
        if (ins.size() != 2) fail(op, "tile takes two inputs: the map to tile and the op whose size it takes");
        const auto& ref = ins[1];
        if (ref.size() != x.size()) fail(op, "tile inputs have different ranks");
        for (int a = 1; a <= rank; ++a) y[a] = ref[a];
        l.fwd_flops = static_cast<double>(product(y)) * batch;
        l.bwd_flops = l.fwd_flops;
        reads = in_elems;
        break;
      }
      case OpKind::concat: {
        if (ins.size() < 2) fail(op, "concat takes at least two inputs");
        y[0] = 0;
        reads = 0;
        for (const auto& in : ins) {
          if (in.size() != x.size() || !std::equal(in.begin() + 1, in.end(), x.begin() + 1))
            fail(op, fmt::format("concat inputs differ in spatial size ({} and {}): the input size (at this resolution) must "
                                 "divide by every stride on the way to this op",
                                 fmt::join(std::vector<int64_t>(in.begin() + 1, in.end()), "x"),
                                 fmt::join(std::vector<int64_t>(x.begin() + 1, x.end()), "x")));
          y[0] += in[0];
          reads += static_cast<double>(product(in)) * batch;
        }
        break;
      }
      case OpKind::add: {
        if (ins.size() < 2) fail(op, "add takes at least two inputs");
        for (const auto& in : ins)
          if (in != x) fail(op, "add inputs differ in shape");
        reads = in_elems * static_cast<double>(ins.size());
        l.fwd_flops = in_elems * static_cast<double>(ins.size() - 1);
        l.bwd_flops = in_elems;
        break;
      }
    }
    for (auto v : y)
      if (v < 1) fail(op, "produces an empty output (input too small)");
    l.out_shape = y;
    l.bytes_read = reads * element_bytes + static_cast<double>(l.params) * 4.0;
    l.bytes_written = static_cast<double>(product(y)) * batch * element_bytes;
    shapes[op.name] = y;
    last = y;
    table.layers.push_back(std::move(l));
  }
};

}  // namespace

int64_t LayerTable::total_params() const {
  int64_t s = 0;
  for (const auto& l : layers) s += l.params;
  return s;
}

int64_t LayerTable::total_param_tensors() const {
  int64_t s = 0;
  for (const auto& l : layers) s += l.param_tensors;
  return s;
}

double LayerTable::total_fwd_flops() const {
  double s = 0;
  for (const auto& l : layers) s += l.fwd_flops;
  return s;
}
double LayerTable::total_bwd_flops() const {
  double s = 0;
  for (const auto& l : layers) s += l.bwd_flops;
  return s;
}
double LayerTable::activation_bytes() const {
  double s = 0;
  for (const auto& l : layers) s += l.bytes_written;
  return s;
}

std::vector<int64_t> coarsened_spatial(const NetworkSpec& spec, int64_t factor) {
  if (factor < 1) fail_input(spec.name, "resolution", fmt::format("factor must be >= 1, got {}", factor));
  std::vector<int64_t> s = spec.input_spatial;
  for (auto& v : s) {
    if (v % factor != 0)
      fail_input(spec.name, "resolution",
                 fmt::format("factor {} does not divide the input size {}", factor, v));
    v /= factor;
  }
  return s;
}

LayerTable resolve(const NetworkSpec& spec, const std::vector<int64_t>& spatial, int64_t batch,
                   double element_bytes, int64_t coarse_output_factor) {
  if (batch < 1) fail_input(spec.name, "batch", "must be >= 1");
  if (spatial.size() != spec.input_spatial.size())
    fail_input(spec.name, "input", fmt::format("expected {} spatial axes, got {}", spec.input_spatial.size(), spatial.size()));
  Builder b{spec, batch, element_bytes, {}, {}, {}};
  std::vector<int64_t> in{spec.input_channels};
  in.insert(in.end(), spatial.begin(), spatial.end());
  b.shapes["input"] = in;
  b.last = in;
  b.table.workload = spec.name;
  b.table.input_shape = in;
  b.table.batch = batch;
  b.table.element_bytes = element_bytes;
  b.table.sample_bytes_on_disk = static_cast<double>(product(in)) * static_cast<double>(spec.sample_bytes_per_element);
  const double dense_pixels = static_cast<double>(product(spec.input_spatial));
  b.table.label_bytes_on_disk =
      (spec.labels_scale_with_resolution ? dense_pixels : 1.0) * static_cast<double>(spec.label_elements) * 4.0;
  b.table.samples_per_file = static_cast<double>(spec.samples_per_file);
  for (const auto& op : spec.ops) {
    if (b.shapes.count(op.name)) fail_input(spec.name, "ops." + op.name, "duplicate op name");
    b.add(op);
  }
  if (coarse_output_factor > 1) {
    Op up;
    up.name = "coarse_output_upsample";
    up.kind = OpKind::upsample;
    up.factor = coarse_output_factor;
    b.add(up);
  }
  return std::move(b.table);
}

}  // namespace mrplan
