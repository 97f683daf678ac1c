// Seeded random numbers whose complete state can be saved and restored.
//
// `Rng` wraps std::mt19937_64 with its own standard normal generator (the polar method with its
// cached second draw part of the state), so that a saved run resumes bit for bit. All stochastic
// code in blr takes an `Rng&`; seeds are explicit.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>

#include "blr/core/error.hpp"
#include "blr/core/types.hpp"

namespace blr {

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) : engine_(seed) {}

  /// Uniform draw in the open interval (0, 1).
  double uniform() {
    // 53 random bits, shifted by half a step so that 0 and 1 are never returned.
    return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53;
  }

  /// Standard normal draw (Marsaglia's polar method).
  double normal() {
    if (has_cached_) {
      has_cached_ = false;
      return cached_;
    }
    double u = 0, v = 0, s = 0;
    do {
      u = 2.0 * uniform() - 1.0;
      v = 2.0 * uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    cached_ = v * f;
    has_cached_ = true;
    return u * f;
  }

  /// A vector of n independent standard normal draws.
  Vector normal_vector(Index n) {
    Vector out(n);
    for (Index i = 0; i < n; ++i) out[i] = normal();
    return out;
  }

  /// Uniform integer in [0, n).
  std::uint64_t below(std::uint64_t n) {
    check(n > 0, "Rng::below needs a positive bound.");
    std::uniform_int_distribution<std::uint64_t> dist(0, n - 1);
    return dist(engine_);
  }

  /// Raw 64-bit draw (for seeding other generators).
  std::uint64_t next_u64() { return engine_(); }

  std::mt19937_64& engine() { return engine_; }

  /// The complete state as text (engine words and the cached normal draw).
  std::string save() const {
    std::ostringstream out;
    out << engine_ << ' ' << has_cached_ << ' ';
    out.precision(17);
    out << std::hexfloat << cached_;
    return out.str();
  }

  /// Restores a state written by `save()`.
  void load(const std::string& state) {
    std::istringstream in(state);
    in >> engine_ >> has_cached_;
    std::string cached;
    in >> cached;
    check(!in.fail(), "The saved random-number state is malformed.");
    cached_ = std::strtod(cached.c_str(), nullptr);
  }

  friend bool operator==(const Rng& a, const Rng& b) { return a.save() == b.save(); }

 private:
  std::mt19937_64 engine_;
  bool has_cached_ = false;
  double cached_ = 0.0;
};

}  // namespace blr
