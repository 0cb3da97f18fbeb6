#include "exec/host_tuning.hpp"

#include <malloc.h>
#include <stdlib.h>
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

void use_deterministic_kernels() {
  // cuBLAS's reproducibility condition (CUDA Toolkit docs, cuBLAS "Results reproducibility")
  setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
  // warn_only: an op with no deterministic kernel (max_pool3d backward, nll_loss2d) warns and runs;
  // without overlapping windows its atomics add one value per element, so it is repeatable too
  at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/true);
  at::globalContext().setDeterministicCuDNN(true);
  at::globalContext().setBenchmarkCuDNN(false);
}

void set_intra_op_threads(int threads) {
  torch::set_num_threads(threads);
  if (openblas_set_num_threads) openblas_set_num_threads(threads);
}

}  // namespace mrplan
