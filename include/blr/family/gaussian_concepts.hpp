// Which Gaussian candidate a piece of code accepts: the rule and the estimators share these.
//
// GaussianFixed and GaussianDiag hold a precision vector s (S = diag s); GaussianFull holds the
// Cholesky factor of S. Estimators sample any of them; the BLR step updates any of them.
#pragma once

#include <concepts>

#include "blr/family/gaussian_diag.hpp"
#include "blr/family/gaussian_fixed.hpp"
#include "blr/family/gaussian_full.hpp"

namespace blr {

/// A Gaussian with a diagonal precision vector `q.precision` (s).
template <class Q>
concept DiagonalGaussian = std::same_as<Q, GaussianDiag> || std::same_as<Q, GaussianFixed>;

/// A Gaussian with a Cholesky-factored precision `q.precision` (S = LLᵀ).
template <class Q>
concept FullGaussian = std::same_as<Q, GaussianFull>;

/// Any Gaussian candidate: what estimators sample and the Gaussian BLR step updates.
template <class Q>
concept SampleableGaussian = DiagonalGaussian<Q> || FullGaussian<Q>;

template <class Q>
concept GaussianCandidate = SampleableGaussian<Q>;

}  // namespace blr
