#pragma once
// The samples of a folder of HDF5 files, read one at a time with their checks. Torch-free, so that
// the readers can be fuzzed without it (tests/fuzz/sample_store_fuzz.cpp).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exec/data_layout.hpp"
#include "exec/hdf5_file.hpp"
#include "exec/sample_codec.hpp"

namespace mrplan {

// Every sample of a folder of HDF5 files, by global id (files in name order), stored raw, deflated
// or encoded (exec/encode_dataset.hpp: the codec is read from the files, one for the folder).
class SampleStore {
 public:
  // `copy_dir`: where a node staged its share of `dir`'s files (exec/node_share.hpp): the index is
  // `dir`'s, the samples are read from the copies, and a file outside the share is an error.
  SampleStore(const std::string& dir, const DataLayout& layout, const std::string& copy_dir = "");
  int64_t size() const { return total_; }
  const std::vector<std::string>& files() const { return files_; }  // in name order
  size_t file_of(int64_t id) const { return locate(id).first; }
  const std::vector<int64_t>& sample_shape() const { return shape_; }  // channel-first {C, spatial...}
  const std::vector<int64_t>& label_shape() const { return label_shape_; }  // per sample
  int64_t label_size() const { return label_size_; }
  const DataLayout& layout() const { return layout_; }
  Codec codec() const { return codec_; }
  // Whether read() has applied the layout's log1p already (a codec does it on unique values);
  // otherwise the prefetcher applies it to the whole batch.
  bool preprocesses() const { return encoded(); }
  bool encoded() const { return decoder_ != nullptr; }  // a byte codec's samples (lut, diff)
  // Reads one sample (transposed to channel-first, min-max normalised where the layout says) and
  // its labels; refuses NaN, regression labels outside [-1, 1] and segmentation labels that are
  // not class numbers, naming the file, dataset and row.
  void read(int64_t id, float* x, float* y) const;
  // Only the labels of one sample, checked as read() checks them (class weights need no fields).
  void read_labels(int64_t id, float* y) const;

  // An encoded sample as read() has it before decoding, for a decoder elsewhere (the GPU's:
  // exec/device_decoder.hpp): its bytes, shape, name, and where it lies for the checks' messages.
  struct Encoded {
    std::vector<uint8_t> bytes;
    SampleShape shape;
    std::string where;
    size_t file = 0;
    int64_t row = 0;
  };
  // Encoded folders only (encoded()); the labels as read() reads them.
  Encoded read_encoded(int64_t id, float* y) const;
  // What read() does to the values of `e` (checks naming its file and row, the layout's
  // preprocessing); valid while the store is.
  ValuePipeline pipeline(const Encoded& e) const;

 private:
  std::vector<std::string> files_;
  std::string copy_dir_;
  mutable std::vector<std::unique_ptr<H5File>> open_;  // opened on first read, kept open
  std::vector<int64_t> first_;  // first global id of each file
  DataLayout layout_;
  int64_t total_ = 0, label_size_ = 0;
  std::vector<int64_t> shape_, label_shape_;
  std::vector<float> shift_, scale_;  // min-max: x' = (x - shift) * scale per channel
  Codec codec_ = Codec::raw;
  std::unique_ptr<SampleCodec> decoder_;          // byte codecs only
  std::vector<std::vector<uint64_t>> offsets_;    // per file: each sample's first byte, and the end

  std::pair<size_t, int64_t> locate(int64_t id) const;  // file index and row in it
  std::vector<uint64_t> stored_dims(const H5File& h5, size_t file);  // as the raw dataset's would be
  void check_value(size_t file, int64_t row, float value) const;
  const H5File& opened(size_t file) const;               // call with hdf5_mutex held
  std::string read_path(size_t file) const;              // the file, or its node's copy
  void check_labels(size_t file, int64_t row, const float* y) const;
};

// How the folder's samples are stored (its first file says; SampleStore checks the others).
Codec folder_codec(const std::string& dir, const DataLayout& layout);

// log1p in place as the loader's batches apply it (torch's own, defined in exec/loader.cpp): a codec
// that preprocesses its unique values calls it, so that both paths agree bit for bit.
void batch_log1p(float* values, size_t n);

}  // namespace mrplan
