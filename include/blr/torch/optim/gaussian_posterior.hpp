// A capability, not a type: an optimizer whose state is a Gaussian posterior over the model's
// parameters, q(θ) = N(μ, Σ) with μ the parameters themselves. What the posterior tools need
// (sensitivity.hpp, merge.hpp) is asked of this interface (registry.hpp's as_gaussian_posterior),
// never of an optimizer's type:
//
//   diagonal    Σ = diag(σ²)                 IVON, VOGN, OGN, Vadam, AdaBayes (mean_field.hpp),
//                                            a diagonal Laplace (laplace.hpp)
//   Kronecker   Σ_W = (N·(G ⊗ A) + δI)⁻¹ per  K-FAC (kfac.hpp), a Kronecker Laplace
//               Linear/Conv2d weight W
//
// marginal_variance() is diag(Σ) per parameter (for a Kronecker block the exact diagonal of its
// inverse, kronecker_gaussian.hpp), so a tool that reads marginal variances (the sensitivities'
// v = Σ_j σ_j² (∂f/∂θ_j)², the merge's per-coordinate precisions) takes any of them; it drops the
// correlations of a Kronecker block, as the diagonal reading of a Kronecker Laplace always has.
#pragma once

#include <ATen/Tensor.h>

#include <string>
#include <vector>

namespace blr::torch {

class GaussianPosterior {
 public:
  virtual ~GaussianPosterior() = default;
  /// diag(Σ) per parameter, in the optimizer's parameter order (zero outside a fitted subset).
  virtual std::vector<::at::Tensor> marginal_variance() = 0;
  /// A precision per coordinate, 1/σ² (a diagonal posterior may return its own, bit for bit the
  /// one its step uses).
  virtual std::vector<::at::Tensor> marginal_precision();
  /// The posterior's name for reports ("IVON posterior", "Kronecker Laplace posterior").
  virtual std::string posterior_name() const = 0;
  /// False while there is no posterior yet (a Laplace posterior before its fit).
  virtual bool posterior_ready() const { return true; }
  /// True for a Kronecker-factored posterior (its marginal variances drop correlations).
  virtual bool kronecker() const { return false; }
};

}  // namespace blr::torch
