#include "blr/torch/data/batches.hpp"

#include <numeric>
#include <random>

namespace blr::torch {
namespace {

// SplitMix64 finaliser: decorrelates (seed, epoch) before seeding the engine.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform integer in [0, bound) by rejection (no modulo bias, library independent).
uint64_t below(std::mt19937_64& engine, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x = engine();
  while (x >= limit) x = engine();
  return x % bound;
}

std::vector<int64_t> shuffle(int64_t n, uint64_t engine_seed) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::mt19937_64 engine(engine_seed);
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(below(engine, static_cast<uint64_t>(i + 1)));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

}  // namespace

std::vector<int64_t> epoch_permutation(int64_t n, uint64_t seed, int64_t epoch) {
  return shuffle(n, mix(mix(seed) ^ static_cast<uint64_t>(epoch)));
}

std::vector<int64_t> seeded_permutation(int64_t n, uint64_t seed) {
  return shuffle(n, mix(seed ^ 0x5eed5b11a7ULL));
}

}  // namespace blr::torch
