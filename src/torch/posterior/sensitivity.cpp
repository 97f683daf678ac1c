// The memory-perturbation equation for networks (see blr/torch/posterior/sensitivity.hpp).
#include "blr/torch/posterior/sensitivity.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "blr/core/error.hpp"
#include "blr/torch/optim/libtorch_state_key.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/curvature/squared_gradients.hpp"

namespace blr::torch {

namespace {

/// "IVON, VOGN, ..., Laplace": the optimizers with a Gaussian posterior, from the registry.
std::string gaussian_names() { return fmt::format("{}", fmt::join(gaussian_posterior_names(), ", ")); }

std::string no_variance() {
  return fmt::format(
      "This optimizer holds no posterior variance (only a Gaussian posterior does — {} — and "
      "AdamW's second moment); fit a Laplace posterior to its checkpoint first (blr laplace "
      "--checkpoint C --save P) and use P.",
      gaussian_names());
}

::torch::optim::AdamW* as_adamw(::torch::optim::Optimizer& optimizer) {
  return as_libtorch_adamw(optimizer);
}

}  // namespace

void check_has_posterior_variance(::torch::optim::Optimizer& optimizer) {
  if (as_gaussian_posterior(optimizer) != nullptr) return;
  check(as_adamw(optimizer) != nullptr, no_variance());
}

PosteriorVariance posterior_variance(::torch::optim::Optimizer& optimizer, int64_t examples) {
  check(examples >= 1, "The posterior variance needs the training-set size N >= 1; got {}.",
        examples);
  PosteriorVariance out;
  if (auto* gaussian = as_gaussian_posterior(optimizer)) {
    check(gaussian->posterior_ready(),
          "This Laplace posterior has no curvature yet; fit it with blr laplace.");
    out.variance = gaussian->marginal_variance();
    out.source = gaussian->kronecker()
                     ? gaussian->posterior_name() + " marginal variances (diagonal of the inverse)"
                     : gaussian->posterior_name() + " variance";
    return out;
  }
  if (auto* adamw = as_adamw(optimizer)) {
    for (const auto& group : adamw->param_groups()) {
      const auto& o = static_cast<const ::torch::optim::AdamWOptions&>(group.options());
      for (const auto& p : group.params()) {
        auto it = adamw->state().find(libtorch_state_key(adamw->state(), p));
        check(it != adamw->state().end(),
              "This AdamW checkpoint holds no second moment (it took no step); train it first.");
        const auto& state = static_cast<const ::torch::optim::AdamWParamState&>(*it->second);
        out.variance.push_back(adamw_posterior_variance(state.exp_avg_sq(), examples,
                                                        o.weight_decay()));
      }
    }
    out.source = "AdamW second moment, σ² = 1/(N·√v + N·weight_decay)";
    return out;
  }
  throw Error(no_variance());
}

::at::Tensor adamw_posterior_variance(const ::at::Tensor& exp_avg_sq, int64_t examples,
                                      double weight_decay) {
  check(examples >= 1, "The number of training examples must be at least 1; got {}.", examples);
  check(weight_decay >= 0 && std::isfinite(weight_decay),
        "AdamW's weight decay must be a finite number ≥ 0; got {}.", weight_decay);
  const double n = static_cast<double>(examples);
  const auto precision = exp_avg_sq.sqrt() * n + n * weight_decay;
  check((precision > 0).all().item<bool>(),
        "AdamW's second moment is zero for some weights and its weight decay is 0, so "
        "σ² = 1/(N√v + δ) is infinite there; train with --adamw-weight-decay > 0.");
  return precision.reciprocal();
}

void NetworkSensitivityOptions::validate() const {
  check(batch_size >= 1, "Option 'batch-size' of the sensitivities must be at least 1; got {}.",
        batch_size);
}

NetworkSensitivity network_sensitivity(const Model& model, const std::vector<::at::Tensor>& variance,
                                       const ::at::Tensor& inputs, const ::at::Tensor& labels,
                                       const NetworkSensitivityOptions& options) {
  options.validate();
  const auto named = model.named_parameters();
  check(variance.size() == named.size(),
        "The posterior variance has {} tensors but the model has {} parameters.", variance.size(),
        named.size());
  for (size_t j = 0; j < named.size(); ++j) {
    check(variance[j].defined() && variance[j].sizes() == named[j].second.sizes(),
          "The posterior variance of parameter '{}' has another shape than the parameter.",
          named[j].first);
    check((variance[j] >= 0).all().item<bool>() && ::at::isfinite(variance[j]).all().item<bool>(),
          "The posterior variance of parameter '{}' is negative or not finite somewhere.",
          named[j].first);
  }
  const int64_t n = inputs.size(0);
  check(n >= 1 && labels.dim() == 1 && labels.size(0) == n,
        "The sensitivities need N >= 1 inputs and one label per input; got {} inputs and {} "
        "labels.",
        n, labels.numel());
  const EvalMode eval(model);
  std::vector<::at::Tensor> logits, variances;
  for (int64_t begin = 0; begin < n; begin += options.batch_size) {
    const int64_t m = std::min(options.batch_size, n - begin);
    const auto x = inputs.narrow(0, begin, m);
    const auto f = model.forward(x);
    check(f.dim() == 2 && f.size(0) == m,
          "The model's output has shape [{}] for {} inputs; the sensitivities need N×K logits.",
          fmt::join(f.sizes(), ", "), m);
    const int64_t k_classes = f.size(1);
    std::vector<::at::Tensor> v(static_cast<size_t>(k_classes));
    for (int64_t k = 0; k < k_classes; ++k) {
      v[static_cast<size_t>(k)] = weighted_squared_gradient_norms(
          f.select(1, k).sum(), named, variance, m, /*retain_graph=*/k + 1 < k_classes);
    }
    logits.push_back(f.detach().to(::at::kDouble));
    variances.push_back(::at::stack(v, 1));
  }
  ::at::NoGradGuard no_grad;
  NetworkSensitivity s;
  s.logits = ::at::cat(logits);
  s.variance = ::at::cat(variances);
  const int64_t k_classes = s.logits.size(1);
  const auto y = labels.to(::at::kLong).to(s.logits.device());
  check((y >= 0).all().item<bool>() && (y < k_classes).all().item<bool>(),
        "A label is outside the model's {} classes.", k_classes);
  const auto p = ::at::softmax(s.logits, 1);
  s.error = p - ::at::one_hot(y, k_classes).to(::at::kDouble);
  s.deviation = s.variance * s.error;
  s.score = (s.error * p * (1 - p) * s.variance).abs().sum(1);
  const auto nll_of = [&](const ::at::Tensor& f) {
    return -::at::log_softmax(f, 1).gather(1, y.unsqueeze(1)).mean().item<double>();
  };
  const auto accuracy_of = [&](const ::at::Tensor& f) {
    return f.argmax(1).eq(y).to(::at::kDouble).mean().item<double>();
  };
  const auto loo_logits = s.logits + s.deviation;
  s.loo_nll = nll_of(loo_logits);
  s.loo_accuracy = accuracy_of(loo_logits);
  s.train_nll = nll_of(s.logits);
  s.train_accuracy = accuracy_of(s.logits);
  return s;
}

::at::Tensor class_scores(const NetworkSensitivity& s, const ::at::Tensor& labels) {
  const auto y = labels.to(::at::kLong).to(s.score.device());
  return ::at::zeros({s.logits.size(1)}, s.score.options()).index_add_(0, y, s.score);
}

std::vector<int64_t> ranked_examples(const ::at::Tensor& score, int64_t k, bool largest) {
  const auto c = score.to(::at::kDouble).contiguous().cpu();
  const double* v = c.data_ptr<double>();
  std::vector<int64_t> order(static_cast<size_t>(c.numel()));
  std::iota(order.begin(), order.end(), int64_t{0});
  k = std::clamp<int64_t>(k, 0, c.numel());
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
    return largest ? (v[a] > v[b] || (v[a] == v[b] && a < b))
                   : (v[a] < v[b] || (v[a] == v[b] && a < b));
  });
  order.resize(static_cast<size_t>(k));
  return order;
}

}  // namespace blr::torch
