#include "model/launch_env.hpp"

namespace mrplan {

LaunchEnv detect_launch(const std::function<const char*(const char*)>& env) {
  struct Scheme {
    const char *launcher, *size, *rank, *local;
  };
  // jsrun sets Open MPI's variables too: its own are looked at first
  static const Scheme schemes[] = {{"jsrun", "JSM_NAMESPACE_SIZE", "JSM_NAMESPACE_RANK", "JSM_NAMESPACE_LOCAL_RANK"},
                                   {"mpirun", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"},
                                   {"srun", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID"},
                                   {"flux", "FLUX_JOB_SIZE", "FLUX_TASK_RANK", "FLUX_TASK_LOCAL_ID"},
                                   {"pmi", "PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID"}};
  for (const auto& s : schemes)
    if (const char* n = env(s.size); n && std::atoi(n) >= 1 && env(s.rank)) {
      const char* local = env(s.local);
      return {s.launcher, std::atoi(n), std::atoi(env(s.rank)), local ? std::atoi(local) : 0};
    }
  return {};
}

}  // namespace mrplan
