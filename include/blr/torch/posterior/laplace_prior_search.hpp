// The prior precision of a post-hoc Laplace posterior chosen on held-out data.
//
// laplace_fit.hpp chooses δ by the Laplace marginal likelihood; on deep nets that δ can be far
// from the one that predicts best (on LeNet-5 the evidence's δ ≈ 34 gave an underconfident
// predictive, docs/results.md). The alternative of laplace-torch's
// `optimize_prior_precision(method="gridsearch")` (Daxberger et al. 2021, "Laplace Redux", §3):
// for δ on a log-spaced grid δ_k = min·(max/min)^(k/(points − 1)), k = 0…points − 1, the negative
// log-likelihood of the posterior's predictive on the validation examples,
//     NLL(δ) = −(1/M) Σ_i log p(y_i | x_i, D; δ),
// where p is the posterior's own predictive (the linearised probit in closed form, or the average
// of K sampled networks with the same draws ε for every δ: θ = θ* + Σ(δ)^{1/2} ε); the δ with the
// lowest NLL is kept (the first of equal ones). laplace-torch's defaults are 10⁻⁴…10⁴ and 100
// points; here 17 points (half a decade apart) by default, since each costs one pass of the
// predictive over the validation set.
#pragma once

#include <ATen/Tensor.h>

#include <vector>

#include "blr/torch/nn/model.hpp"
#include "blr/torch/optim/laplace.hpp"

namespace blr::torch {

/// The grid of prior precisions searched.
struct PriorPrecisionGrid {
  double min = 1e-4;
  double max = 1e4;
  int points = 17;
  /// Throws a sentence unless 0 < min ≤ max < ∞ and points ≥ 1 (points = 1 needs min = max).
  void validate() const;
  /// The grid's values, log-spaced from min to max.
  std::vector<double> values() const;
};

struct PriorPrecisionSearch {
  std::vector<double> grid;  ///< δ_k
  std::vector<double> nll;   ///< NLL(δ_k), nats per example
  double best = 0.0;         ///< the δ_k with the lowest NLL
  double best_nll = 0.0;
  /// The best δ is the grid's smallest or largest (of two or more): the optimum may lie beyond
  /// it, and the grid should be widened (a largest δ means the data prefer the point estimate).
  bool at_edge() const {
    return grid.size() > 1 && (best == grid.front() || best == grid.back());
  }
};

/// Searches the grid with the fitted `posterior` of `model` on (inputs, labels) (class indices;
/// with `noise_std` σ > 0 a regression's targets, N or N×D, scored by the Gaussian NLL of the
/// linearised or the Monte Carlo predictive with noise σ, on the scale the network predicts),
/// with `samples` draws for a Monte Carlo predictive (ignored by the probit one), and leaves
/// the posterior at the best δ. Throws a sentence for an empty validation set, labels that do not
/// match the inputs, or a predictive that is not finite at every δ.
PriorPrecisionSearch laplace_prior_precision_search(const Model& model, LaplacePosterior& posterior,
                                                    const ::at::Tensor& inputs,
                                                    const ::at::Tensor& labels, int samples,
                                                    const PriorPrecisionGrid& grid = {},
                                                    double noise_std = 0.0);

}  // namespace blr::torch
