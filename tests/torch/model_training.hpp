// A few optimizer steps on one fixed minibatch, the trainer's step written out (variational
// optimizers: sample, loss, backward or per-example squared gradients, step): the model tests'
// check that an optimizer trains a model, without the data pipeline.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "blr/torch/optim/registry.hpp"
#include "blr/torch/curvature/squared_gradients.hpp"
#include "blr/torch/optim/variational.hpp"
#include "blr/torch/predictive/predictive.hpp"

namespace blr::torch::testing {

/// Mean cross-entropy of logits (..., C) against labels (...).
inline ::at::Tensor cross_entropy(const ::at::Tensor& logits, const ::at::Tensor& labels) {
  return ::at::nll_loss(::at::log_softmax(logits.flatten(0, -2), -1), labels.flatten());
}

/// Losses at the mean parameters before and after `steps` steps of `optimizer` on (x, y).
inline std::pair<double, double> train_steps(
    const std::function<::at::Tensor(const ::at::Tensor&)>& forward,
    const std::vector<std::pair<std::string, ::at::Tensor>>& named, const std::string& optimizer,
    const OptionValues& options, const ::at::Tensor& x, const ::at::Tensor& y, int steps) {
  std::vector<::at::Tensor> parameters;
  for (const auto& [name, p] : named) parameters.push_back(p);
  auto opt = make_optimizer(optimizer, parameters, options, {x.size(0), 7, x.size(0)});
  auto loss_at_mean = [&] {
    ::torch::NoGradGuard no_grad;
    return cross_entropy(forward(x), y).item<double>();
  };
  const double before = loss_at_mean();
  for (int s = 0; s < steps; ++s) {
    if (auto* v = as_variational(*opt)) {
      SampledParameters sampled(*v, /*train=*/true);
      opt->zero_grad();
      const auto loss = cross_entropy(forward(x), y);
      if (v->needs_squared_gradients()) {
        v->add_squared_gradients(backward_with_squared_gradients(loss, named, x.size(0)));
      } else {
        loss.backward();
      }
    } else {
      opt->zero_grad();
      cross_entropy(forward(x), y).backward();
    }
    opt->step();
  }
  return {before, loss_at_mean()};
}

}  // namespace blr::torch::testing
