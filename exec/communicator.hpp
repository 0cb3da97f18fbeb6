#pragma once
// Data-parallel collectives behind one interface: MPI on host memory, NCCL on CUDA device memory
// (its unique id broadcast over MPI). Torch-free, so benchmarks and calibration use it too. A
// communicator splits into groups (MRMF trains one model per group, each data parallel inside it).
#include <cstddef>
#include <memory>
#include <string>

namespace mrplan {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;  // rank among the processes of this node (picks the GPU)
  virtual bool device_memory() const { return false; }  // true: buffers are CUDA device pointers
  virtual void allreduce_sum(float* data, size_t count) = 0;  // in place
  virtual void allreduce_sum(double* data, size_t count) = 0;
  virtual void broadcast(float* data, size_t count, int root) = 0;
  // Host bytes (records, names) from `root` to every rank; always over the host transport.
  virtual void broadcast_bytes(void* data, size_t bytes, int root) = 0;
  // Every rank's `bytes` host bytes into `all` (size() x bytes, in rank order); the host transport.
  virtual void allgather_bytes(const void* mine, size_t bytes, void* all) = 0;
  virtual void barrier() = 0;
  // The ranks that pass the same `color` form a new communicator (MPI_Comm_split; NCCL builds a
  // communicator over the split's ranks), ordered as they were here. Every rank must call it.
  virtual std::unique_ptr<Communicator> split(int color) = 0;
  // A barrier that sleeps while it waits instead of polling, so that ranks kept waiting leave the
  // cores to the ranks being timed.
  virtual void quiet_barrier() { barrier(); }
};

// Initialises MPI (thread level SERIALIZED: a comm thread issues the gradient allreduces) on first
// use and finalises it at exit.
std::unique_ptr<Communicator> make_mpi_communicator();

// Ends every rank of the job with exit code `code` (MPI_Abort): for an error met by one rank while
// the others may wait for it in a collective, which would otherwise hold them until the watchdog.
[[noreturn]] void abort_job(int code);

// `text` on `root` to every rank of `comm` (its length first, then its bytes).
std::string broadcast_text(Communicator& comm, std::string text, int root);

// NCCL over the ranks of `bootstrap` (which carries the unique id), on CUDA device `device`.
// Operations wait for the work already queued on the legacy default stream (where LibTorch
// computes unless told otherwise) and return when the collective has finished.
// Throws when this build has no NCCL (the CUDA toolkit was not found when it was configured).
std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, int device);
bool nccl_compiled();
// Collectives on device buffers over a host communicator (MPI): each call copies the buffer to
// host memory, runs `host`'s collective there and copies the result back. For ranks that share one
// GPU, which NCCL refuses (NCCL 2.5+); two PCIe copies a call slower than NCCL. `device`: the CUDA
// device, set on whichever thread calls. Throws where this build has no CUDA.
std::unique_ptr<Communicator> make_host_staged_communicator(Communicator& host, int device);
// The same with the copies given (a test stages host memory through memcpy).
struct StagingCopies {
  void (*to_host)(void* host, const void* device, size_t bytes, int device_index);
  void (*to_device)(void* device, const void* host, size_t bytes, int device_index);
};
std::unique_ptr<Communicator> make_host_staged_communicator(Communicator& host, StagingCopies copies, int device);
// `count` floats of CUDA device memory on the current device, zeroed (NCCL builds only).
std::shared_ptr<float> cuda_buffer(size_t count);

}  // namespace mrplan
