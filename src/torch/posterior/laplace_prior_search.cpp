// The prior precision of a Laplace posterior by its validation NLL (laplace_prior_search.hpp).
#include "blr/torch/posterior/laplace_prior_search.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/torch/posterior/laplace_predictive.hpp"
#include "blr/torch/predictive/predictive.hpp"
#include "blr/torch/metrics/regression.hpp"

namespace blr::torch {

void PriorPrecisionGrid::validate() const {
  check(min > 0 && std::isfinite(min) && max >= min && std::isfinite(max),
        fmt::format("The prior-precision grid needs 0 < min ≤ max < ∞; got min {} and max {}.",
                    min, max));
  check(points >= 1, fmt::format("The prior-precision grid needs at least one point; got {}.",
                                 points));
  check(points > 1 || min == max,
        fmt::format("A prior-precision grid of one point needs min = max; got {} and {}.", min,
                    max));
}

std::vector<double> PriorPrecisionGrid::values() const {
  validate();
  std::vector<double> out;
  const double span = std::log(max / min);
  for (int k = 0; k < points; ++k) {
    out.push_back(k == points - 1 ? max : min * std::exp(span * k / std::max(points - 1, 1)));
  }
  return out;
}

PriorPrecisionSearch laplace_prior_precision_search(const Model& model, LaplacePosterior& posterior,
                                                    const ::at::Tensor& inputs,
                                                    const ::at::Tensor& labels, int samples,
                                                    const PriorPrecisionGrid& grid,
                                                    double noise_std) {
  check(inputs.defined() && inputs.size(0) > 0,
        "The prior precision is chosen on validation examples, and there are none; train with "
        "--validation FRACTION.");
  const bool regression = noise_std > 0;
  check(labels.dim() >= 1 && labels.dim() <= (regression ? 2 : 1) &&
            labels.size(0) == inputs.size(0),
        fmt::format("The validation set has {} inputs but {} {}.", inputs.size(0),
                    labels.size(0), regression ? "targets" : "labels"));
  check(!regression || std::isfinite(noise_std),
        fmt::format("The regression noise σ must be finite; got {}.", noise_std));
  check(samples >= 1, fmt::format("The predictive needs at least one sample; got {}.", samples));
  PriorPrecisionSearch out;
  out.grid = grid.values();
  // Regression: the NLL of the linearised Gaussian N(f*, v + σ²) or of the draws' mixture.
  auto regression_nll = [&]() {
    if (posterior.options().predictive == LaplacePredictive::kProbit) {
      const auto [f, v] = linearised_outputs(model, posterior, inputs);
      return gaussian_regression_metrics(f, (v + noise_std * noise_std).sqrt(), labels).nll;
    }
    const auto draws = predictive_outputs(model, posterior, {inputs}, samples)[0];
    return regression_metrics(draws, labels, {noise_std}, /*sampled=*/true).nll;
  };
  const auto index =
      regression ? ::at::Tensor() : labels.to(::at::kLong).to(inputs.device()).unsqueeze(1);
  for (const double delta : out.grid) {
    posterior.set_prior_precision(delta);
    const double nll =
        regression ? regression_nll()
                   : -predictive_log_probs(model, posterior, inputs, samples)
                          .to(::at::kDouble)
                          .gather(1, index)
                          .mean()
                          .item<double>();
    check(std::isfinite(nll),
          fmt::format("The validation NLL of the Laplace predictive is not finite at prior "
                      "precision {}; narrow the grid.",
                      delta));
    out.nll.push_back(nll);
    if (out.nll.size() == 1 || nll < out.best_nll) {
      out.best = delta;
      out.best_nll = nll;
    }
  }
  posterior.set_prior_precision(out.best);
  return out;
}

}  // namespace blr::torch
