#pragma once
// How this process was started: the rank count of the MPI job or scheduler step that launched it
// (1 when none), from the launchers' environments (Open MPI, PMI/PMIx, Slurm).
#include <cstdlib>

namespace mrplan {

inline int launched_ranks() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"})
    if (const char* n = std::getenv(v); n && std::atoi(n) > 1) return std::atoi(n);
  return 1;
}

}  // namespace mrplan
