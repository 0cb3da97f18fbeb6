#pragma once
// `calibrate io`'s measurements on a dataset folder: cold reads (pages dropped with
// posix_fadvise), warm reads by 1..n threads, host preprocessing and copy rates. Torch-free.
#include <functional>
#include <string>
#include <vector>

#include "model/microbench_samples.hpp"

namespace mrplan {

struct IoBenchOptions {
  std::string data_dir;
  std::string workload = "cosmoflow-mrt";  // picks the file layout
  int max_threads = 0;                     // 0: the cores
  int warm_samples = 256;
  int max_files = 8;                       // cold reads touch at most this many files
  int cold_repeats = 3;                    // cold reads per size and file; the median is kept
  std::vector<Codec> codecs;               // byte codecs to encode samples with and time decoding
  int codec_samples = 8, codec_passes = 5;
};

IoMeasurements measure_io(const IoBenchOptions& options, const std::function<void(const std::string&)>& progress = {});

}  // namespace mrplan
