// Minibatches drawn without replacement from n rows: a partial Fisher–Yates shuffle of a
// permutation kept between draws (Knuth, TAOCP vol. 2, §3.4.2, Algorithm P stopped after m swaps).
//
// Each draw is a uniformly random m-subset in random order; only m random numbers are used per
// draw. SVI (blr/inference/vmp.hpp) and its Table-1 check draw their minibatches with it, so that a
// plain re-implementation of an algorithm can see the same data in the same order.
#pragma once

#include <numeric>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"

namespace blr {

class MinibatchSampler {
 public:
  MinibatchSampler(Index rows, Index batch) : batch_(batch), permutation_(rows) {
    check(rows >= 1, "A minibatch sampler needs at least one row.");
    check(batch >= 1 && batch <= rows, "The minibatch size must lie between 1 and the number of rows.");
    std::iota(permutation_.begin(), permutation_.end(), Index{0});
  }

  /// The next minibatch's row indices (batch() of them, distinct).
  std::vector<Index> draw(Rng& rng) {
    const Index n = rows();
    for (Index i = 0; i < batch_; ++i) {
      const Index j = i + static_cast<Index>(rng.below(static_cast<std::uint64_t>(n - i)));
      std::swap(permutation_[i], permutation_[j]);
    }
    return std::vector<Index>(permutation_.begin(), permutation_.begin() + batch_);
  }

  Index rows() const { return static_cast<Index>(permutation_.size()); }
  Index batch() const { return batch_; }

 private:
  Index batch_;
  std::vector<Index> permutation_;
};

}  // namespace blr
