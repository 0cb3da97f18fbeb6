#include <gtest/gtest.h>

#include <map>

#include "model/launch_env.hpp"

using namespace mrplan;

namespace {

LaunchEnv with(const std::map<std::string, std::string>& env) {
  return detect_launch([&](const char* k) -> const char* {
    const auto it = env.find(k);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace

TEST(LaunchEnv, EachLaunchersRankAndLocalRank) {
  EXPECT_EQ(with({}).launcher, "");
  EXPECT_EQ(with({}).size, 1);
  const auto s = with({{"SLURM_NTASKS", "8"}, {"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}});
  EXPECT_EQ(s.launcher, "srun");
  EXPECT_EQ(s.size, 8);
  EXPECT_EQ(s.rank, 5);
  EXPECT_EQ(s.local_rank, 1);
  // jsrun also sets Open MPI's variables: its own win
  const auto j = with({{"JSM_NAMESPACE_SIZE", "12"},
                       {"JSM_NAMESPACE_RANK", "7"},
                       {"JSM_NAMESPACE_LOCAL_RANK", "1"},
                       {"OMPI_COMM_WORLD_SIZE", "12"},
                       {"OMPI_COMM_WORLD_RANK", "7"}});
  EXPECT_EQ(j.launcher, "jsrun");
  EXPECT_EQ(j.local_rank, 1);
  const auto m = with({{"OMPI_COMM_WORLD_SIZE", "3"}, {"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "2"}});
  EXPECT_EQ(m.launcher, "mpirun");
  EXPECT_EQ(m.rank, 2);
  const auto f = with({{"FLUX_JOB_SIZE", "4"}, {"FLUX_TASK_RANK", "3"}, {"FLUX_TASK_LOCAL_ID", "3"}});
  EXPECT_EQ(f.launcher, "flux");
  EXPECT_EQ(f.size, 4);
  EXPECT_EQ(f.local_rank, 3);
}
