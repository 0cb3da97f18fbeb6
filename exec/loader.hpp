#pragma once
// Samples from HDF5 files, the MRT paper's restricted shuffling, and a background prefetcher
// with a bounded queue. exec-internal: includes torch.
#include <torch/torch.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "exec/data_layout.hpp"
#include "exec/hdf5_file.hpp"
#include "exec/sample_codec.hpp"

namespace mrplan {

// Every sample of a folder of HDF5 files, by global id (files in name order), stored raw, deflated
// or encoded (exec/encode_dataset.hpp: the codec is read from the files, one for the folder).
class SampleStore {
 public:
  SampleStore(const std::string& dir, const DataLayout& layout);
  int64_t size() const { return total_; }
  const std::vector<int64_t>& sample_shape() const { return shape_; }  // channel-first {C, spatial...}
  const std::vector<int64_t>& label_shape() const { return label_shape_; }  // per sample
  int64_t label_size() const { return label_size_; }
  const DataLayout& layout() const { return layout_; }
  Codec codec() const { return codec_; }
  // Whether read() has applied the layout's log1p already (a codec does it on unique values);
  // otherwise the prefetcher applies it to the whole batch.
  bool preprocesses() const { return decoder_ != nullptr; }
  // Reads one sample (transposed to channel-first, min-max normalised where the layout says) and
  // its labels; refuses NaN, regression labels outside [-1, 1] and segmentation labels that are
  // not class numbers, naming the file, dataset and row.
  void read(int64_t id, float* x, float* y) const;
  // Only the labels of one sample, checked as read() checks them (class weights need no fields).
  void read_labels(int64_t id, float* y) const;

 private:
  std::vector<std::string> files_;
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
  void check_labels(size_t file, int64_t row, const float* y) const;
};

// How the folder's samples are stored (its first file says; SampleStore checks the others).
Codec folder_codec(const std::string& dir, const DataLayout& layout);

// MRT III-D: N training samples in P groups; each epoch the groups are shuffled across ranks
// and a rank draws its local batches from its own group. Returns this rank's ids, batch after
// batch (iterations * local_batch of them), the same on every run for (seed, epoch).
std::vector<int64_t> restricted_shuffle(int64_t n_train, int rank, int ranks, int local_batch, uint64_t seed, int epoch);

struct Batch {
  torch::Tensor x, y;
};

// Batches the trainer has let go, refilled rather than allocated again: a loader that allocates
// every batch keeps growing its heap for a first epoch, and each 4 MB of fresh pages it faulted
// in slowed the trainer's step by 12 ms on a 2-core VM. One per stage (one batch shape), kept
// across its epochs' prefetchers; it holds at most `capacity` batches and allocates beyond that.
class BatchPool {
 public:
  explicit BatchPool(size_t capacity) : capacity_(capacity) {}
  // A pooled batch of these shapes that no Batch, view or autograd record refers to any more, else a
  // new one. Reference counts cannot see a copy still in flight: copies to a device must be blocking
  // (as the trainer's are) or be waited for before the batch is let go.
  Batch take(const std::vector<int64_t>& x_shape, const std::vector<int64_t>& y_shape);

 private:
  std::mutex mu_;
  size_t capacity_;
  std::vector<Batch> batches_;
};

// Produces batches of `ids` on a background thread, `depth` ahead, preprocessed as the layout says
// (log1p for CosmoFlow). Training drops a last partial batch (drop_last); validation keeps it.
// Full batches come from `pool` where one is given.
class Prefetcher {
 public:
  Prefetcher(const SampleStore& store, std::vector<int64_t> ids, int batch, int depth, bool keep_partial = false,
             BatchPool* pool = nullptr);
  ~Prefetcher();
  std::optional<Batch> next();  // nullopt when the ids are used up; rethrows reader errors

 private:
  void run();
  const SampleStore& store_;
  std::vector<int64_t> ids_;
  int batch_, depth_;
  bool keep_partial_;
  BatchPool* pool_;
  std::deque<Batch> queue_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace mrplan
