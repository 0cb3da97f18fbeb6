#include "exec/host_tuning.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>
#include <torch/torch.h>

// Present when LibTorch's BLAS is OpenBLAS; weak so other BLAS builds still link.
extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace mrplan {

void keep_large_allocations_mapped() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

void release_free_heap() { malloc_trim(0); }

long minor_page_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

double page_bytes() { return static_cast<double>(sysconf(_SC_PAGESIZE)); }

void set_intra_op_threads(int threads) {
  torch::set_num_threads(threads);
  if (openblas_set_num_threads) openblas_set_num_threads(threads);
}

}  // namespace mrplan
