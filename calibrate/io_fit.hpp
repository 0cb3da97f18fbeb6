#pragma once
// `calibrate io`: per-file latency and bandwidth of the storage tier (cold reads), page-cache
// read rate by reader threads (warm), host preprocessing and copy rates -> the profile's io.
#include <string>
#include <vector>

#include "model/machine_profile.hpp"
#include "model/microbench_samples.hpp"

namespace mrplan {

struct IoFit {
  double per_file_latency_s = 0, latency_std_error_s = 0;
  double bandwidth_Bps = 0, bandwidth_std_error_Bps = 0;
  double r2 = 0;
  double page_cache_Bps = 0;  // per node: the best warm rate over the thread counts
  int page_cache_threads = 1;
  // What the raw path costs per byte beyond reading it (the reader's work over the bytes' own, then
  // the preprocessing), what a codec's decoder replaces: 1 / (1/reader - 1/page cache + 1/decode).
  double raw_decode_Bps = 0;
};

// Cold reads: weighted least squares of t = latency + bytes / bandwidth (weights 1/t^2).
IoFit fit_io(const IoMeasurements& m);

// `ranks_per_node` ranks share the page-cache rate; cold storage stands in for the file system.
void apply_io_fit(MachineProfile& profile, const IoMeasurements& m, const IoFit& fit, const std::string& source);

}  // namespace mrplan
