// MinibatchSampler: each draw holds distinct in-range rows, every row is equally likely, and bad
// sizes are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/core/minibatch.hpp"

namespace blr {
namespace {

TEST(MinibatchSampler, DrawsDistinctRowsInRange) {
  Rng rng(3);
  MinibatchSampler sampler(17, 5);
  for (int k = 0; k < 200; ++k) {
    const auto rows = sampler.draw(rng);
    ASSERT_EQ(rows.size(), 5u);
    const std::set<Index> distinct(rows.begin(), rows.end());
    EXPECT_EQ(distinct.size(), 5u);
    for (Index r : rows) EXPECT_TRUE(r >= 0 && r < 17);
  }
}

TEST(MinibatchSampler, EveryRowIsEquallyLikely) {
  // Each of n = 10 rows appears in a draw of m = 3 with probability 0.3; over 20 000 draws its
  // count has mean 6000 and standard deviation sqrt(20000·0.3·0.7) ≈ 64.8. Five of them allowed.
  Rng rng(11);
  MinibatchSampler sampler(10, 3);
  std::vector<int> counts(10, 0);
  for (int k = 0; k < 20000; ++k)
    for (Index r : sampler.draw(rng)) ++counts[r];
  for (int c : counts) EXPECT_LT(std::abs(c - 6000), 5 * 64.8);
}

TEST(MinibatchSampler, FullBatchIsAPermutation) {
  Rng rng(5);
  MinibatchSampler sampler(8, 8);
  const auto rows = sampler.draw(rng);
  EXPECT_EQ(std::set<Index>(rows.begin(), rows.end()).size(), 8u);
}

TEST(MinibatchSampler, BadSizesAreRefused) {
  EXPECT_THROW(MinibatchSampler(0, 1), Error);
  EXPECT_THROW(MinibatchSampler(5, 0), Error);
  EXPECT_THROW(MinibatchSampler(5, 6), Error);
}

}  // namespace
}  // namespace blr
