// The linearised probit predictive of a Gaussian posterior (laplace_predictive.hpp).
#include "blr/torch/posterior/laplace_predictive.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/torch/curvature/squared_gradients.hpp"

namespace blr::torch {

::at::Tensor probit_log_probs(const ::at::Tensor& logits, const ::at::Tensor& variance) {
  const auto f = logits.to(::at::kDouble);
  const auto scale = (variance.to(::at::kDouble) * (std::numbers::pi / 8.0) + 1.0).rsqrt();
  return ::at::log_softmax(f * scale, -1);
}

namespace {

/// The logits (N×C, double) and v_k = Σ_j w_j (∂f_k/∂θ_j)² (N×C, double) in batches, over the
/// parameters `subset` with weights (σ²) `weights` (and Kronecker bases where given).
std::pair<::at::Tensor, ::at::Tensor> linearised_logits(const Model& model,
                                                        const NamedParameters& subset,
                                                        const std::vector<::at::Tensor>& weights,
                                                        const std::vector<GradientBasis>& bases,
                                                        const ::at::Tensor& inputs,
                                                        int64_t batch_size) {
  check(batch_size >= 1,
        fmt::format("The linearised predictive's batch size must be at least 1; got {}.",
                    batch_size));
  const EvalMode eval(model);
  ::at::AutoGradMode grad_mode(true);
  std::vector<::at::Tensor> logits, variances;
  const int64_t n = inputs.size(0);
  for (int64_t begin = 0; begin < n; begin += batch_size) {
    const int64_t m = std::min(batch_size, n - begin);
    auto f = model.forward(inputs.narrow(0, begin, m));
    if (f.dim() == 1) f = f.unsqueeze(1);  // a regression's one output per example
    check(f.dim() == 2 && f.size(0) == m,
          fmt::format("The model's output has shape [{}] for {} inputs; the linearised "
                      "predictive needs N×C logits (or N×D regression outputs).",
                      fmt::join(f.sizes(), ", "), m));
    const int64_t classes = f.size(1);
    std::vector<::at::Tensor> v;
    for (int64_t k = 0; k < classes; ++k) {
      v.push_back(weighted_squared_gradient_norms(f.select(1, k).sum(), subset, weights, m,
                                                  /*retain_graph=*/k + 1 < classes, {}, bases));
    }
    logits.push_back(f.detach().to(::at::kDouble));
    variances.push_back(::at::stack(v, 1));
  }
  return {::at::cat(logits), ::at::cat(variances)};
}

/// The logits (N×C, double) and v (N×C, double) in batches, Σ the posterior's covariance blocks.
std::pair<::at::Tensor, ::at::Tensor> logits_and_variance(const Model& model,
                                                          GaussianPosterior& posterior,
                                                          const ::at::Tensor& inputs,
                                                          int64_t batch_size) {
  check(batch_size >= 1,
        fmt::format("The linearised predictive's batch size must be at least 1; got {}.",
                    batch_size));
  const auto named = model.named_parameters();
  auto blocks = posterior.covariance_blocks();  // checks that it is fitted and not sampled
  check(blocks.size() == named.size(),
        fmt::format("The {} has {} parameters but the model has {}.", posterior.posterior_name(),
                    blocks.size(), named.size()));
  NamedParameters subset;
  std::vector<::at::Tensor> weights;
  std::vector<GradientBasis> bases;
  for (size_t j = 0; j < named.size(); ++j) {
    auto& block = blocks[j];
    if (!block.weights.defined()) continue;  // outside the posterior: Σ = 0
    check(block.weights.sizes() == named[j].second.sizes(),
          fmt::format("The {}'s parameter {} has another shape than the model's '{}'.",
                      posterior.posterior_name(), j, named[j].first));
    subset.push_back(named[j]);
    weights.push_back(std::move(block.weights));
    bases.push_back(block.kronecker() ? GradientBasis{block.output_basis, block.input_basis}
                                      : GradientBasis{});
  }
  return linearised_logits(model, subset, weights, bases, inputs, batch_size);
}

}  // namespace

std::pair<::at::Tensor, ::at::Tensor> linearised_outputs(const Model& model,
                                                         GaussianPosterior& posterior,
                                                         const ::at::Tensor& inputs,
                                                         int64_t batch_size) {
  return logits_and_variance(model, posterior, inputs, batch_size);
}

::at::Tensor linearised_logit_variance(const Model& model, GaussianPosterior& posterior,
                                       const ::at::Tensor& inputs, int64_t batch_size) {
  return logits_and_variance(model, posterior, inputs, batch_size).second;
}

::at::Tensor linearised_probit_log_probs(const Model& model, GaussianPosterior& posterior,
                                         const ::at::Tensor& inputs, int64_t batch_size) {
  const auto [f, v] = logits_and_variance(model, posterior, inputs, batch_size);
  return probit_log_probs(f, v);
}

std::pair<::at::Tensor, ::at::Tensor> diagonal_linearised_outputs(
    const Model& model, const std::vector<::at::Tensor>& variance, const ::at::Tensor& inputs,
    int64_t batch_size) {
  const auto named = model.named_parameters();
  check(variance.size() == named.size(),
        fmt::format("The posterior has {} parameters but the model has {}; the linearised "
                    "predictive needs σ² for every parameter.",
                    variance.size(), named.size()));
  std::vector<GradientBasis> bases(named.size());
  for (size_t j = 0; j < named.size(); ++j) {
    check(variance[j].sizes() == named[j].second.sizes(),
          fmt::format("The posterior's parameter {} has another shape than the model's '{}'.", j,
                      named[j].first));
  }
  return linearised_logits(model, named, variance, bases, inputs, batch_size);
}

::at::Tensor diagonal_probit_log_probs(const Model& model, const std::vector<::at::Tensor>& variance,
                                       const ::at::Tensor& inputs, int64_t batch_size) {
  const auto [f, v] = diagonal_linearised_outputs(model, variance, inputs, batch_size);
  return probit_log_probs(f, v);
}

}  // namespace blr::torch
