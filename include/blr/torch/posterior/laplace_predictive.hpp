// The linearised predictive of a Gaussian posterior (optim/gaussian_posterior.hpp: a Laplace
// posterior, optim/laplace.hpp, or any other) with the multiclass probit
// approximation (MacKay 1992; Lu, Ie & Sha 2020, "Mean-field approximations to the Gaussian-softmax
// integral"; Immer, Korzepa & Bauer 2021, AISTATS, the GLM predictive; Daxberger et al. 2021,
// "Laplace Redux", §2 "probit"):
//
//   f(x; θ) ≈ f(x; θ*) + J(θ − θ*),  θ ~ N(θ*, Σ)   ⇒   f ~ N(f*, J Σ Jᵀ),   J = ∂f/∂θ at θ*
//   p(y = k | x) ≈ softmax_k( f*_k / √(1 + π v_k / 8) ),   v_k = [J Σ Jᵀ]_kk
//
// (each logit's probit-scaled mean; the off-diagonal of J Σ Jᵀ is dropped, as in the references).
// v_k per example is read off the graph of Σ_i f_ik (one backward pass per class) by
// weighted_squared_gradient_norms (curvature/squared_gradients.hpp): Σ_j σ_j² (∂f_ik/∂θ_j)² for the
// diagonal parameters of the subset, and for a Kronecker-factored weight the exact
// vec(∂f_ik/∂W)ᵀ Σ_W vec(∂f_ik/∂W) = Σ_ol (U_Gᵀ (∂f_ik/∂W) U_A)²_ol / D_ol (kronecker_gaussian.hpp).
// Parameters outside the subset have Σ = 0 and are not visited. No sampling: the result is
// deterministic. The model is evaluated in evaluation mode.
//
// A regression network's linearised predictive is Gaussian without approximation: with outputs f
// (N×D; an output of shape (N) is one column) and observation noise σ,
//   y | x ~ N(f*, diag(J Σ Jᵀ) + σ² I)   (laplace-torch's "glm" predictive of f_mu, f_var + σ²),
// the same f* and v as above (linearised_outputs, diagonal_linearised_outputs).
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "blr/torch/nn/model.hpp"
#include "blr/torch/optim/gaussian_posterior.hpp"

namespace blr::torch {

/// f* and v = diag(J Σ Jᵀ) per example and output (both N×C or N×D, double), Σ the posterior's
/// covariance blocks (gaussian_posterior.hpp: a Laplace posterior's subset and Kronecker blocks, or
/// the diagonal of any other Gaussian posterior's marginal variances).
std::pair<::at::Tensor, ::at::Tensor> linearised_outputs(const Model& model,
                                                         GaussianPosterior& posterior,
                                                         const ::at::Tensor& inputs,
                                                         int64_t batch_size = 500);

/// The same for a diagonal Gaussian N(μ, diag(σ²)) over every parameter (σ² per parameter in the
/// order of model.named_parameters(), e.g. VariationalOptimizer::posterior_variance()).
std::pair<::at::Tensor, ::at::Tensor> diagonal_linearised_outputs(
    const Model& model, const std::vector<::at::Tensor>& variance, const ::at::Tensor& inputs,
    int64_t batch_size = 500);

/// v = diag(J Σ Jᵀ) per example and class (N×C, double), Σ the posterior's covariance.
::at::Tensor linearised_logit_variance(const Model& model, GaussianPosterior& posterior,
                                       const ::at::Tensor& inputs, int64_t batch_size = 500);

/// The probit approximation's log-probabilities (N×C, double).
::at::Tensor linearised_probit_log_probs(const Model& model, GaussianPosterior& posterior,
                                         const ::at::Tensor& inputs, int64_t batch_size = 500);

/// The same linearised probit predictive for a diagonal Gaussian posterior N(μ, diag(σ²)) over
/// every parameter of the model, at the parameters as they are (μ): `variance` is σ² per
/// parameter in the order of model.named_parameters() (VariationalOptimizer::posterior_variance()
/// of IVON, VOGN, Vadam; Σ = diag(σ²) in v_k = Σ_j σ_j² (∂f_k/∂θ_j)²).
::at::Tensor diagonal_probit_log_probs(const Model& model,
                                       const std::vector<::at::Tensor>& variance,
                                       const ::at::Tensor& inputs, int64_t batch_size = 500);

/// log softmax(f / √(1 + π v / 8)) for logits f and variances v (N×C): the formula, once.
::at::Tensor probit_log_probs(const ::at::Tensor& logits, const ::at::Tensor& variance);

}  // namespace blr::torch
