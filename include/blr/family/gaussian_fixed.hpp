// Gaussian with a fixed covariance, q(θ) = N(θ | m, S₀⁻¹) with S₀ = diag(s₀) held constant.
//
// Only λ⁽¹⁾ = S₀m is learned; the BLR then reduces to gradient descent (§1.3.1 of Khan & Rue 2023,
// with S₀ = I) or to preconditioned GD. Natural parameter λ = S₀m, expectation μ = m.
#pragma once

#include "blr/core/error.hpp"
#include "blr/core/types.hpp"

namespace blr {

struct GaussianFixed {
  Vector mean;       ///< m
  Vector precision;  ///< s₀, fixed (each entry > 0)

  GaussianFixed() = default;
  GaussianFixed(Vector m, Vector s0) : mean(std::move(m)), precision(std::move(s0)) {
    check(mean.size() == precision.size(), "GaussianFixed: mean and precision differ in length.");
  }
  /// Unit covariance, N(m, I).
  explicit GaussianFixed(Vector m) : mean(std::move(m)), precision(Vector::Ones(mean.size())) {}
  Index dimension() const { return mean.size(); }
  Vector solve(const Vector& b) const { return b.cwiseQuotient(precision); }
  Vector variance() const { return precision.cwiseInverse(); }
};

}  // namespace blr
