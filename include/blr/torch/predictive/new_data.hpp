// A trained classifier's predictive distribution on new inputs (blr predict), by one of two
// methods:
//
//   monte-carlo  p̄(y|x) = (1/K) Σ_k softmax(f(x; θ_k)), θ_k ~ q (predictive.hpp; K draws);
//           at the mean, softmax(f(x; μ)), for a point estimate (no posterior);
//   probit  the linearised (GLM) predictive with the multiclass probit approximation,
//           p(y = k|x) ≈ softmax_k(f_k(x; μ) / √(1 + π v_k / 8)), v_k = Σ_j σ_j² (∂f_k/∂θ_j)²
//           (laplace_predictive.hpp, the code `blr laplace --predictive probit` uses): for a
//           Laplace posterior its own covariance (diagonal or Kronecker-factored), for a
//           diagonal-Gaussian optimizer (IVON, VOGN, Vadam, ...: MeanFieldOptimizer) its σ².
//
// The log-probabilities are renormalised in double (lp − logsumexp lp), so that each row's
// probabilities sum to 1 to double precision whatever precision the network computed in. Each
// row's predictive entropy −Σ_k p_k log p_k (nats) comes with it.
//
// A regression network's predictive on new inputs (Gaussian likelihood with the run's fitted
// noise σ, on the standardised scale): the mixture (1/K) Σ_k N(f(x; θ_k), σ²) over K posterior
// draws, summarised by its mean f̄ = (1/K) Σ_k f_k and its standard deviation
// √(σ² + (1/K) Σ_k (f_k − f̄)²) (the law of total variance; metrics/regression.hpp's
// predictive_moments); N(f(x; μ), σ²) for a point estimate; with probit, the linearised
// predictive N(f(x; μ), diag(J Σ Jᵀ) + σ²) of the same Gaussian posteriors as above.
// Both are returned in the targets' units: y = m + s·f and sd_y = s·sd, with m and s the
// training targets' mean and standard deviation.
#pragma once

#include <ATen/Tensor.h>
#include <torch/optim/optimizer.h>

#include <string>
#include <vector>

#include "blr/torch/nn/model.hpp"

namespace blr::torch {

enum class PredictiveMethod { kMonteCarlo, kProbit };

/// "monte-carlo" (or the earlier "mc") / "probit" (one sentence naming the text otherwise).
PredictiveMethod parse_predictive_method(const std::string& text);

struct NewDataPrediction {
  ::at::Tensor log_probs;  ///< N×C, double, CPU
  ::at::Tensor entropy;    ///< N, double, CPU
  std::string method;      ///< "mean" (no posterior), "monte-carlo" or "probit"
  int samples = 0;         ///< K of "monte-carlo", else 0
};

/// The predictive of `model` trained by `optimizer` on `inputs` (N, ...): `samples` ≥ 1 draws
/// for monte-carlo; probit needs a Laplace or diagonal-Gaussian posterior (else one sentence).
NewDataPrediction predict_new_data(const Model& model, ::torch::optim::Optimizer& optimizer,
                                   const ::at::Tensor& inputs, int samples,
                                   PredictiveMethod method);

struct NewDataRegression {
  ::at::Tensor mean;  ///< N×D, double, CPU, in the targets' units
  ::at::Tensor sd;    ///< N×D, double, CPU: the predictive's standard deviation
  std::string method; ///< "mean" (no posterior), "monte-carlo" or "probit" (linearised)
  int samples = 0;    ///< K of "monte-carlo", else 0
};

/// The predictive of a regression `model` (D outputs) on `inputs`: `samples` ≥ 1 draws for a
/// posterior, the mean for a point estimate. `target_mean`, `target_sd` (D each) undo the
/// standardisation of the targets; `noise_std` > 0 is σ on the standardised scale. probit (the
/// linearised Gaussian) needs a Laplace or diagonal-Gaussian posterior (else one sentence).
NewDataRegression predict_new_regression(const Model& model, ::torch::optim::Optimizer& optimizer,
                                         const ::at::Tensor& inputs, int samples,
                                         PredictiveMethod method,
                                         const std::vector<double>& target_mean,
                                         const std::vector<double>& target_sd, double noise_std);

}  // namespace blr::torch
