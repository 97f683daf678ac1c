// Splitting a data set by a fixed, seeded rule, shared by every loader:
//
//   hold_out(s, f, seed): with n = |s| and k = ⌊n·f⌋, the permutation π = seeded_permutation(n,
//   seed) (data/batches.hpp); the examples π[0..n−k) stay, π[n−k..n) are held out, each part in
//   the permutation's order. Validation splits (--validation F, seed = the run's seed) and the
//   test share of a file without a test split (a fixed seed, data/tensor_file.hpp) use it.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>

#include "blr/torch/data/dataset.hpp"

namespace blr::torch {

/// The examples of `s` at `index` (int64, 1-D), in that order.
Split take(const Split& s, const ::at::Tensor& index);

/// The first n examples (all when n ≤ 0 or n ≥ |s|).
Split first(const Split& s, int64_t n);

/// (kept, held out) by the rule above; `what` names the held-out part in the error raised when
/// either part would be empty ("validation", "test").
std::pair<Split, Split> hold_out(const Split& s, double fraction, uint64_t seed,
                                 const std::string& what);

}  // namespace blr::torch
