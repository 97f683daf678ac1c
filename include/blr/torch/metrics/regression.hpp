// Metrics of a Gaussian predictive for regression, in the targets' original units. For each
// target value y_j (j over every example and output dimension) the predictive is the mixture of
// the K Gaussians N(m_kj, σ_d²) the K posterior samples θ_k give (K = 1: the prediction at the
// mean), with σ_d the observation noise of output d:
//
//   mean      ȳ_j = (1/K) Σ_k m_kj
//   RMSE      √( (1/M) Σ_j (y_j − ȳ_j)² )
//   NLL       −(1/M) Σ_j log (1/K) Σ_k N(y_j; m_kj, σ_d²)      (the exact mixture, computed as
//             logsumexp_k log N(y_j; m_kj, σ_d²) − log K, not a moment-matched Gaussian)
//   PIT       F_j = (1/K) Σ_k Φ((y_j − m_kj)/σ_d): the predictive CDF at the observed value
//   coverage  c(p) = (1/M) Σ_j 1[(1 − p)/2 ≤ F_j ≤ (1 + p)/2]: how often y_j falls inside the
//             central p-interval of the predictive (for the mixture, its exact quantiles), for
//             p ∈ {0.5, 0.8, 0.9, 0.95}
//   miscalibration  (1/4) Σ_p |c(p) − p|   (0 for a calibrated predictive)
//   sd        (1/M) Σ_j √(σ_d² + (1/K) Σ_k (m_kj − ȳ_j)²): the mean predictive standard deviation
// with M the number of target values. Computed in double precision on the CPU. A Gaussian
// predictive with its own sd per value (K = 1, σ_j in place of σ_d) has the same metrics.
#pragma once

#include <ATen/Tensor.h>

#include <array>
#include <cstdint>
#include <vector>

namespace blr::torch {

/// The central-interval levels whose coverage is reported.
inline constexpr std::array<double, 4> kCoverageLevels = {0.5, 0.8, 0.9, 0.95};

struct RegressionMetrics {
  int64_t count = 0;  ///< M, target values
  double rmse = 0.0;
  double nll = 0.0;
  std::array<double, 4> coverage{};  ///< c(p) for p in kCoverageLevels
  double miscalibration = 0.0;
  double predictive_std = 0.0;  ///< mean predictive standard deviation
};

/// The predictive's mean ȳ_j and standard deviation √(σ_d² + (1/K) Σ_k (m_kj − ȳ_j)²) per target
/// value (the `mean` and `sd` lines above, before averaging): `means` K×N×D and `sigma` σ_d of
/// shape (D) or (1, 1, D), double; both results N×D.
struct PredictiveMoments {
  ::at::Tensor mean;
  ::at::Tensor sd;
};
PredictiveMoments predictive_moments(const ::at::Tensor& means, const ::at::Tensor& sigma);

/// Metrics of sampled means `means` (K × targets.shape; or targets.shape itself for K = 1, or
/// with a trailing output dimension of 1 for targets of shape (N)) against `targets` (N or N×D),
/// with observation noise `noise_std` (one per output dimension, or one for all), all in the
/// same units.
RegressionMetrics regression_metrics(const ::at::Tensor& means, const ::at::Tensor& targets,
                                     const std::vector<double>& noise_std, bool sampled);

/// The same metrics for a Gaussian predictive N(mean_j, sd_j²) per target value (K = 1 with a
/// noise sd per value: a linearised predictive, laplace_predictive.hpp): `mean` and `sd` with
/// the targets' number of values, all in the same units.
RegressionMetrics gaussian_regression_metrics(const ::at::Tensor& mean, const ::at::Tensor& sd,
                                              const ::at::Tensor& targets);

}  // namespace blr::torch
