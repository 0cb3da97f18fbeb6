#include "exec/loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "exec/hdf5_file.hpp"
#include "model/errors.hpp"

namespace mrplan {

namespace {
std::mutex hdf5_mutex;  // the serial HDF5 library is not thread-safe
}

SampleStore::SampleStore(const std::string& dir, const DataLayout& layout) : files_(list_h5_files(dir)), layout_(layout) {
  std::lock_guard<std::mutex> lock(hdf5_mutex);
  std::vector<uint64_t> ref;
  for (const auto& f : files_) {
    H5File h5(f, H5File::Mode::read);
    const auto d = h5.dims(layout.data);
    const auto l = h5.dims(layout.labels);
    if (d.size() != static_cast<size_t>(layout.spatial_axes + 2))
      fail_input(f, layout.data, fmt::format("expected {} axes (n, spatial..., channels), got {}", layout.spatial_axes + 2, d.size()));
    if (l.empty() || l[0] != d[0])
      fail_input(f, layout.labels, fmt::format("has {} rows but {} has {}", l.empty() ? 0 : l[0], layout.data, d[0]));
    if (ref.empty()) ref = d;
    else if (!std::equal(d.begin() + 1, d.end(), ref.begin() + 1))
      fail_input(f, layout.data, "sample shape differs from the first file's");
    first_.push_back(total_);
    total_ += static_cast<int64_t>(d[0]);
    label_size_ = l.size() > 1 ? static_cast<int64_t>(l[1]) : 1;
  }
  open_.resize(files_.size());
  shape_ = {static_cast<int64_t>(ref.back())};
  for (int a = 1; a <= layout.spatial_axes; ++a) shape_.push_back(static_cast<int64_t>(ref[a]));
}

void SampleStore::read(int64_t id, float* x, float* y) const {
  const auto it = std::upper_bound(first_.begin(), first_.end(), id) - 1;
  const size_t f = static_cast<size_t>(it - first_.begin());
  const int64_t row = id - *it;
  int64_t elems = 1;
  for (auto v : shape_) elems *= v;
  std::vector<float> raw(static_cast<size_t>(elems));
  {
    std::lock_guard<std::mutex> lock(hdf5_mutex);
    if (!open_[f]) open_[f] = std::make_unique<H5File>(files_[f], H5File::Mode::read);
    open_[f]->read_rows(layout_.data, row, 1, raw.data());
    open_[f]->read_rows(layout_.labels, row, 1, y);
  }
  // channel-last on disk -> channel-first for the network
  const int64_t C = shape_[0], V = elems / C;
  for (int64_t v = 0; v < V; ++v)
    for (int64_t c = 0; c < C; ++c) {
      const float val = raw[v * C + c];
      if (!std::isfinite(val)) fail_input(files_[f], layout_.data, fmt::format("row {} holds NaN or infinity", row));
      x[c * V + v] = val;
    }
  for (int64_t k = 0; k < label_size_; ++k)
    if (!(y[k] >= -1.f && y[k] <= 1.f))
      fail_input(files_[f], layout_.labels, fmt::format("row {} label {} = {} is outside [-1, 1]", row, k, y[k]));
}

std::vector<int64_t> restricted_shuffle(int64_t n_train, int rank, int ranks, int local_batch, uint64_t seed, int epoch) {
  const int64_t group = n_train / ranks;
  const int64_t iters = group / local_batch;
  std::mt19937_64 shared(seed * 1000003ULL + static_cast<uint64_t>(epoch));
  std::vector<int> owner(ranks);
  std::iota(owner.begin(), owner.end(), 0);
  std::shuffle(owner.begin(), owner.end(), shared);  // same permutation on every rank
  const int64_t g = owner[rank];
  std::vector<int64_t> ids(static_cast<size_t>(group));
  std::iota(ids.begin(), ids.end(), g * group);
  std::mt19937_64 local(seed * 7919ULL + static_cast<uint64_t>(epoch) * 104729ULL + static_cast<uint64_t>(g));
  std::shuffle(ids.begin(), ids.end(), local);
  ids.resize(static_cast<size_t>(iters * local_batch));
  return ids;
}

Prefetcher::Prefetcher(const SampleStore& store, std::vector<int64_t> ids, int batch, int depth, bool keep_partial)
    : store_(store),
      ids_(std::move(ids)),
      batch_(batch),
      depth_(std::max(1, depth)),
      keep_partial_(keep_partial),
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
      std::vector<int64_t> xs{n};
      xs.insert(xs.end(), store_.sample_shape().begin(), store_.sample_shape().end());
      Batch b{torch::empty(xs), torch::empty({n, store_.label_size()})};
      float* x = b.x.data_ptr<float>();
      float* y = b.y.data_ptr<float>();
      for (int64_t i = 0; i < n; ++i) store_.read(ids_[start + static_cast<size_t>(i)], x + i * per, y + i * store_.label_size());
      if (store_.layout().log1p) b.x.log1p_();
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
