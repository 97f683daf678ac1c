#include "blr/torch/predictive/new_data.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/torch/posterior/laplace_predictive.hpp"
#include "blr/torch/metrics/metrics.hpp"
#include "blr/torch/optim/registry.hpp"
#include "blr/torch/optim/variational.hpp"
#include "blr/torch/predictive/predictive.hpp"
#include "blr/torch/metrics/regression.hpp"

namespace blr::torch {

PredictiveMethod parse_predictive_method(const std::string& text) {
  // "mc" is the spelling before 2026-11-29 (and laplace-torch's); monte-carlo is every door's.
  if (text == "monte-carlo" || text == "mc") return PredictiveMethod::kMonteCarlo;
  if (text == "probit") return PredictiveMethod::kProbit;
  throw Error(fmt::format("Option 'predictive' must be monte-carlo or probit; got '{}'.", text));
}

NewDataPrediction predict_new_data(const Model& model, ::torch::optim::Optimizer& optimizer,
                                   const at::Tensor& inputs, int samples,
                                   PredictiveMethod method) {
  check(samples >= 1, fmt::format("Option 'samples' must be at least 1; got {}.", samples));
  NewDataPrediction out;
  auto* v = as_variational(optimizer);
  const bool posterior = v != nullptr && v->has_posterior();
  if (method == PredictiveMethod::kProbit) {
    if (auto* gaussian = as_gaussian_posterior(optimizer); gaussian != nullptr && posterior) {
      out.log_probs = linearised_probit_log_probs(model, *gaussian, inputs);
    } else {
      throw Error(fmt::format(
          "The probit predictive needs a Gaussian posterior ({}); this checkpoint has none, so "
          "use --predictive monte-carlo.",
          fmt::join(gaussian_posterior_names(), ", ")));
    }
    out.method = "probit";
  } else if (posterior) {
    out.log_probs = predictive_log_probs(model, *v, inputs, samples);
    out.method = "monte-carlo";
    out.samples = samples;
  } else {
    out.log_probs = predict_log_probs(model, inputs);
    out.method = "mean";
  }
  // Renormalised in double: a float32 network's log-softmax leaves Σ p − 1 at float32 round-off
  // (~1e-7); the rows written out sum to 1 to double precision.
  const auto lp = out.log_probs.detach().to(at::kCPU, at::kDouble);
  out.log_probs = (lp - at::logsumexp(lp, {1}, /*keepdim=*/true)).contiguous();
  out.entropy = predictive_entropy(out.log_probs);
  return out;
}

NewDataRegression predict_new_regression(const Model& model, ::torch::optim::Optimizer& optimizer,
                                         const at::Tensor& inputs, int samples,
                                         PredictiveMethod method,
                                         const std::vector<double>& target_mean,
                                         const std::vector<double>& target_sd, double noise_std) {
  check(samples >= 1, fmt::format("Option 'samples' must be at least 1; got {}.", samples));
  const auto d = static_cast<int64_t>(target_sd.size());
  check(d >= 1 && target_mean.size() == target_sd.size(),
        "A regression's target mean and standard deviation must have one entry per output.");
  check(noise_std > 0 && std::isfinite(noise_std),
        fmt::format("The noise standard deviation must be positive and finite; got {}.", noise_std));
  const int64_t n = inputs.size(0);
  NewDataRegression out;
  auto* v = as_variational(optimizer);
  const auto m = at::tensor(target_mean, at::kDouble);
  const auto s = at::tensor(target_sd, at::kDouble);
  if (method == PredictiveMethod::kProbit) {
    // The linearised predictive N(f*, diag(JΣJᵀ) + σ²), exact for the linearised network.
    std::pair<at::Tensor, at::Tensor> linearised;
    if (auto* gaussian = as_gaussian_posterior(optimizer);
        gaussian != nullptr && v != nullptr && v->has_posterior()) {
      linearised = linearised_outputs(model, *gaussian, inputs);
    } else {
      throw Error(fmt::format(
          "The linearised predictive (--predictive probit) needs a Gaussian posterior ({}); this "
          "checkpoint has none, so use --predictive monte-carlo.",
          fmt::join(gaussian_posterior_names(), ", ")));
    }
    const auto f = linearised.first.to(at::kCPU, at::kDouble).reshape({n, d});
    const auto var = linearised.second.to(at::kCPU, at::kDouble).reshape({n, d});
    out.method = "probit";
    out.mean = (f * s + m).contiguous();
    out.sd = ((var + noise_std * noise_std).sqrt() * s).contiguous();
    return out;
  }
  at::Tensor outputs;  // K×N×D on the standardised scale (K = 1 for a point estimate)
  if (v != nullptr && v->has_posterior()) {
    outputs = predictive_outputs(model, *v, {inputs}, samples)[0];
    out.method = "monte-carlo";
    out.samples = samples;
  } else {
    outputs = predict_outputs(model, inputs).unsqueeze(0);
    out.method = "mean";
  }
  const auto f = outputs.detach().to(at::kCPU, at::kDouble).reshape({-1, n, d});
  const auto moments = predictive_moments(f, at::full({d}, noise_std, at::kDouble));
  out.mean = (moments.mean * s + m).contiguous();
  out.sd = (moments.sd * s).contiguous();
  return out;
}

}  // namespace blr::torch
