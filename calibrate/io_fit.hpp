#pragma once
// `calibrate io`: per-file latency and bandwidth of the storage tier (cold reads), page-cache
// read rate by reader threads (warm), host preprocessing and copy rates -> the profile's io.
#include <string>
#include <vector>

#include "model/machine_profile.hpp"

namespace mrplan {

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
