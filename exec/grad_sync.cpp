#include "exec/grad_sync.hpp"

namespace mrplan {

GradSync::GradSync(std::vector<torch::Tensor> params, Communicator& comm, double bucket_bytes)
    : params_(std::move(params)), comm_(comm) {
  if (!params_.empty() && params_.front().is_cuda() != comm_.device_memory() && comm_.size() > 1)
    throw std::runtime_error(params_.front().is_cuda() ? "CUDA parameters need the NCCL communicator"
                                                       : "CPU parameters need the MPI communicator");
  auto bucket = std::make_unique<Bucket>();
  int64_t size = 0;
  for (size_t k = params_.size(); k-- > 0;) {
    const auto& p = params_[k];
    bucket->params.push_back(k);
    bucket->offsets.push_back(size);
    size += p.numel();
    if (static_cast<double>(size) * 4.0 >= bucket_bytes || k == 0) {
      bucket->flat = torch::zeros({size}, p.options().dtype(torch::kFloat32));
      buckets_.push_back(std::move(bucket));
      bucket = std::make_unique<Bucket>();
      size = 0;
    }
  }
  if (comm_.size() == 1) return;  // nothing to average: no hooks, no thread
  hooks_.resize(params_.size());
  for (auto& b : buckets_) {
    Bucket* bp = b.get();
    for (size_t j = 0; j < bp->params.size(); ++j) {
      const int64_t off = bp->offsets[j];
      hooks_[bp->params[j]] = params_[bp->params[j]].register_hook([this, bp, off](torch::Tensor g) {
        bp->flat.narrow(0, off, g.numel()).copy_(g.reshape({-1}));
        if (bp->pending.fetch_sub(1) == 1) {
          std::lock_guard<std::mutex> lock(mu_);
          ready_.push_back(bp);
          cv_.notify_all();
        }
      });
    }
  }
  thread_ = std::thread([this] { comm_loop(); });
}

GradSync::~GradSync() {
  for (size_t k = 0; k < hooks_.size(); ++k) params_[k].remove_hook(hooks_[k]);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

double GradSync::bytes_per_step() const {
  double b = 0;
  for (const auto& x : buckets_) b += static_cast<double>(x->flat.numel()) * 4.0;
  return b;
}

void GradSync::comm_loop() {
  const float inv = 1.0f / static_cast<float>(comm_.size());
  for (;;) {
    Bucket* b = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !ready_.empty(); });
      if (stop_ && ready_.empty()) return;
      b = ready_.front();
      ready_.pop_front();
    }
    try {
      comm_.allreduce_sum(b->flat.data_ptr<float>(), static_cast<size_t>(b->flat.numel()));
      b->flat.mul_(inv);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mu_);
    b->done = true;
    ++completed_;
    cv_.notify_all();
  }
}

void GradSync::begin_step() {
  if (comm_.size() == 1) return;
  std::lock_guard<std::mutex> lock(mu_);
  completed_ = 0;
  for (auto& b : buckets_) {
    b->pending = static_cast<int>(b->params.size());
    b->done = false;
  }
}

void GradSync::finish_step() {
  if (comm_.size() == 1) return;
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return completed_ == static_cast<int>(buckets_.size()) || error_; });
    if (error_) std::rethrow_exception(error_);
  }
  for (auto& b : buckets_)
    for (size_t j = 0; j < b->params.size(); ++j) {
      auto& p = params_[b->params[j]];
      p.mutable_grad().copy_(b->flat.narrow(0, b->offsets[j], p.numel()).view(p.sizes()));
    }
}

void broadcast_module(torch::nn::Module& module, Communicator& comm) {
  if (comm.size() == 1) return;
  torch::NoGradGuard ng;
  auto send = [&](torch::Tensor t) {
    if (t.scalar_type() != torch::kFloat32) {  // e.g. BatchNorm's num_batches_tracked
      auto f = t.to(torch::kFloat32).contiguous();
      comm.broadcast(f.data_ptr<float>(), static_cast<size_t>(f.numel()), 0);
      t.copy_(f);
      return;
    }
    auto c = t.contiguous();
    comm.broadcast(c.data_ptr<float>(), static_cast<size_t>(c.numel()), 0);
    if (!c.is_same(t)) t.copy_(c);
  };
  for (auto& p : module.parameters()) send(p);
  for (auto& b : module.buffers()) send(b);
}

}  // namespace mrplan
