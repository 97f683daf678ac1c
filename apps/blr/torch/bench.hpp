// Subcommands of `blr bench` beyond `step` (apps/blr/torch/bench_train.cpp): `epoch` and
// `predict`. cmd_bench.cpp creates the `bench` command and adds them.
#pragma once

#include <malloc.h>

#include <CLI/CLI.hpp>
#include <limits>

namespace blr::cli {

/// glibc returns large blocks to the kernel (mmap threshold, heap trimming) by rules that adapt to
/// the history of the process, so an optimizer that allocates parameter-sized temporaries every
/// step (LibTorch's AdamW) pays page faults in some runs and not in others: 1.1–5.8 ms per step at
/// 1e6 parameters in repeated runs of the same program. The steady allocator keeps freed memory in
/// the heap (the state of a long training run), so timings measure the optimizers' own work.
inline void steady_allocator() {
  ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
  ::mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
}

/// `blr bench epoch`: training-epoch wall time per optimizer, ratios to AdamW.
void add_bench_epoch(CLI::App* bench, int& exit_code);

/// `blr bench predict`: posterior predictive with K samples against one pass at the mean.
void add_bench_predict(CLI::App* bench, int& exit_code);

/// `blr bench data-parallel`: 2 processes x 1 thread against 1 x 1 and 1 x 2, per optimizer.
void add_bench_data_parallel(CLI::App* bench, int& exit_code);

}  // namespace blr::cli
