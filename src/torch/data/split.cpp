#include "blr/torch/data/split.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "blr/core/error.hpp"
#include "blr/torch/data/batches.hpp"

namespace blr::torch {

Split take(const Split& s, const at::Tensor& index) {
  return {s.x.index_select(0, index), s.y.index_select(0, index)};
}

Split first(const Split& s, int64_t n) {
  if (n <= 0 || n >= s.size()) return s;
  return {s.x.slice(0, 0, n), s.y.slice(0, 0, n)};
}

std::pair<Split, Split> hold_out(const Split& s, double fraction, uint64_t seed,
                                 const std::string& what) {
  const int64_t n = s.size();
  const auto k = static_cast<int64_t>(static_cast<double>(n) * fraction);
  check(k >= 1 && k < n,
        fmt::format("A {} fraction of {} leaves no training or no {} examples out of {}.", what,
                    fraction, what, n));
  const auto index = at::tensor(seeded_permutation(n, seed), at::kLong);
  return {take(s, index.slice(0, 0, n - k)), take(s, index.slice(0, n - k, n))};
}

}  // namespace blr::torch
