#pragma once
// A network described op by op, independent of resolution and batch: the form a workload YAML
// file takes and the form the built-in networks are written in. resolve() turns it into a
// LayerTable at a given input size.
#include <cstdint>
#include <string>
#include <vector>

namespace mrplan {

enum class OpKind {
  conv,            // Conv{1,2,3}d, dimensionality from the input's spatial rank
  depthwise_conv,  // groups == input channels
  transposed_conv,
  max_pool,
  avg_pool,
  global_avg_pool,  // AdaptiveAvgPool to 1 per spatial axis
  batch_norm,
  affine,      // per-channel scale and shift without statistics (DeepCAM's TrainableAffine)
  activation,  // relu, leaky_relu, tanh, ...: elementwise
  dropout,
  linear,
  flatten,
  upsample,  // nearest neighbour, integer factor
  tile,      // broadcast a 1x1 map back to the size of another op's output
  concat,    // along channels
  add,       // elementwise sum of several inputs (skip connections)
};

const char* to_string(OpKind kind);
OpKind op_kind_from_string(const std::string& name);  // throws std::invalid_argument

struct Op {
  std::string name;               // unique within the spec
  OpKind kind = OpKind::activation;
  std::vector<std::string> from;  // inputs; empty = the previous op (or the network input)
  int64_t filters = 0;            // conv/linear output channels or features
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t padding = -1;           // -1 = 'same' (output = ceil(in/stride)); >=0 explicit, symmetric
  int64_t output_padding = 0;     // transposed conv
  int64_t factor = 1;             // upsample factor
  bool bias = false;
  std::string function;           // activation: relu, leaky_relu, tanh; pooling is in kind
  double rate = 0;                // dropout probability; leaky_relu negative slope
  bool transfer = true;           // MRT: copied coarse -> dense (false: re-initialised)
  bool ceil_mode = false;         // pooling: a last, partial window counts (PyTorch ceil_mode); an extent
                                  // below the window keeps one cell instead of failing
  int64_t min_size = 0;           // left out when the dense input's first extent is below this
                                  // (workload_options.size: small inputs afford fewer poolings)
  bool fixed_filters = false;     // workload_options.width leaves this convolution's filters alone
};

struct NetworkSpec {
  std::string name;
  int64_t input_channels = 1;
  std::vector<int64_t> input_spatial;  // at resolution factor 1 (dense)
  int64_t sample_bytes_per_element = 4;  // on disk
  int64_t label_elements = 1;            // per sample (per pixel labels count every pixel)
  int64_t samples_per_file = 1;          // how the dataset is stored: each file opened costs a latency
  bool labels_scale_with_resolution = false;  // segmentation masks: labels are per pixel
  bool coarse_upsamples_output = false;       // fully convolutional: add nearest upsample on coarse
  // MRMF: the last op of the bottom layer group; the ops after it form the top group, which holds
  // the layers whose size depends on the resolution (MRMF Fig. 1). Empty: the network cannot fuse.
  std::string fusion_split_after;
  std::vector<Op> ops;
};

}  // namespace mrplan
