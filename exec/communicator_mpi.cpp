#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string>
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
  // `owned`: a communicator this object made (a split) and frees; MPI_COMM_WORLD is not.
  explicit MpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD, bool owned = false) : comm_(comm), owned_(owned) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    MPI_Comm node;
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_free(&node);
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owned_ && !finalized) MPI_Comm_free(&comm_);
  }
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  void allreduce_sum(float* data, size_t count) override { chunked(data, count, MPI_FLOAT); }
  void allreduce_sum(double* data, size_t count) override { chunked(data, count, MPI_DOUBLE); }
  void broadcast(float* data, size_t count, int root) override {
    for (size_t off = 0; off < count; off += INT_MAX)
      MPI_Bcast(data + off, static_cast<int>(std::min<size_t>(INT_MAX, count - off)), MPI_FLOAT, root, comm_);
  }
  void broadcast_bytes(void* data, size_t bytes, int root) override {
    auto* p = static_cast<char*>(data);
    for (size_t off = 0; off < bytes; off += INT_MAX)
      MPI_Bcast(p + off, static_cast<int>(std::min<size_t>(INT_MAX, bytes - off)), MPI_BYTE, root, comm_);
  }
  void allgather_bytes(const void* mine, size_t bytes, void* all) override {
    if (bytes > INT_MAX) throw std::length_error("allgather_bytes: more than 2^31-1 bytes a rank");
    MPI_Allgather(mine, static_cast<int>(bytes), MPI_BYTE, all, static_cast<int>(bytes), MPI_BYTE, comm_);
  }
  void barrier() override { MPI_Barrier(comm_); }
  std::unique_ptr<Communicator> split(int color) override {
    MPI_Comm part;
    MPI_Comm_split(comm_, color, rank_, &part);
    return std::make_unique<MpiCommunicator>(part, true);
  }
  void quiet_barrier() override {
    MPI_Request req;
    MPI_Ibarrier(comm_, &req);
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
                    comm_);
  }
  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0, size_ = 1, local_rank_ = 0;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() {
  ensure_mpi();
  return std::make_unique<MpiCommunicator>();
}

void abort_job(int code) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (inited) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

std::string broadcast_text(Communicator& comm, std::string text, int root) {
  double n = static_cast<double>(text.size());
  comm.broadcast_bytes(&n, sizeof n, root);
  text.resize(static_cast<size_t>(n));
  if (!text.empty()) comm.broadcast_bytes(text.data(), text.size(), root);
  return text;
}

}  // namespace mrplan
