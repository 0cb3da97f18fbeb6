#pragma once
// A workload at one resolution and batch: per layer its shapes, parameters, FLOPs and bytes.
#include <cstdint>
#include <string>
#include <vector>

#include "model/network_spec.hpp"

namespace mrplan {

struct Layer {
  std::string name;
  OpKind kind = OpKind::activation;
  int spatial_rank = 0;              // 1, 2, 3 for conv1d/2d/3d; 0 after flatten
  std::vector<int64_t> in_shape;     // per sample: {C, spatial...} (first input)
  std::vector<int64_t> out_shape;    // per sample
  int64_t params = 0;
  int64_t param_tensors = 0;          // weight and bias one each: optimizers launch kernels per tensor
  double fwd_flops = 0;              // whole batch
  double bwd_flops = 0;              // whole batch: input gradient + weight gradient
  double bytes_read = 0;             // forward, whole batch, at the compute precision
  double bytes_written = 0;          // forward, whole batch
  bool transfer = true;
};

struct LayerTable {
  std::string workload;
  std::vector<int64_t> input_shape;  // per sample {C, spatial...}
  int64_t batch = 1;
  double element_bytes = 4;          // compute precision of activations
  double sample_bytes_on_disk = 0;
  double label_bytes_on_disk = 0;
  double samples_per_file = 1;       // NetworkSpec's, for the input pipeline
  std::vector<Layer> layers;

  int64_t total_params() const;
  int64_t total_param_tensors() const;
  double total_fwd_flops() const;
  double total_bwd_flops() const;
  double activation_bytes() const;   // sum of forward outputs, whole batch (kept for backward)
};

// Shapes and costs of `spec` at input spatial size `spatial` and batch `batch`.
// `coarse_output_factor` > 1 appends the coarse model's nearest-neighbour upsample (MRT III-B).
LayerTable resolve(const NetworkSpec& spec, const std::vector<int64_t>& spatial, int64_t batch,
                   double element_bytes = 4.0, int64_t coarse_output_factor = 1);

// Spatial size of spec's input at a coarsening factor (1 = dense); throws if it does not divide.
std::vector<int64_t> coarsened_spatial(const NetworkSpec& spec, int64_t factor);

}  // namespace mrplan
