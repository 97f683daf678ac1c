// The post-hoc Laplace of a trained network as one library call (issue 31, item 2: `blr laplace`
// and any C++ caller run the same pipeline):
//   1. the curvature of the trained weights on the training set (laplace_fit.hpp: diagonal or
//      Kronecker-factored GGN or empirical Fisher, of all weights or the last layer);
//   2. a regression's noise σ: the run's, or with `noise_std_by_marglik` the σ that maximises
//      the Laplace marginal likelihood log Z (with δ given, or jointly with δ);
//   3. the prior precision δ: given; or the maximiser of log Z (MacKay's evidence, laplace-torch's
//      "marglik"); or the δ of a log-spaced grid with the lowest validation NLL of the predictive
//      (laplace-torch's "gridsearch", laplace_prior_search.hpp);
//   4. the posterior: `make_posterior(δ, fit)` builds the "laplace" optimizer over the model (a
//      trainer replaces its optimizer), and it receives the curvature;
//   5. log Z at the chosen δ.
// Every refusal is one sentence, checked before the passes over the data where it can be.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "blr/torch/posterior/laplace_fit.hpp"
#include "blr/torch/posterior/laplace_prior_search.hpp"

namespace blr::torch {

struct PosthocLaplaceRequest {
  LaplaceCurvatureOptions curvature;  ///< likelihood, subset, curvature, structure, the run's σ
  double prior_precision = 0.0;       ///< δ; 0: chosen by `prior_precision_method`
  std::string prior_precision_method = "marglik";  ///< marglik | gridsearch
  PriorPrecisionGrid grid;                         ///< gridsearch's grid
  bool noise_std_by_marglik = false;               ///< regression: σ by log Z
  int samples = 16;  ///< draws of a Monte Carlo predictive in the grid search (≥ 1)
};

struct PosthocLaplaceFit {
  LaplaceCurvatureResult fit;  ///< the curvature, at the chosen σ
  double prior_precision = 0;  ///< the δ used
  bool prior_precision_chosen = false;
  double log_marginal_likelihood = 0;
  double run_noise_std = 0;                    ///< regression: the σ the request came with
  std::optional<PriorPrecisionSearch> search;  ///< gridsearch
  double seconds = 0;                          ///< wall time of steps 1–5
};

/// Builds the "laplace" optimizer for δ over the model and returns it (it is then given the
/// curvature).
using MakeLaplacePosterior =
    std::function<LaplacePosterior&(double prior_precision, const LaplaceCurvatureResult& fit)>;

/// Steps 1–5 of the header on (train_x, train_y), with (validation_x, validation_y) for the grid
/// search (may be undefined tensors otherwise).
PosthocLaplaceFit fit_posthoc_laplace(const Model& model, const ::at::Tensor& train_x,
                                      const ::at::Tensor& train_y, const ::at::Tensor& validation_x,
                                      const ::at::Tensor& validation_y,
                                      const PosthocLaplaceRequest& request,
                                      const MakeLaplacePosterior& make_posterior);

}  // namespace blr::torch
