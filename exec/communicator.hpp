#pragma once
// Data-parallel collectives behind one interface: MPI on host memory, NCCL on CUDA device memory
// (its unique id broadcast over MPI). Torch-free, so benchmarks and calibration use it too.
#include <cstddef>
#include <memory>

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
  virtual void barrier() = 0;
  // A barrier that sleeps while it waits instead of polling, so that ranks kept waiting leave the
  // cores to the ranks being timed.
  virtual void quiet_barrier() { barrier(); }
};

// Initialises MPI (thread level SERIALIZED: a comm thread issues the gradient allreduces) on first
// use and finalises it at exit.
std::unique_ptr<Communicator> make_mpi_communicator();

// NCCL over the ranks of `bootstrap` (which carries the unique id), on CUDA device `device`.
// Operations wait for the work already queued on the legacy default stream (where LibTorch
// computes unless told otherwise) and return when the collective has finished.
// Throws when this build has no NCCL (the CUDA toolkit was not found when it was configured).
std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, int device);
bool nccl_compiled();
// `count` floats of CUDA device memory on the current device, zeroed (NCCL builds only).
std::shared_ptr<float> cuda_buffer(size_t count);

}  // namespace mrplan
