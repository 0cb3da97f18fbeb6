#pragma once
// Batches of samples from HDF5 files (which ones: exec/sample_ids.hpp) on a background prefetcher
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

#include "exec/sample_ids.hpp"
#include "exec/sample_store.hpp"

namespace mrplan {

struct Batch {
  torch::Tensor x, y;
  std::vector<SampleStore::Encoded> encoded;  // where the samples are left encoded: x is undefined
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
// Full batches come from `pool` where one is given. `encoded`: an encoded folder's samples are
// read, not decoded (a device decoder decodes them where the step runs).
class Prefetcher {
 public:
  Prefetcher(const SampleStore& store, std::vector<int64_t> ids, int batch, int depth, bool keep_partial = false,
             BatchPool* pool = nullptr, bool encoded = false);
  ~Prefetcher();
  std::optional<Batch> next();  // nullopt when the ids are used up; rethrows reader errors

 private:
  void run();
  const SampleStore& store_;
  std::vector<int64_t> ids_;
  int batch_, depth_;
  bool keep_partial_;
  BatchPool* pool_;
  bool encoded_;
  std::deque<Batch> queue_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace mrplan
