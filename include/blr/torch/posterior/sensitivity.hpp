// Sensitivity of a trained network to each of its training examples, and leave-one-out estimates
// without refitting: the memory-perturbation equation (MPE; Nickl, Xu, Tailor, Möllenhoff & Khan,
// "The Memory-Perturbation Equation", NeurIPS 2023; research/algorithms.md §7), for a diagonal
// Gaussian posterior q(θ) = N(μ, diag(σ²)) of a classifier with K classes. The GLM version, with
// the derivation, is blr/inference/sensitivity.hpp; the names of the outputs are the same.
//
// Per training example i, with logits f_i = f(x_i; μ) ∈ R^K, p_i = softmax(f_i) and
// J_i = ∂f_i/∂θ (K × P):
//     e_i  = p_i − onehot(y_i)                         prediction error
//     v_ik = [J_i Σ J_iᵀ]_kk = Σ_j σ_j² (∂f_ik/∂θ_j)²   prediction variance, per class
//     d_i  = v_i ⊙ e_i                                  deviation: the predicted change of f_i when
//                                                       example i is removed, f_i^{\i} − f_i
//     s_i  = Σ_k |e_ik λ_ik v_ik|,  λ_ik = p_ik(1 − p_ik)   score: the predicted L1 change of p_i
//                                                       (first order, through the softmax's
//                                                       diagonal Hessian, as the paper)
// Leave-one-out estimates: f̃_i = f_i + d_i, LOO-NLL ≈ (1/N) Σ_i −log softmax(f̃_i)[y_i], LOO
// accuracy ≈ (1/N) Σ_i [argmax f̃_i = y_i]. Removing a set R (a whole class): the same formula,
// its scores summed over R (the paper's leave-one-class-out).
//
// Where the deviation comes from: one Newton step on the objective without example i from μ,
// with the posterior precision as the Hessian, moves θ by Σ ∇ℓ_i = Σ J_iᵀ e_i; the logits move by
// J_i Σ J_iᵀ e_i, of which the MPE keeps the diagonal (for the GLM it is exact up to the
// leverage correction 1/(1 − h_i v_i)).
//
// Σ from the optimizer of a checkpoint (posterior_variance):
//   IVON, VOGN, OGN, Vadam  their posterior σ² (MeanFieldOptimizer::posterior_variance)
//   Laplace                 1/(N Ĝ + δ) of a `blr laplace` posterior (zero outside its subset)
//   AdamW                   σ² = 1/(N √v + δ), v Adam's second moment (exp_avg_sq, not
//                           bias-corrected) and δ = N·weight_decay, the prior precision that
//                           decoupled weight decay on the mean loss stands for (the paper's code)
// Other point estimates (SGD, ...) have no Σ: fit a Laplace posterior first.
//
// Cost: v needs one backward pass per class: v_ik is the weighted squared norm of the gradient of
// f_ik, which the per-example engine (curvature/squared_gradients.hpp) reads off the graph of Σ_i f_ik;
// for a Linear layer no per-example gradient is formed (r_i += (δ_i²)ᵀ Σ_W (a_i²)).
#pragma once

#include <ATen/Tensor.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <string>
#include <vector>

#include "blr/torch/nn/model.hpp"

namespace blr::torch {

/// σ² per parameter (parameter order) and where it came from, in words.
struct PosteriorVariance {
  std::vector<::at::Tensor> variance;
  std::string source;
};

/// σ² of the optimizer of a trained run (header table); `examples` is N. Throws blr::Error for an
/// optimizer without a Gaussian posterior or second moment, naming what to do instead.
PosteriorVariance posterior_variance(::torch::optim::Optimizer& optimizer, int64_t examples);

/// AdamW's σ² = 1/(N·√v + N·weight_decay) of one parameter from its second moment v (exp_avg_sq,
/// not bias-corrected): the header's formula, once (posterior_variance and the Python package).
::at::Tensor adamw_posterior_variance(const ::at::Tensor& exp_avg_sq, int64_t examples,
                                      double weight_decay);

/// Throws posterior_variance's blr::Error for an optimizer that will never hold σ² (checked
/// before training).
void check_has_posterior_variance(::torch::optim::Optimizer& optimizer);

struct NetworkSensitivityOptions {
  int64_t batch_size = 1000;  ///< examples per forward pass and K backward passes
  void validate() const;
};

/// Per-example quantities (rows in data order) and the leave-one-out estimates.
struct NetworkSensitivity {
  ::at::Tensor logits;     ///< N×K, f_i at μ (double)
  ::at::Tensor error;      ///< N×K, e_i
  ::at::Tensor variance;   ///< N×K, v_i
  ::at::Tensor deviation;  ///< N×K, v_i ⊙ e_i
  ::at::Tensor score;      ///< N, s_i
  double loo_nll = 0.0, loo_accuracy = 0.0;  ///< from f̃_i = f_i + d_i
  double train_nll = 0.0, train_accuracy = 0.0;  ///< at μ, every example in the fit
};

/// The header's quantities for every example of (inputs N×..., labels N) under N(μ, diag(σ²)),
/// μ the model's current parameters; the model is evaluated in evaluation mode.
NetworkSensitivity network_sensitivity(const Model& model, const std::vector<::at::Tensor>& variance,
                                       const ::at::Tensor& inputs, const ::at::Tensor& labels,
                                       const NetworkSensitivityOptions& options = {});

/// Scores summed per class c over the examples labelled c (leave-one-class-out), K entries.
::at::Tensor class_scores(const NetworkSensitivity& s, const ::at::Tensor& labels);

/// Indices of the k largest (descending) or smallest (ascending) scores; ties by index.
std::vector<int64_t> ranked_examples(const ::at::Tensor& score, int64_t k, bool largest);

}  // namespace blr::torch
