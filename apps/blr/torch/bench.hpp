// Subcommands of `blr bench` beyond `step` (apps/blr/torch/bench_train.cpp): `epoch` and
// `predict`. cmd_bench.cpp creates the `bench` command and adds them.
#pragma once

#include <CLI/CLI.hpp>

namespace blr::cli {

/// `blr bench epoch`: training-epoch wall time per optimizer, ratios to AdamW.
void add_bench_epoch(CLI::App* bench, int& exit_code);

/// `blr bench predict`: posterior predictive with K samples against one pass at the mean.
void add_bench_predict(CLI::App* bench, int& exit_code);

/// `blr bench data-parallel`: 2 processes x 1 thread against 1 x 1 and 1 x 2, per optimizer.
void add_bench_data_parallel(CLI::App* bench, int& exit_code);

}  // namespace blr::cli
