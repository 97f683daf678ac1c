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
//
// covariance_blocks() is Σ as the linearised predictive (laplace_predictive.hpp) reads it, one
// block per parameter: none (outside a fitted subset), diagonal σ², or a Kronecker block in its
// eigenbasis, Σ_W = (U_G ⊗ U_A) diag(1/D) (U_G ⊗ U_A)ᵀ with D = N g aᵀ + δ. The default is the
// diagonal of marginal_variance() for every parameter; a Kronecker Laplace gives its exact blocks.
#pragma once

#include <ATen/Tensor.h>

#include <string>
#include <vector>

namespace blr::torch {

/// One parameter's covariance as the linearised predictive reads it.
struct CovarianceBlock {
  ::at::Tensor weights;  ///< σ² (diagonal) or 1/D (Kronecker), the parameter's shape; undefined
                         ///< outside the posterior
  ::at::Tensor output_basis, input_basis;  ///< U_G (out×out), U_A (in×in) of a Kronecker block
  bool kronecker() const { return output_basis.defined() && input_basis.defined(); }
};

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
  /// Σ per parameter for the linearised predictive (above), which is taken at μ: a posterior may
  /// refuse while its parameters hold a sample.
  virtual std::vector<CovarianceBlock> covariance_blocks();
  /// True when the posterior's own predictive is the linearised (probit) one rather than Monte
  /// Carlo sampling (a Laplace posterior fitted with `predictive: probit`).
  virtual bool linearised_predictive() const { return false; }
  /// Draws θ = μ + Σ^{1/2} ε into the parameters from the given standard-normal ε (one tensor per
  /// parameter, its shape, parameter order) instead of the posterior's generator: the test and
  /// parity hook (Python's `sample(standard_normal=...)`). `train` as in sample_parameters.
  virtual void sample_given_noise(bool train, const std::vector<::at::Tensor>& standard_normal) = 0;
};

}  // namespace blr::torch
