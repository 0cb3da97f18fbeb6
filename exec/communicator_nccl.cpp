// NCCL communicator (compiled where the CUDA toolkit and NCCL are found: MRPLAN_HAVE_NCCL).
// No torch here: it works on raw device pointers.
#include "exec/communicator.hpp"

#include <stdexcept>
#include <string>

#ifdef MRPLAN_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include <climits>
#include <memory>
#include <vector>
#endif

namespace mrplan {

#ifdef MRPLAN_HAVE_NCCL
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}

class NcclCommunicator final : public Communicator {
 public:
  // `owned_bootstrap`: a split's host communicator, which this one keeps alive
  NcclCommunicator(Communicator& bootstrap, int device, std::unique_ptr<Communicator> owned_bootstrap = nullptr)
      : owned_(std::move(owned_bootstrap)), boot_(bootstrap), device_(device) {
    check(cudaSetDevice(device_), "cudaSetDevice");
    ncclUniqueId id;
    if (boot_.rank() == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    // the id is 128 opaque bytes: carried as floats over the bootstrap's broadcast
    static_assert(sizeof(ncclUniqueId) % sizeof(float) == 0);
    boot_.broadcast(reinterpret_cast<float*>(&id), sizeof(id) / sizeof(float), 0);
    check(ncclCommInitRank(&comm_, boot_.size(), id, boot_.rank()), "ncclCommInitRank");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~NcclCommunicator() override {
    cudaEventDestroy(ready_);
    cudaStreamDestroy(stream_);
    ncclCommDestroy(comm_);
  }
  int rank() const override { return boot_.rank(); }
  int size() const override { return boot_.size(); }
  int local_rank() const override { return boot_.local_rank(); }
  bool device_memory() const override { return true; }
  void allreduce_sum(float* data, size_t count) override { run(data, count, ncclFloat32); }
  void allreduce_sum(double* data, size_t count) override { run(data, count, ncclFloat64); }
  void broadcast(float* data, size_t count, int root) override {
    after_default_stream();
    check(ncclBroadcast(data, data, count, ncclFloat32, root, comm_, stream_), "ncclBroadcast");
    check(cudaStreamSynchronize(stream_), "ncclBroadcast (stream)");
  }
  void broadcast_bytes(void* data, size_t bytes, int root) override { boot_.broadcast_bytes(data, bytes, root); }
  void allgather_bytes(const void* mine, size_t bytes, void* all) override { boot_.allgather_bytes(mine, bytes, all); }
  void barrier() override { boot_.barrier(); }
  void quiet_barrier() override { boot_.quiet_barrier(); }
  // A new NCCL communicator over the split of the host one (works with every NCCL version, where
  // ncclCommSplit needs 2.18; a split happens once per MRMF stage, not per step).
  std::unique_ptr<Communicator> split(int color) override {
    auto host = boot_.split(color);
    auto& ref = *host;
    return std::make_unique<NcclCommunicator>(ref, device_, std::move(host));
  }

 private:
  // The caller's thread may differ from the one that queued the data (the gradient comm thread):
  // wait for everything queued so far on the legacy default stream.
  void after_default_stream() {
    check(cudaSetDevice(device_), "cudaSetDevice");
    check(cudaEventRecord(ready_, cudaStreamLegacy), "cudaEventRecord");
    check(cudaStreamWaitEvent(stream_, ready_, 0), "cudaStreamWaitEvent");
  }
  void run(void* data, size_t count, ncclDataType_t type) {
    after_default_stream();
    check(ncclAllReduce(data, data, count, type, ncclSum, comm_, stream_), "ncclAllReduce");
    check(cudaStreamSynchronize(stream_), "ncclAllReduce (stream)");
  }
  std::unique_ptr<Communicator> owned_;
  Communicator& boot_;
  int device_;
  ncclComm_t comm_{};
  cudaStream_t stream_{};
  cudaEvent_t ready_{};
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, int device) {
  return std::make_unique<NcclCommunicator>(bootstrap, device);
}
bool nccl_compiled() { return true; }

std::shared_ptr<float> cuda_buffer(size_t count) {
  float* p = nullptr;
  check(cudaMalloc(&p, count * sizeof(float)), "cudaMalloc");
  check(cudaMemset(p, 0, count * sizeof(float)), "cudaMemset");
  return std::shared_ptr<float>(p, [](float* q) { cudaFree(q); });
}

#else

std::unique_ptr<Communicator> make_nccl_communicator(Communicator&, int) {
  throw std::runtime_error("this build has no NCCL (the CUDA toolkit was not found when it was configured); rebuild on a GPU site");
}
bool nccl_compiled() { return false; }
std::shared_ptr<float> cuda_buffer(size_t) { throw std::runtime_error("this build has no CUDA"); }

#endif

}  // namespace mrplan
