// Run under `mpirun -np 3`: a split communicator's collectives stay inside its group (MRMF trains
// one model per group), collectives staged through host copies stay correct, text travels from any root to every rank, and a gather keeps rank order.
#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "exec/communicator.hpp"

using namespace mrplan;

int main() {
  auto world = make_mpi_communicator();
  const int rank = world->rank();
  int failed = 0;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) {
      ++failed;
      fmt::print("rank {}: FAILED {}\n", rank, what);
    }
  };
  // ranks 0 | 1 2
  const int color = rank == 0 ? 0 : 1;
  auto group = world->split(color);
  check(group->size() == (color == 0 ? 1 : 2), "group size");
  check(group->rank() == (color == 0 ? 0 : rank - 1), "group rank keeps the world's order");
  double v = 1.0 + rank;  // 1 | 2 3
  group->allreduce_sum(&v, 1);
  check(v == (color == 0 ? 1.0 : 5.0), fmt::format("allreduce inside the group: got {}", v));
  float f[2] = {static_cast<float>(rank), 7};
  group->broadcast(f, 2, 0);  // from each group's own first rank
  check(f[0] == (color == 0 ? 0.0f : 1.0f), "broadcast from the group's root");
  double w = 1.0;
  world->allreduce_sum(&w, 1);
  check(w == world->size(), "the world is untouched by the split");
  const auto text = broadcast_text(*world, rank == 2 ? std::string("model 'high' of stage 'fusion1'") : std::string(), 2);
  check(text == "model 'high' of stage 'fusion1'", "text from rank 2: '" + text + "'");
  const auto empty = broadcast_text(*world, std::string(), 0);
  check(empty.empty(), "empty text");
  const char mine[2] = {static_cast<char>('a' + rank), static_cast<char>(color)};
  char all[6] = {};
  world->allgather_bytes(mine, 2, all);
  check(std::string(all, 6) == std::string("a\0b\1c\1", 6), "allgather in rank order");
  char in_group[4] = {};
  group->allgather_bytes(mine, 2, in_group);
  check(color == 0 ? in_group[0] == 'a' : std::string(in_group, 4) == std::string("b\1c\1", 4), "allgather inside the group");
  // host staging (run --comm mpi on a shared GPU), its "device" here host memory copied by memcpy:
  // the copies are counted, and a split stages over the split's ranks
  static int copies = 0;
  const StagingCopies memcpy_copies{[](void* h, const void* d, size_t n, int) { std::memcpy(h, d, n), ++copies; },
                                    [](void* d, const void* h, size_t n, int) { std::memcpy(d, h, n), ++copies; }};
  auto staged = make_host_staged_communicator(*world, memcpy_copies, -1);
  check(staged->device_memory() && staged->size() == world->size(), "a staged communicator takes device memory");
  std::vector<float> grads(1000, 1.0f + rank);  // 1 + 2 + 3
  staged->allreduce_sum(grads.data(), grads.size());
  check(grads.front() == 6.0f && grads.back() == 6.0f && copies == 2, fmt::format("staged allreduce: {} after {} copies", grads.back(), copies));
  double d[3] = {0.5 * rank, 1, 2};
  staged->allreduce_sum(d, 3);
  check(d[0] == 1.5 && d[2] == 6, "staged allreduce of doubles");
  auto staged_group = staged->split(color);
  float p[3] = {static_cast<float>(rank), 1, 2};
  staged_group->broadcast(p, 3, 0);
  check(staged_group->device_memory() && p[0] == (color == 0 ? 0.0f : 1.0f), "staged broadcast inside the split from the group's root");
  double fails = failed;
  world->allreduce_sum(&fails, 1);
  if (rank == 0) fmt::print("split: {} ranks, {} failed\n", world->size(), fails);
  return fails == 0 ? 0 : 1;
}
