#pragma once
// Gradient averaging as PyTorch DDP does it (Li et al., VLDB 2020): parameters in reverse
// registration order are packed into ~25 MB buckets; a bucket's allreduce starts on a comm thread
// as soon as backward has produced all of its gradients, overlapping the rest of backward.
// The communicator must take the parameters' memory: MPI for CPU tensors, NCCL for CUDA tensors.
// exec-internal: includes torch.
#include <torch/torch.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "exec/communicator.hpp"

namespace mrplan {

// A sync's hooks live as long as it does: a model trained on (a new sync over other parameters, as
// transfer learning's frozen layers thaw) calls none of an earlier sync's.
class GradSync {
 public:
  GradSync(std::vector<torch::Tensor> params, Communicator& comm, double bucket_bytes);
  ~GradSync();
  GradSync(const GradSync&) = delete;
  GradSync& operator=(const GradSync&) = delete;

  void begin_step();          // before backward
  void finish_step();         // after backward: waits for the allreduces, writes averaged grads (the caller times it)
  int buckets() const { return static_cast<int>(buckets_.size()); }
  double bytes_per_step() const;

 private:
  struct Bucket {
    std::vector<size_t> params;   // indices into params_
    std::vector<int64_t> offsets;  // element offset of each parameter in `flat`
    torch::Tensor flat;  // on the parameters' device (CUDA buffers go to an NCCL communicator)
    std::atomic<int> pending{0};
    bool done = false;
  };
  void comm_loop();
  std::vector<torch::Tensor> params_;
  std::vector<unsigned> hooks_;  // params_[k]'s hook: removed with the sync, so that none calls into a sync that is gone
  Communicator& comm_;
  std::vector<std::unique_ptr<Bucket>> buckets_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Bucket*> ready_;
  int completed_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

// Rank 0's parameters and buffers to every rank (start of training, after a transfer).
void broadcast_module(torch::nn::Module& module, Communicator& comm);

}  // namespace mrplan
