#pragma once
// Process-wide settings every LibTorch CPU run needs for steady, comparable timings.

namespace mrplan {

// glibc's default mmap/trim thresholds page-fault every large tensor allocation, which makes
// LibTorch CPU steps 3-4x slower and erratic; call before the first tensor.
void keep_large_allocations_mapped();

// Gives the heap's free pages back to the kernel (malloc_trim), so the next allocations touch
// fresh pages as a new process does: a microbenchmark of a stage's start-up needs that.
void release_free_heap();

// Minor page faults of this process so far (each first touch of a fresh page).
long minor_page_faults();
double page_bytes();

// Deterministic GPU kernels (cuBLAS with a fixed workspace, cuDNN's deterministic algorithms, no
// autotuning): a step gives the same bits every time, so a resumed run can match the uninterrupted
// one. Call before the first GPU matmul (cuBLAS reads its workspace setting once).
void use_deterministic_kernels();

// torch::set_num_threads, plus OpenBLAS's own pool (Debian's LibTorch calls OpenBLAS for matmuls,
// which ignores torch's setting and would oversubscribe the cores of the other ranks).
void set_intra_op_threads(int threads);

}  // namespace mrplan
