#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "exec/communicator.hpp"

namespace mrplan {

namespace {

void ensure_mpi() {
  int inited = 0;
  MPI_Initialized(&inited);
  if (inited) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED)
    throw std::runtime_error("MPI does not provide MPI_THREAD_SERIALIZED, which the gradient comm thread needs");
  std::atexit([] {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  });
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    ensure_mpi();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_free(&node);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  void allreduce_sum(float* data, size_t count) override { chunked(data, count, MPI_FLOAT); }
  void allreduce_sum(double* data, size_t count) override { chunked(data, count, MPI_DOUBLE); }
  void broadcast(float* data, size_t count, int root) override {
    for (size_t off = 0; off < count; off += INT_MAX)
      MPI_Bcast(data + off, static_cast<int>(std::min<size_t>(INT_MAX, count - off)), MPI_FLOAT, root, MPI_COMM_WORLD);
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  void quiet_barrier() override {
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (int done = 0;;) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

 private:
  template <class T>
  void chunked(T* data, size_t count, MPI_Datatype type) {
    for (size_t off = 0; off < count; off += INT_MAX)
      MPI_Allreduce(MPI_IN_PLACE, data + off, static_cast<int>(std::min<size_t>(INT_MAX, count - off)), type, MPI_SUM,
                    MPI_COMM_WORLD);
  }
  int rank_ = 0, size_ = 1, local_rank_ = 0;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() { return std::make_unique<MpiCommunicator>(); }

}  // namespace mrplan
