// Stationary covariance functions for Gaussian processes and their hyperparameter gradients
// (Rasmussen & Williams 2006, GPML §4.2, eqs. 4.9 and 4.17), written in r = |a − b|:
//
//     RBF (squared exponential)  k(r) = σ² exp(−r² / (2ℓ²))
//     Matérn 3/2                 k(r) = σ² (1 + s) e^{−s},          s = √3 r / ℓ
//     Matérn 5/2                 k(r) = σ² (1 + s + s²/3) e^{−s},   s = √5 r / ℓ
//
// Hyperparameters are learned in log space, θ = (log ℓ, log σ²); the gradients are
//     ∂k/∂log σ² = k,
//     ∂k/∂log ℓ  = σ² (r²/ℓ²) exp(−r²/(2ℓ²))     (RBF)
//                = σ² s² e^{−s}                   (Matérn 3/2)
//                = σ² s² (1 + s) e^{−s} / 3       (Matérn 5/2),
// from ∂s/∂log ℓ = −s and dk/ds = −σ² s e^{−s}, resp. −σ² s (1 + s) e^{−s} / 3.
#pragma once

#include <array>
#include <string>

#include "blr/core/types.hpp"

namespace blr::inference {

enum class KernelKind { rbf, matern32, matern52 };

/// "rbf", "matern32", "matern52".
std::string to_string(KernelKind kind);
/// Parses the names of to_string; throws a blr::Error naming the allowed ones otherwise.
KernelKind parse_kernel(const std::string& name);

/// A stationary kernel with a length-scale ℓ and a signal variance σ².
struct Kernel {
  KernelKind kind = KernelKind::rbf;
  double lengthscale = 1.0;  ///< ℓ > 0
  double variance = 1.0;     ///< σ² > 0

  /// Throws unless ℓ and σ² are positive and finite.
  void validate() const;
  /// k(a_i, b_j) for all row pairs (a: n×p, b: m×p).
  Matrix matrix(const Matrix& a, const Matrix& b) const;
  /// k(x, x) = σ² for each of `rows` inputs.
  Vector diagonal(Index rows) const;
  /// (∂K/∂log ℓ, ∂K/∂log σ²) of K = k(x, x).
  std::array<Matrix, 2> gradients(const Matrix& x) const;
  /// θ = (log ℓ, log σ²) and back.
  Vector log_parameters() const;
  static Kernel from_log_parameters(KernelKind kind, const Vector& theta);
};

}  // namespace blr::inference
