// Run under `mpirun -np 3`: a split communicator's collectives stay inside its group (MRMF trains
// one model per group), text travels from any root to every rank, and a gather keeps rank order.
#include <fmt/format.h>

#include <string>

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
  double fails = failed;
  world->allreduce_sum(&fails, 1);
  if (rank == 0) fmt::print("split: {} ranks, {} failed\n", world->size(), fails);
  return fails == 0 ? 0 : 1;
}
