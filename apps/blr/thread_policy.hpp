// The process settings blr chooses, when the user has not, for idle worker threads and for freed
// memory: what a small or shared machine needs from the libraries blr runs on.
//
// - libgomp (LibTorch's OpenMP) reads OMP_WAIT_POLICY once, when it is loaded, before main(); its
//   default lets idle workers spin, taking cores from everything else: the torch part chooses
//   PASSIVE.
// - OpenBLAS reads OPENBLAS_THREAD_TIMEOUT the same way; by default (2²⁸ turns) an idle worker
//   calls sched_yield in a loop for a long while after each product, which the kernel counts as
//   system time: 197 000 calls, 0.2 s of system time in a 0.55 s `blr infer logistic` at 10⁵ × 50.
//   `blr infer` and `blr sensitivity`, whose products are few and large, choose 4 (2⁴ turns, then
//   the worker sleeps until the next product): the same wall time, a third of the system time. The
//   torch part keeps OpenBLAS's default: its many small products per step pay for each wake-up
//   (an MLP epoch took 10 % longer with 4; docs/benchmarks.md "Idle threads and freed memory").
// - glibc's malloc gives blocks above its mmap threshold back to the system when they are freed,
//   and trims the heap above its trim threshold, by rules that adapt to the process's history, so
//   each training step's tensors may fault their pages in again (3 million page faults in one
//   LeNet-5 epoch of 6 000 images, half its wall time). The torch part keeps freed memory for
//   reuse, the state of a long training run (`keep_freed_memory`: an mmap threshold of 1 GiB, no
//   trimming); `blr bench` chooses for itself, so that its timings measure the optimizers' work.
// A variable the user has set is kept, as is a malloc setting given in GLIBC_TUNABLES or
// MALLOC_*_ (so a user can restore any default). The libraries read their variables when they are
// loaded, so a process that had to set one starts itself again (apps/blr/main.cpp).
#pragma once

namespace blr::cli {

/// Sets OMP_WAIT_POLICY=PASSIVE when it is unset; true when it did (the torch part's choice).
bool choose_omp_wait_policy();
/// Sets OPENBLAS_THREAD_TIMEOUT=4 when it is unset; true when it did (`infer`, `sensitivity`).
bool choose_openblas_thread_timeout();

/// Keeps freed memory for reuse (glibc's mallopt: blocks up to 1 GiB from the heap, no trimming).
void keep_freed_memory();
/// `keep_freed_memory`, unless the user set malloc's thresholds (GLIBC_TUNABLES, MALLOC_*_).
void keep_freed_memory_unless_set();

}  // namespace blr::cli
