#pragma once
// What the microbenchmarks measure: exec times them (`calibrate compute`, `sharing`, `io`),
// calibrate fits the profile to them. Plain data, so that neither layer needs the other.
#include <cstdint>
#include <string>
#include <vector>

#include "model/codec.hpp"
#include "model/layer_table.hpp"
#include "model/optimizers.hpp"

namespace mrplan {

// ---- calibrate compute: ops timed alone, optimizer steps, whole steps

struct OpTimingSample {
  Layer layer;         // resolved at the batch it ran at
  double fwd_s = 0;
  double bwd_s = 0;
  std::string context;  // e.g. "cosmoflow-mrt 16x16x16 batch 4", for tables and plots
};

struct OptimizerTiming {
  Optimizer optimizer = Optimizer::adam;
  int64_t params = 0;
  double seconds = 0;
  std::string context;
  int64_t param_tensors = 0;
};

// One whole training step (zero_grad, forward, loss, backward, optimizer) of a configuration whose
// ops were timed alone under the same `context`, split as the trainer splits it (exec/step_clock).
struct WholeStepTiming {
  std::string context;
  Optimizer optimizer = Optimizer::adam;
  int64_t params = 0;
  double seconds = 0;  // median of the repeats
  double spread = 0;   // step-to-step standard deviation / mean (from back-to-back pairs, drift left out)
  double forward_s = 0, backward_s = 0, optimizer_s = 0;  // each phase's median
  int64_t param_tensors = 0;
  // A fresh network and optimizer's first two steps on a heap given back to the kernel, as a new
  // process starts a stage, and the bytes they touched for the first time (0: not timed)
  double first_steps_s = 0, first_touch_bytes = 0;
  double activation_bytes = 0;  // LayerTable::activation_bytes of the configuration
  double inference_s = 0;       // median forward in eval mode without autograd, as validation runs it (0: not timed)
  double captured_s = 0;        // median step captured as a CUDA graph, fused Adam (exec/captured_step; 0: not timed)
};

// ---- calibrate sharing: ranks of one node stepping at once

struct NodeSharingTiming {
  std::string context;    // workload, resolution and batch
  int ranks = 1;          // ranks training at once in the shared timing
  double alone_s = 0;     // a step's compute on one rank while the others sleep (median of repeats)
  double shared_s = 0;    // the same with every rank stepping and averaging gradients (mean over ranks)
  double allreduce_s = 0; // the step's gradients allreduced alone, with no compute beside it
  double shared_wait_s = 0;  // in the shared steps, the wait for the allreduces after backward (mean)
  int rounds = 0;            // timed lone and shared steps behind the medians
};

// ---- calibrate io: cold and warm reads, the reader, codecs

struct ColdRead {
  double bytes = 0;    // read after the file's pages were dropped, file opened fresh
  double seconds = 0;
};

struct WarmRate {
  int threads = 1;
  double bytes_per_s = 0;  // all threads together: the files' bytes back from the page cache
};

// One codec on samples of the dataset (`calibrate io --codec`): its ratio and decode passes.
struct CodecMeasurement {
  Codec codec = Codec::lut;
  double ratio = 1;                     // raw bytes on disk / encoded bytes
  std::vector<double> decode_bytes_per_s;  // raw bytes emitted per second, one thread, one per pass
  std::vector<double> device_decode_bytes_per_s;  // the same on the GPU, kernels only; empty: no GPU here
};

struct IoMeasurements {
  std::vector<ColdRead> cold;
  std::vector<WarmRate> warm;
  double reader_bytes_per_s = 0;  // the raw samples through the loader's reader from the page cache, one
                                  // thread (conversion, transposition, checks: more than the bytes)
  double decode_bytes_per_s = 0;  // host preprocessing (log1p), one thread
  double copy_bytes_per_s = 0;    // a host copy of a batch (the CPU stand-in for host-to-device)
  std::string tier_name = "local disk";
  std::vector<CodecMeasurement> codecs;
};

}  // namespace mrplan
