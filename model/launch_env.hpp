#pragma once
// Which launcher started this process and as which rank, from the launchers' environments: Open
// MPI's mpirun (OMPI_COMM_WORLD_*), LSF's jsrun (JSM_NAMESPACE_*), Slurm's srun (SLURM_*), Flux
// (FLUX_TASK_*), PMI/PMIx. Used to check that MPI sees the job the launcher started.
#include <cstdlib>
#include <functional>
#include <string>

namespace mrplan {

struct LaunchEnv {
  std::string launcher;  // "mpirun", "jsrun", "srun", "flux", "pmi"; empty: started alone
  int size = 1, rank = 0, local_rank = 0;
};

LaunchEnv detect_launch(const std::function<const char*(const char*)>& getenv_fn = [](const char* k) { return std::getenv(k); });

}  // namespace mrplan
