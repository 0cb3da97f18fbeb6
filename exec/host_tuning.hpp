#pragma once
// Process-wide settings every LibTorch CPU run needs for steady, comparable timings.

namespace mrplan {

// glibc's default mmap/trim thresholds page-fault every large tensor allocation, which makes
// LibTorch CPU steps 3-4x slower and erratic; call before the first tensor.
void keep_large_allocations_mapped();

// torch::set_num_threads, plus OpenBLAS's own pool (Debian's LibTorch calls OpenBLAS for matmuls,
// which ignores torch's setting and would oversubscribe the cores of the other ranks).
void set_intra_op_threads(int threads);

}  // namespace mrplan
