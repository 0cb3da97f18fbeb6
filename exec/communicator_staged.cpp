// A host-staged communicator: device buffers copied to host memory, reduced over MPI, copied back.
// For ranks that share one GPU, which NCCL refuses (NCCL 2.5+: "Duplicate GPU detected"). No torch
// here: it works on raw pointers, the copies given (CUDA's where the toolkit was found).
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/communicator.hpp"

#ifdef MRPLAN_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace mrplan {

namespace {

class HostStagedCommunicator final : public Communicator {
 public:
  // `owned`: a split's host communicator, which this one keeps alive
  HostStagedCommunicator(Communicator& host, StagingCopies copies, int device, std::unique_ptr<Communicator> owned = nullptr)
      : owned_(std::move(owned)), host_(host), copies_(copies), device_(device) {}
  int rank() const override { return host_.rank(); }
  int size() const override { return host_.size(); }
  int local_rank() const override { return host_.local_rank(); }
  bool device_memory() const override { return true; }
  void allreduce_sum(float* data, size_t count) override { reduce(data, count); }
  void allreduce_sum(double* data, size_t count) override { reduce(data, count); }
  void broadcast(float* data, size_t count, int root) override {
    float* h = staged<float>(count);
    if (rank() == root) copies_.to_host(h, data, count * sizeof(float), device_);
    host_.broadcast(h, count, root);
    if (rank() != root) copies_.to_device(data, h, count * sizeof(float), device_);
  }
  void broadcast_bytes(void* data, size_t bytes, int root) override { host_.broadcast_bytes(data, bytes, root); }
  void allgather_bytes(const void* mine, size_t bytes, void* all) override { host_.allgather_bytes(mine, bytes, all); }
  void barrier() override { host_.barrier(); }
  void quiet_barrier() override { host_.quiet_barrier(); }
  std::unique_ptr<Communicator> split(int color) override {
    auto part = host_.split(color);
    auto& ref = *part;
    return std::make_unique<HostStagedCommunicator>(ref, copies_, device_, std::move(part));
  }

 private:
  template <class T>
  T* staged(size_t count) {
    buffer_.resize(std::max(buffer_.size(), (count * sizeof(T) + sizeof(double) - 1) / sizeof(double)));
    return reinterpret_cast<T*>(buffer_.data());
  }
  template <class T>
  void reduce(T* data, size_t count) {
    T* h = staged<T>(count);
    copies_.to_host(h, data, count * sizeof(T), device_);
    host_.allreduce_sum(h, count);
    copies_.to_device(data, h, count * sizeof(T), device_);
  }
  std::unique_ptr<Communicator> owned_;
  Communicator& host_;
  StagingCopies copies_;
  int device_;
  std::vector<double> buffer_;  // doubles: aligned for either element type
};

#ifdef MRPLAN_HAVE_CUDA
// The caller may be the gradient comm thread, whose current device is not set unless set here.
// cudaMemcpy on the legacy default stream waits for the work LibTorch queued there (as NCCL's
// communicator waits for it), and a copy to the host is done when it returns.
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void cuda_to_host(void* host, const void* device, size_t bytes, int gpu) {
  check(cudaSetDevice(gpu), "cudaSetDevice");
  check(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host (staged collective)");
}
void cuda_to_device(void* device, const void* host, size_t bytes, int gpu) {
  check(cudaSetDevice(gpu), "cudaSetDevice");
  check(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device (staged collective)");
}
#endif

}  // namespace

std::unique_ptr<Communicator> make_host_staged_communicator(Communicator& host, StagingCopies copies, int device) {
  return std::make_unique<HostStagedCommunicator>(host, copies, device);
}

std::unique_ptr<Communicator> make_host_staged_communicator(Communicator& host, int device) {
#ifdef MRPLAN_HAVE_CUDA
  return make_host_staged_communicator(host, StagingCopies{cuda_to_host, cuda_to_device}, device);
#else
  (void)host, (void)device;
  throw std::runtime_error("this build has no CUDA (the toolkit was not found when it was configured); rebuild on a GPU site");
#endif
}

}  // namespace mrplan
