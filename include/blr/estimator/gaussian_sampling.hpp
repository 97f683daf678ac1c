// Drawing θ ~ q for the Gaussian candidates, from explicit standard-normal noise ε:
//
//     diagonal (GaussianDiag, GaussianFixed, precision s):  θ = m + ε/√s,   s⊙(θ − m) = √s⊙ε
//     full (GaussianFull, precision S = LLᵀ):              θ = m + L⁻ᵀε,   S(θ − m) = Lε
//
// Estimators take their noise as a list of vectors so that a test, or a parity check against
// another implementation, can fix it; the Rng overloads draw it here and pass it on.
#pragma once

#include <concepts>
#include <string>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"
#include "blr/family/gaussian_concepts.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/family/gaussian_fixed.hpp"
#include "blr/family/gaussian_full.hpp"

namespace blr {

// DiagonalGaussian, FullGaussian and SampleableGaussian: blr/family/gaussian_concepts.hpp.

/// θ = m + ε/√s (diagonal) or m + L⁻ᵀε (full).
template <SampleableGaussian Q>
Vector sample_with_noise(const Q& q, const Vector& eps) {
  if constexpr (FullGaussian<Q>) {
    return q.mean + q.precision.solve_upper(eps);
  } else {
    return q.mean + eps.cwiseQuotient(q.precision.cwiseSqrt());
  }
}

/// S(θ − m) for θ = sample_with_noise(q, ε): √s⊙ε (diagonal) or Lε (full).
template <SampleableGaussian Q>
Vector precision_times_offset(const Q& q, const Vector& eps) {
  if constexpr (FullGaussian<Q>) {
    return q.precision.lower().template triangularView<Eigen::Lower>() * eps;
  } else {
    return eps.cwiseProduct(q.precision.cwiseSqrt());
  }
}

/// `samples` standard-normal vectors of length d, drawn in order; with `antithetic` the list is
/// (ε₁, −ε₁, ε₂, −ε₂, …) and `samples` must be even.
inline std::vector<Vector> standard_normal_noise(Rng& rng, Index d, int samples, bool antithetic) {
  check(samples >= 1, "At least one noise vector must be drawn.");
  check(!antithetic || samples % 2 == 0, "Antithetic noise needs an even number of samples.");
  std::vector<Vector> out;
  out.reserve(static_cast<std::size_t>(samples));
  for (int k = 0; k < samples; ++k) {
    if (antithetic && k % 2 == 1) {
      out.push_back(-out.back());
    } else {
      out.push_back(rng.normal_vector(d));
    }
  }
  return out;
}

namespace detail {

/// Throws unless the loss and q have the same dimension.
template <class Q, class L>
void check_dimensions(const Q& q, const L& loss, const char* who) {
  check(q.dimension() == loss.dimension(),
        fmt::format("{}: the candidate q has dimension {} but the loss has dimension {}.", who,
                    q.dimension(), loss.dimension()));
}

/// Throws unless there is at least one noise vector and each has length d and is finite.
inline void check_noise(const std::vector<Vector>& eps, Index d, const char* who) {
  check(!eps.empty(), fmt::format("{}: at least one noise vector is needed.", who));
  for (std::size_t k = 0; k < eps.size(); ++k) {
    check(eps[k].size() == d,
          fmt::format("{}: noise vector {} has length {} but q has dimension {}.", who, k,
                      eps[k].size(), d));
    check(eps[k].allFinite(), fmt::format("{}: noise vector {} is not finite.", who, k));
  }
}

}  // namespace detail
}  // namespace blr
