// A trained classifier's predictive distribution on new inputs (blr predict), by one of two
// methods:
//
//   mc      p̄(y|x) = (1/K) Σ_k softmax(f(x; θ_k)), θ_k ~ q (predictive.hpp; K posterior draws);
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
#pragma once

#include <ATen/Tensor.h>
#include <torch/optim/optimizer.h>

#include <string>

#include "blr/torch/nn/model.hpp"

namespace blr::torch {

enum class PredictiveMethod { kMonteCarlo, kProbit };

/// "mc" / "probit" (one sentence naming the text otherwise).
PredictiveMethod parse_predictive_method(const std::string& text);

struct NewDataPrediction {
  ::at::Tensor log_probs;  ///< N×C, double, CPU
  ::at::Tensor entropy;    ///< N, double, CPU
  std::string method;      ///< "mean" (no posterior), "mc" or "probit"
  int samples = 0;         ///< K of "mc", else 0
};

/// The predictive of `model` trained by `optimizer` on `inputs` (N, ...): `samples` ≥ 1 draws
/// for mc; probit needs a Laplace or diagonal-Gaussian posterior (else one sentence).
NewDataPrediction predict_new_data(const Model& model, ::torch::optim::Optimizer& optimizer,
                                   const ::at::Tensor& inputs, int samples,
                                   PredictiveMethod method);

}  // namespace blr::torch
