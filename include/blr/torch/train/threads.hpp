// The thread count of a run: LibTorch's intra-op pool and the BLAS under it.
//
// LibTorch's `at::set_num_threads` sizes its own pool only. Its matrix products go to the system
// BLAS, and OpenBLAS keeps a pool of its own sized to every core. Two `--threads 1` runs side by
// side then had four threads on two cores, whose busy-waiting (sched_yield) made K-FAC's products
// several times slower (docs/benchmarks.md, K-FAC). `set_thread_count(n)` sets both; with a BLAS
// other than OpenBLAS (no `openblas_set_num_threads` in the process) only LibTorch's.
#pragma once

namespace blr::torch {

/// LibTorch's intra-op threads and, where the BLAS is OpenBLAS, OpenBLAS's threads: `threads` ≥ 1.
void set_thread_count(int threads);

/// OpenBLAS's thread count, or 0 when the process's BLAS is not OpenBLAS.
int blas_thread_count();

}  // namespace blr::torch
