#pragma once
// Data-parallel collectives behind one interface: MPI on CPU tensors here; an NCCL
// implementation (CUDA tensors, unique id broadcast over MPI) belongs beside it on GPU builds.
#include <cstddef>
#include <memory>

namespace mrplan {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void allreduce_sum(float* data, size_t count) = 0;  // in place
  virtual void allreduce_sum(double* data, size_t count) = 0;
  virtual void broadcast(float* data, size_t count, int root) = 0;
  virtual void barrier() = 0;
};

// Initialises MPI (thread level SERIALIZED: a comm thread issues the gradient allreduces) on first
// use and finalises it at exit.
std::unique_ptr<Communicator> make_mpi_communicator();

}  // namespace mrplan
