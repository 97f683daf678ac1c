// Seeded minibatch order: the permutation of epoch e depends only on (seed, e), so a run resumed
// from a checkpoint at an epoch boundary sees exactly the batches the uninterrupted run sees.
// The shuffle is a Fisher–Yates pass driven by std::mt19937_64 with an unbiased bounded draw, so
// the order is the same with every standard library.
#pragma once

#include <cstdint>
#include <vector>

namespace blr::torch {

/// A permutation of 0..n-1 for epoch `epoch` of a run seeded with `seed`.
std::vector<int64_t> epoch_permutation(int64_t n, uint64_t seed, int64_t epoch);

/// A permutation of 0..n-1 from `seed` alone (validation splits).
std::vector<int64_t> seeded_permutation(int64_t n, uint64_t seed);

/// Number of minibatches of size `batch_size` (the last one may be smaller).
inline int64_t batch_count(int64_t n, int64_t batch_size) {
  return (n + batch_size - 1) / batch_size;
}

}  // namespace blr::torch
