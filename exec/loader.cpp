#include "exec/loader.hpp"

#include <algorithm>
#include <numeric>
#include <random>

namespace mrplan {

void batch_log1p(float* values, size_t n) { torch::from_blob(values, {static_cast<int64_t>(n)}).log1p_(); }

Batch BatchPool::take(const std::vector<int64_t>& x_shape, const std::vector<int64_t>& y_shape) {
  auto free = [](const torch::Tensor& t) { return t.use_count() == 1 && t.storage().use_count() == 1; };
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& b : batches_)
    if (b.x.sizes() == c10::IntArrayRef(x_shape) && b.y.sizes() == c10::IntArrayRef(y_shape) && free(b.x) && free(b.y)) return b;
  Batch b{torch::empty(x_shape), torch::empty(y_shape), {}};
  if (batches_.size() < capacity_) batches_.push_back(b);
  return b;
}

Prefetcher::Prefetcher(const SampleStore& store, std::vector<int64_t> ids, int batch, int depth, bool keep_partial, BatchPool* pool,
                       bool encoded)
    : store_(store),
      ids_(std::move(ids)),
      batch_(batch),
      depth_(std::max(1, depth)),
      keep_partial_(keep_partial),
      pool_(pool),
      encoded_(encoded && store.encoded()),
      thread_([this] { run(); }) {}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Prefetcher::run() {
  try {
    const int64_t per = std::accumulate(store_.sample_shape().begin(), store_.sample_shape().end(), int64_t{1}, std::multiplies<>());
    const size_t bsz = static_cast<size_t>(batch_);
    for (size_t start = 0; start + (keep_partial_ ? 1 : bsz) <= ids_.size(); start += bsz) {
      const int64_t n = static_cast<int64_t>(std::min(bsz, ids_.size() - start));
      std::vector<int64_t> xs{n}, ys{n};
      xs.insert(xs.end(), store_.sample_shape().begin(), store_.sample_shape().end());
      ys.insert(ys.end(), store_.label_shape().begin(), store_.label_shape().end());
      Batch b;
      if (encoded_) {
        b.y = torch::empty(ys);
        for (int64_t i = 0; i < n; ++i)
          b.encoded.push_back(store_.read_encoded(ids_[start + static_cast<size_t>(i)], b.y.data_ptr<float>() + i * store_.label_size()));
      } else {
        b = pool_ && n == static_cast<int64_t>(bsz) ? pool_->take(xs, ys) : Batch{torch::empty(xs), torch::empty(ys), {}};
        float* x = b.x.data_ptr<float>();
        float* y = b.y.data_ptr<float>();
        for (int64_t i = 0; i < n; ++i) store_.read(ids_[start + static_cast<size_t>(i)], x + i * per, y + i * store_.label_size());
        if (store_.layout().normalise == Normalise::log1p && !store_.preprocesses()) b.x.log1p_();
      }
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || static_cast<int>(queue_.size()) < depth_; });
      if (stop_) return;
      queue_.push_back(std::move(b));
      cv_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::current_exception();
  }
  std::lock_guard<std::mutex> lock(mu_);
  done_ = true;
  cv_.notify_all();
}

std::optional<Batch> Prefetcher::next() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !queue_.empty() || done_; });
  if (!queue_.empty()) {
    Batch b = std::move(queue_.front());
    queue_.pop_front();
    cv_.notify_all();
    return b;
  }
  if (error_) std::rethrow_exception(error_);
  return std::nullopt;
}

}  // namespace mrplan
