// Temperature scaling (Guo et al., "On calibration of modern neural networks", ICML 2017): the
// cheap post-hoc calibration baseline. A predictive p(y|x) (a network at its mean, a posterior
// predictive or an ensemble, given as log-probabilities ℓ) is replaced by
//
//   p_T(y|x) = softmax(ℓ/T)_y,
//
// with the one scalar T > 0 that minimises the NLL on held-out (validation) data. With β = 1/T,
//   NLL(β) = (1/N) Σ_i [log Σ_c exp(β ℓ_ic) − β ℓ_iy_i]
// is convex in β (a log-sum-exp of linear functions minus a linear function), so Brent's method
// on β ∈ [1/kMaxTemperature, 1/kMinTemperature] (Boost.Math's brent_find_minima, 52 bits) finds the
// minimum; T = 1 leaves the predictive unchanged, T > 1 softens an over-confident one. Accuracy
// never changes (argmax is invariant). Labels of shape (N, T, ...) with log-probabilities of
// shape (N, T, ..., C) count every label, as the metrics do (metrics.hpp).
#pragma once

#include <ATen/Tensor.h>

namespace blr::torch {

inline constexpr double kMinTemperature = 0.05;
inline constexpr double kMaxTemperature = 20.0;

struct TemperatureFit {
  double temperature = 1.0;
  double nll_before = 0.0;  ///< NLL of the fitting data at T = 1
  double nll_after = 0.0;   ///< NLL of the fitting data at the fitted T
  bool at_bound = false;    ///< T is kMinTemperature or kMaxTemperature (the range cut it)
};

/// The T in [kMinTemperature, kMaxTemperature] minimising the NLL of softmax(log_probs / T)
/// against `labels` (blr::Error for empty, non-finite or mismatched input).
TemperatureFit fit_temperature(const ::at::Tensor& log_probs, const ::at::Tensor& labels);

/// log softmax(log_probs / T) over the last dimension, in double precision on the CPU.
::at::Tensor scale_temperature(const ::at::Tensor& log_probs, double temperature);

}  // namespace blr::torch
