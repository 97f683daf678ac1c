// Predictions of any model (nn/model.hpp: an nn::Module or a TorchScript module that maps inputs
// to logits) trained with a (variational) optimizer.
//
//  * at the mean:   log p(y|x, μ) = log_softmax(f_μ(x))  (the parameters as they are; over the
//                   last dimension, so logits of shape (N, T, C) give one distribution per label)
//  * predictive:    log p̄(y|x) = log (1/K) Σ_k softmax(f_θk(x)),  θk ~ q = N(μ, diag(σ²)),
//                   computed in the log domain as logsumexp_k log_softmax(f_θk(x)) − log K
//                   (IVON README "Bayesian model averaging"; Shen et al. 2024 use K = 64);
//                   a Laplace posterior with `predictive probit` gives its linearised probit
//                   predictive instead (laplace_predictive.hpp; no draws)
//  * regression:    the model's outputs (predictive means) at μ, and the outputs of K draws θk
//                   stacked as K×N×… (the mixture's components; metrics/regression.hpp);
//                   a Laplace posterior with `predictive probit` gives its linearised Gaussian
//                   predictive N(f*, diag(JΣJᵀ) + σ²) instead
//  * posterior variance σ² per parameter (passthrough of VariationalOptimizer).
// Each Monte Carlo sample draws θ once for the whole data set (SampledParameters(opt, false): no
// statistics collected) and restores μ afterwards, also when an exception escapes.
#pragma once

#include <ATen/Tensor.h>
#include <torch/optim/optimizer.h>

#include <functional>
#include <utility>
#include <vector>

#include "blr/torch/nn/model.hpp"

namespace blr::torch {

class VariationalOptimizer;

/// The optimizer as a VariationalOptimizer, or nullptr for a point-estimate optimizer.
VariationalOptimizer* as_variational(::torch::optim::Optimizer& optimizer);

/// Log-probabilities (N×C, or N×…×C) at the current parameters, evaluated in batches without gradients.
::at::Tensor predict_log_probs(const Model& model, const ::at::Tensor& inputs,
                               int64_t batch_size = 1000);

/// Posterior-predictive log-probabilities with `samples` ≥ 1 draws from the optimizer's posterior.
::at::Tensor predictive_log_probs(const Model& model, VariationalOptimizer& optimizer,
                                  const ::at::Tensor& inputs, int samples,
                                  int64_t batch_size = 1000);

/// Told after each posterior draw of a predictive: draws done, draws in all (progress with an ETA).
using SampleProgress = std::function<void(int done, int samples)>;

/// Several data sets at once with the SAME parameter draws (e.g. test and shifted test set), so
/// the comparison between them is not blurred by different samples.
std::vector<::at::Tensor> predictive_log_probs(const Model& model, VariationalOptimizer& optimizer,
                                               const std::vector<::at::Tensor>& input_sets,
                                               int samples, int64_t batch_size = 1000,
                                               const SampleProgress& progress = {});

/// The model's outputs (N×…) at the current parameters, in batches without gradients.
::at::Tensor predict_outputs(const Model& model, const ::at::Tensor& inputs,
                             int64_t batch_size = 1000);

/// A regression's linearised predictive where the posterior asks for it (a Laplace posterior with
/// `predictive probit`): per set f* and v = diag(J Σ Jᵀ), both N×D (laplace_predictive.hpp;
/// the predictive is N(f*, v + σ²)); empty for every other optimizer (draws are its predictive).
std::vector<std::pair<::at::Tensor, ::at::Tensor>> linearised_regression_outputs(
    const Model& model, VariationalOptimizer& optimizer, const std::vector<::at::Tensor>& input_sets);

/// The outputs under `samples` ≥ 1 posterior draws, K×N×… per set (the same draws for all sets).
std::vector<::at::Tensor> predictive_outputs(const Model& model, VariationalOptimizer& optimizer,
                                             const std::vector<::at::Tensor>& input_sets,
                                             int samples, int64_t batch_size = 1000,
                                             const SampleProgress& progress = {});

/// σ² per parameter of a variational optimizer (empty for a point-estimate optimizer).
std::vector<::at::Tensor> posterior_variance(::torch::optim::Optimizer& optimizer);

}  // namespace blr::torch
