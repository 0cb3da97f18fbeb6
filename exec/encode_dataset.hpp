#pragma once
// `mrplan encode`: an encoded copy of a dataset (preprocessing paper): every sample file with its
// samples stored by a codec, the codec named in the data dataset's attributes, labels and other
// datasets copied as they are. `mrplan run` reads the copy unchanged. No torch here.
#include <cstdint>
#include <string>
#include <vector>

#include "exec/sample_codec.hpp"

namespace mrplan {

// Attributes of an encoded data dataset, and the dataset of its samples' byte offsets.
inline constexpr const char* kCodecAttribute = "mrplan_codec";
inline constexpr const char* kSampleDimsAttribute = "mrplan_sample_dims";  // one sample, channel-last
inline std::string offsets_dataset(const std::string& data) { return data + "_offsets"; }

class H5File;
struct DataLayout;

// One sample's shape from the dims of a raw data dataset (a sample axis first where the layout's
// files hold several); InputError without spatial axes and channels.
SampleShape raw_sample_shape(const std::vector<uint64_t>& dims, const DataLayout& layout, const std::string& file);
// InputError unless the layout's data in `h5` is stored raw; `then` says what to do instead.
void require_raw(const H5File& h5, const DataLayout& layout, const std::string& then);

struct EncodeOptions {
  std::string in_dir, out_dir;  // a dataset folder, or a folder of res{K}/ dataset folders
  Codec codec = Codec::lut;  // lut for CosmoFlow, diff for DeepCAM
  std::string workload;  // which dataset holds the samples; empty: the files' own (data_layout workload_of_file)
  int deflate_level = 6;                   // zlib's default
  unsigned threads = 0;                    // 0: all cores
  bool progress = true;
};
struct EncodeReport {
  int files = 0;
  int64_t samples = 0;
  double sample_bytes_in = 0, sample_bytes_out = 0;  // the samples alone, as stored
  // a lossy codec's error, each value decoded against the original (FP32, before the reader's preprocessing)
  int64_t values = 0, values_off_10pct = 0;  // |error| > 10% of |value|
  double max_abs_error = 0;
  // the lookup tables' sizes summed over the samples (preprocessing paper, Fig. 5: a few hundred
  // unique values and tens of thousands of four-channel groups in a real 128^3 sample)
  int64_t lut_values = 0, lut_groups = 0;
  double seconds = 0;
};
EncodeReport encode_dataset(const EncodeOptions& options);

}  // namespace mrplan
