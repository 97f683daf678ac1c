// Retraining checks of the memory-perturbation estimates (see blr/torch/posterior/sensitivity_validation.hpp).
#include "blr/torch/posterior/sensitivity_validation.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "blr/core/error.hpp"

namespace blr::torch {
namespace {

// Copies μ into the model's parameters when it goes out of scope.
class RestoreParameters {
 public:
  explicit RestoreParameters(const Model& model) : params_(model.parameters()) {
    for (const auto& p : params_) saved_.push_back(p.detach().clone());
  }
  ~RestoreParameters() { reset(); }
  void reset() {
    ::at::NoGradGuard no_grad;
    for (size_t j = 0; j < params_.size(); ++j) params_[j].copy_(saved_[j]);
  }
  RestoreParameters(const RestoreParameters&) = delete;
  RestoreParameters& operator=(const RestoreParameters&) = delete;

 private:
  std::vector<::at::Tensor> params_, saved_;
};

// The header's T steps from μ with example weights `keep` (N, 0/1); returns the logits of every
// example afterwards (double).
::at::Tensor retrain(const Model& model, RestoreParameters& mu, const ::at::Tensor& inputs,
                     const ::at::Tensor& labels, const ::at::Tensor& keep,
                     const RetrainOptions& o) {
  mu.reset();
  const auto params = model.parameters();
  std::vector<::at::Tensor> buffers;
  for (const auto& p : params) buffers.push_back(::at::zeros_like(p));
  const auto y = labels.to(::at::kLong);
  const auto w = keep.to(inputs.device()).to(::at::kFloat);
  const double kept = w.sum().item<double>();
  for (int64_t t = 0; t < o.steps; ++t) {
    const auto losses =
        -::at::log_softmax(model.forward(inputs), 1).gather(1, y.unsqueeze(1)).squeeze(1);
    ::at::Tensor loss = (losses * w.to(losses.scalar_type())).sum() / kept;
    if (o.weight_decay > 0) {
      for (const auto& p : params) loss = loss + 0.5 * o.weight_decay * p.square().sum();
    }
    const auto grads = ::torch::autograd::grad(std::vector<::at::Tensor>{loss}, params);
    const double rate =
        o.learning_rate * 0.5 * (1.0 + std::cos(M_PI * static_cast<double>(t) /
                                                static_cast<double>(o.steps)));
    ::at::NoGradGuard no_grad;
    for (size_t j = 0; j < params.size(); ++j) {
      buffers[j].mul_(o.momentum).add_(grads[j]);
      params[j].add_(buffers[j], -rate);
    }
  }
  ::at::NoGradGuard no_grad;
  return model.forward(inputs).to(::at::kDouble);
}

double mean_l1(const ::at::Tensor& a, const ::at::Tensor& b) {
  return (::at::softmax(a, 1) - ::at::softmax(b, 1)).abs().sum(1).mean().item<double>();
}

std::vector<double> to_vector(const ::at::Tensor& t) {
  const auto c = t.to(::at::kDouble).contiguous().cpu();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

void check_inputs(const NetworkSensitivity& s, const ::at::Tensor& inputs,
                  const ::at::Tensor& labels) {
  check(s.score.defined() && s.score.size(0) == inputs.size(0) && labels.size(0) == inputs.size(0),
        "The retraining check needs the sensitivities of the same {} training examples.",
        inputs.size(0));
}

}  // namespace

void RetrainOptions::validate() const {
  check(examples >= 2, "Option 'retrain' must be at least 2 (a correlation needs two points); got {}.",
        examples);
  check(steps >= 1, "Option 'retrain-steps' must be at least 1; got {}.", steps);
  check(learning_rate > 0 && std::isfinite(learning_rate),
        "Option 'retrain-lr' must be a positive finite number; got {}.", learning_rate);
  check(momentum >= 0 && momentum < 1, "Option 'retrain-momentum' must be in [0, 1); got {}.",
        momentum);
  check(weight_decay >= 0 && std::isfinite(weight_decay),
        "Option 'retrain-weight-decay' must be a non-negative finite number; got {}.",
        weight_decay);
}

double pearson_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  check(a.size() == b.size() && a.size() >= 2,
        "A correlation needs two samples of equal length >= 2; got {} and {}.", a.size(), b.size());
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n;
  const double mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  if (saa == 0 || sbb == 0) return std::numeric_limits<double>::quiet_NaN();
  return sab / std::sqrt(saa * sbb);
}

RetrainValidation validate_by_retraining(const Model& model, const NetworkSensitivity& s,
                                         const ::at::Tensor& inputs, const ::at::Tensor& labels,
                                         const RetrainOptions& options) {
  options.validate();
  check_inputs(s, inputs, labels);
  const int64_t n = inputs.size(0);
  check(options.examples <= n, "Option 'retrain' asks for {} removals but there are {} examples.",
        options.examples, n);
  const EvalMode eval(model);
  RestoreParameters mu(model);
  RetrainValidation v;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::mt19937_64 rng(options.seed);
  std::shuffle(order.begin(), order.end(), rng);
  v.removed.assign(order.begin(), order.begin() + options.examples);

  const auto all = ::at::ones({n}, ::at::kFloat);
  const auto reference = retrain(model, mu, inputs, labels, all, options);
  v.reference_shift = mean_l1(reference, s.logits.to(reference.device()));
  std::vector<::at::Tensor> true_dev, pred_dev;
  for (const int64_t i : v.removed) {
    auto keep = all.clone();
    keep[i] = 0.0f;
    const auto f = retrain(model, mu, inputs, labels, keep, options);
    const auto fi = f.narrow(0, i, 1), ri = reference.narrow(0, i, 1);
    v.truth.push_back(mean_l1(fi, ri));
    v.predicted.push_back(s.score[i].item<double>());
    true_dev.push_back(fi - ri);
    pred_dev.push_back(s.deviation.narrow(0, i, 1).to(f.device()));
  }
  v.true_deviation = ::at::cat(true_dev);
  v.predicted_deviation = ::at::cat(pred_dev);
  v.score_correlation = pearson_correlation(v.predicted, v.truth);
  v.deviation_correlation = pearson_correlation(to_vector(v.predicted_deviation.flatten()),
                                                to_vector(v.true_deviation.flatten()));
  return v;
}

RetrainValidation validate_classes_by_retraining(const Model& model, const NetworkSensitivity& s,
                                                 const ::at::Tensor& inputs,
                                                 const ::at::Tensor& labels,
                                                 const RetrainOptions& options) {
  options.validate();
  check_inputs(s, inputs, labels);
  const int64_t n = inputs.size(0);
  const EvalMode eval(model);
  RestoreParameters mu(model);
  RetrainValidation v;
  const auto y = labels.to(::at::kLong).cpu();
  const auto predicted = class_scores(s, y);
  const auto all = ::at::ones({n}, ::at::kFloat);
  const auto reference = retrain(model, mu, inputs, labels, all, options);
  v.reference_shift = mean_l1(reference, s.logits.to(reference.device()));
  for (int64_t c = 0; c < s.logits.size(1); ++c) {
    const auto members = y.eq(c);
    if (members.sum().item<int64_t>() == 0) continue;
    const auto keep = all.masked_fill(members, 0.0);
    const auto f = retrain(model, mu, inputs, labels, keep, options);
    const auto idx = members.nonzero().squeeze(1).to(f.device());
    const auto change = (::at::softmax(f.index_select(0, idx), 1) -
                         ::at::softmax(reference.index_select(0, idx), 1))
                            .abs()
                            .sum();
    v.removed.push_back(c);
    v.truth.push_back(change.item<double>());
    v.predicted.push_back(predicted[c].item<double>());
  }
  v.score_correlation = pearson_correlation(v.predicted, v.truth);
  v.deviation_correlation = std::numeric_limits<double>::quiet_NaN();
  return v;
}

}  // namespace blr::torch
