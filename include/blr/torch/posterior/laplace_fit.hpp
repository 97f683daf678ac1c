// Fitting the post-hoc Laplace posterior of a trained classifier or regression network
// (optim/laplace.hpp): the diagonal curvature over the training set and the prior precision by the
// Laplace marginal likelihood (MacKay 1992; Immer et al. 2021; Daxberger et al. 2021, "Laplace
// Redux", §2–3).
//
// Classification. Curvature, per example i with logits f_i = f(x_i; θ*), p_i = softmax(f_i),
// J_i = ∂f_i/∂θ:
//   ggn  diag(J_iᵀ Λ_i J_i),  Λ_i = diag(p_i) − p_i p_iᵀ   (the Gauss–Newton of the cross-entropy)
//        computed exactly with C backward passes: Λ_i = Σ_k v_ik v_ikᵀ for v_ik = √p_ik (e_k − p_i),
//        so diag(J_iᵀΛ_iJ_i) = Σ_k (J_iᵀ v_ik)², and J_iᵀ v_ik is the gradient of the pseudo-loss
//        v_ikᵀ f_i (v detached), whose per-example squares the squared-gradient engine
//        (curvature/squared_gradients.hpp) returns for any model it supports;
//   ef   (∇_θ ℓ_i)², ℓ_i = −log p_i[y_i] (the empirical Fisher; one backward pass).
// Regression (likelihood y_i ~ N(f_i, σ² I), D outputs, on the scale the network was trained on):
//   ggn  diag(J_iᵀ J_i)/σ² = Σ_k (∂f_ik/∂θ / σ)²: one backward pass per output, Λ_i = I/σ²;
//   ef   (∇_θ ℓ_i)², ℓ_i = Σ_k [(y_ik − f_ik)²/(2σ²) + log σ + ½ log 2π].
// Both scale with σ alone (ggn as σ⁻², ef as σ⁻⁴), so a fit at one σ gives the fit at any other
// (laplace_with_noise_std), and σ can be chosen by the marginal likelihood with δ, as
// laplace-torch's regression example does by gradient ascent (here by Brent's method on log σ,
// Boost.Math, with δ maximised inside). For a linear model the GGN is the exact Hessian, and with
// no bias the Kronecker posterior of its weight is the exact Bayesian linear regression posterior.
// Ĝ = (1/N) Σ_i (the above). The model is evaluated in evaluation mode (batch norm uses its running
// statistics), at θ* without any change to it.
//
// Kronecker structure (laplace.hpp): per Linear/Conv2d weight the training-set means A, G of the
// K-FAC factors (kronecker_factors.hpp), other parameters the diagonal above. ggn: the same C
// pseudo-losses v_ikᵀ f_i, whose output gradients J_sᵀ v_ik give G = (1/N) Σ_i Σ_k g_ik g_ikᵀ =
// (1/N) Σ_i J_s,iᵀ Λ_i J_s,i (the exact Λ_i, no sampled labels; for one example A ⊗ G is the exact
// GGN block of a Linear weight), A = (1/N) Σ_i a_i a_iᵀ (taken once per batch); ef: the factors of
// the loss itself, G = (1/N) Σ_i g_i g_iᵀ with g_i = ∂ℓ_i/∂s_i.
//
// Subsets: all parameters, or the last layer: the parameters whose module path (the name up to its
// last '.') equals that of the last parameter of the model (e.g. "fc3" of "fc3.weight",
// "fc3.bias"): the layer that produces the logits in blr's models and in the usual nets.
//
// Marginal likelihood of the prior precision δ (diagonal Laplace, P weights in the subset):
//   log Z(δ) = −Σ_i ℓ_i(θ*) − (δ/2)‖θ*_S‖² + (P/2) log δ − (1/2) Σ_j log(N Ĝ_j + δ)
//   (the constant −(P/2) log 2π of the prior cancels against the Gaussian integral's +P/2 log 2π).
//   d log Z / dδ = (1/2) [ Σ_j N Ĝ_j / (δ (N Ĝ_j + δ)) − ‖θ*_S‖² ]: the bracket falls strictly from
//   +∞ (δ → 0, some Ĝ_j > 0) to −‖θ*_S‖² < 0, so log Z has exactly one maximiser, found by
//   bisection on log δ to relative precision 1e-12.
// Kronecker-factored weights enter every sum through the eigenvalues of their curvature block,
// N g_o a_i in place of N Ĝ_j (exact: log det(N G⊗A + δI) = Σ_oi log(N g_o a_i + δ)).
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "blr/torch/nn/model.hpp"
#include "blr/torch/optim/laplace.hpp"

namespace blr::torch {

/// The likelihood the network was trained with.
enum class LaplaceLikelihood {
  kClassification,  ///< categorical over the logits; labels are class indices (N)
  kRegression,      ///< Gaussian N(f, σ² I); targets (N) or (N, D), floating point
};

struct LaplaceCurvatureOptions {
  LaplaceLikelihood likelihood = LaplaceLikelihood::kClassification;
  double noise_std = 1.0;  ///< regression: σ of the Gaussian likelihood (> 0)
  LaplaceSubset subset = LaplaceSubset::kAll;
  LaplaceCurvature curvature = LaplaceCurvature::kGaussNewton;
  LaplaceStructure structure = LaplaceStructure::kDiagonal;
  int64_t batch_size = 500;  ///< examples per forward/backward pass
};

struct LaplaceCurvatureResult {
  /// Ĝ per parameter of model.named_parameters() (undefined outside the subset).
  std::vector<::at::Tensor> curvature;
  /// A, G per parameter (structure kron: defined for the Kronecker-factored weights, whose
  /// `curvature` is then undefined).
  std::vector<KroneckerFactors> factors;
  /// The eigenvalues of each parameter's curvature block: Ĝ, or g aᵀ (out×in) when factored;
  /// undefined outside the subset. The marginal likelihood reads only these.
  std::vector<::at::Tensor> eigenvalues;
  std::vector<std::string> names;  ///< the parameters' names, same order
  int64_t examples = 0;            ///< N
  double nll_sum = 0.0;            ///< Σ_i ℓ_i(θ*) (nats)
  int64_t subset_size = 0;         ///< P
  double subset_norm_squared = 0.0;  ///< ‖θ*_S‖²
  LaplaceLikelihood likelihood = LaplaceLikelihood::kClassification;
  LaplaceCurvature curvature_kind = LaplaceCurvature::kGaussNewton;
  double noise_std = 0.0;             ///< regression: the σ of the curvature and nll_sum (else 0)
  double residual_sum_squares = 0.0;  ///< regression: Σ_ik (y_ik − f_ik)²
  int64_t target_values = 0;          ///< regression: N·D
};

/// Which parameters (by their names, in order) are in the subset.
std::vector<bool> laplace_subset(const std::vector<std::string>& names, LaplaceSubset subset);

/// Ĝ over the examples (inputs N×...; labels N class indices, or regression targets N or N×D)
/// at the model's current parameters.
LaplaceCurvatureResult laplace_curvature(const Model& model, const ::at::Tensor& inputs,
                                         const ::at::Tensor& labels,
                                         const LaplaceCurvatureOptions& options = {});

/// log Z(δ) of the header.
double laplace_log_marginal_likelihood(const LaplaceCurvatureResult& fit, double prior_precision);

/// The δ that maximises log Z(δ) (the header's bisection).
double laplace_optimal_prior_precision(const LaplaceCurvatureResult& fit);

/// A regression fit at another noise σ (> 0): the curvature (and the Kronecker output factors)
/// times (σ_fit/σ)² for ggn or (σ_fit/σ)⁴ for ef, and Σ_i ℓ_i at σ. Exact, no pass over the data.
LaplaceCurvatureResult laplace_with_noise_std(const LaplaceCurvatureResult& fit, double noise_std);

/// The regression noise σ that maximises log Z: at the given δ, or (prior_precision = 0) jointly
/// with δ (δ maximised for each σ). Searched on log σ within a factor 1e4 of the maximum-likelihood
/// σ = √(RSS / (N·D)); a maximiser at the edge of that range is an error naming it.
double laplace_optimal_noise_std(const LaplaceCurvatureResult& fit, double prior_precision = 0.0);

}  // namespace blr::torch
