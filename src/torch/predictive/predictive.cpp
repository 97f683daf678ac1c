#include "blr/torch/predictive/predictive.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/nn/functional/activation.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/torch/posterior/laplace_predictive.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/optim/variational.hpp"

namespace blr::torch {

VariationalOptimizer* as_variational(::torch::optim::Optimizer& optimizer) {
  return dynamic_cast<VariationalOptimizer*>(&optimizer);
}

namespace {

at::Tensor log_probs_in_batches(const Model& model, const at::Tensor& inputs, int64_t batch_size) {
  check(batch_size >= 1, "The prediction batch size must be positive.");
  ::torch::NoGradGuard no_grad;
  std::vector<at::Tensor> parts;
  for (int64_t start = 0; start < inputs.size(0); start += batch_size) {
    const auto end = std::min(inputs.size(0), start + batch_size);
    parts.push_back(at::log_softmax(model.forward(inputs.slice(0, start, end)), -1));
  }
  return at::cat(parts, 0);
}

at::Tensor outputs_in_batches(const Model& model, const at::Tensor& inputs, int64_t batch_size) {
  check(batch_size >= 1, "The prediction batch size must be positive.");
  ::torch::NoGradGuard no_grad;
  std::vector<at::Tensor> parts;
  for (int64_t start = 0; start < inputs.size(0); start += batch_size) {
    const auto end = std::min(inputs.size(0), start + batch_size);
    parts.push_back(model.forward(inputs.slice(0, start, end)));
  }
  return at::cat(parts, 0);
}

}  // namespace

at::Tensor predict_outputs(const Model& model, const at::Tensor& inputs, int64_t batch_size) {
  EvalMode eval(model);
  return outputs_in_batches(model, inputs, batch_size);
}

std::vector<at::Tensor> predictive_outputs(const Model& model, VariationalOptimizer& optimizer,
                                           const std::vector<at::Tensor>& input_sets, int samples,
                                           int64_t batch_size, const SampleProgress& progress) {
  check(samples >= 1,
        fmt::format("The number of test samples must be at least 1; got {}.", samples));
  EvalMode eval(model);
  std::vector<std::vector<at::Tensor>> draws(input_sets.size());
  for (int s = 0; s < samples; ++s) {
    SampledParameters sampled(optimizer, /*train=*/false);
    for (size_t d = 0; d < input_sets.size(); ++d) {
      draws[d].push_back(outputs_in_batches(model, input_sets[d], batch_size));
    }
    if (progress) progress(s + 1, samples);
  }
  std::vector<at::Tensor> out;
  for (auto& d : draws) out.push_back(at::stack(d, 0));
  return out;
}

at::Tensor predict_log_probs(const Model& model, const at::Tensor& inputs, int64_t batch_size) {
  EvalMode eval(model);
  return log_probs_in_batches(model, inputs, batch_size);
}

std::vector<at::Tensor> predictive_log_probs(const Model& model, VariationalOptimizer& optimizer,
                                             const std::vector<at::Tensor>& input_sets, int samples,
                                             int64_t batch_size, const SampleProgress& progress) {
  check(samples >= 1,
        fmt::format("The number of test samples must be at least 1; got {}.", samples));
  // A posterior may ask for its linearised probit predictive instead of sampling (a Laplace
  // posterior fitted with `predictive: probit`).
  if (auto* gaussian = as_gaussian_posterior(optimizer);
      gaussian != nullptr && gaussian->linearised_predictive()) {
    std::vector<at::Tensor> out;
    for (const auto& x : input_sets) out.push_back(linearised_probit_log_probs(model, *gaussian, x));
    return out;
  }
  EvalMode eval(model);
  std::vector<at::Tensor> acc(input_sets.size());
  for (int s = 0; s < samples; ++s) {
    SampledParameters sampled(optimizer, /*train=*/false);
    for (size_t d = 0; d < input_sets.size(); ++d) {
      auto lp = log_probs_in_batches(model, input_sets[d], batch_size).to(at::kDouble);
      acc[d] = s == 0 ? lp : at::logaddexp(acc[d], lp);
    }
    if (progress) progress(s + 1, samples);
  }
  const double log_k = std::log(static_cast<double>(samples));
  for (auto& a : acc) a = a - log_k;
  return acc;
}

std::vector<std::pair<at::Tensor, at::Tensor>> linearised_regression_outputs(
    const Model& model, VariationalOptimizer& optimizer, const std::vector<at::Tensor>& input_sets) {
  std::vector<std::pair<at::Tensor, at::Tensor>> out;
  if (auto* gaussian = as_gaussian_posterior(optimizer);
      gaussian != nullptr && gaussian->linearised_predictive()) {
    for (const auto& x : input_sets) out.push_back(linearised_outputs(model, *gaussian, x));
  }
  return out;
}

at::Tensor predictive_log_probs(const Model& model, VariationalOptimizer& optimizer,
                                const at::Tensor& inputs, int samples, int64_t batch_size) {
  return predictive_log_probs(model, optimizer, std::vector<at::Tensor>{inputs}, samples,
                              batch_size)[0];
}

std::vector<at::Tensor> posterior_variance(::torch::optim::Optimizer& optimizer) {
  if (auto* v = as_variational(optimizer); v != nullptr && v->has_posterior()) {
    return v->posterior_variance();
  }
  return {};
}

}  // namespace blr::torch
