// The Kalman filter and smoother as sequential conjugate BLR (Khan & Rue 2023, §5.1: "Kalman
// filter/smoothing … the BLR yields the natural parameter of the posterior in one step").
//
// Model (linear-Gaussian state space):
//     x_1 ~ N(m₁, P₁),   x_t = A x_{t−1} + η_t, η_t ~ N(0, Q),   y_t = C x_t + ε_t, ε_t ~ N(0, R).
//
// Filter. The prediction N(Am, APAᵀ + Q) is the prior λ_t|t−1 of x_t, the natural parameter of
// (P⁻¹m, P⁻¹) (gaussian_natural.hpp). The observation y_t is a conjugate factor with message
//     λ̃_t = (CᵀR⁻¹y_t, CᵀR⁻¹C),
// and the update is one BLR step with ρ = 1:  λ_t|t = natural_step_towards(λ_t|t−1, λ_t|t−1 + λ̃_t,
// 1). The log-likelihood is the prediction-error decomposition
//     log p(y) = Σ_t log N(y_t | C m_t|t−1, C P_t|t−1 Cᵀ + R).
//
// Smoother. p(x_t | y_1:T) ∝ p(x_t | y_1:t) · p(y_t+1:T | x_t): the backward message
// β_t = p(y_t+1:T | x_t), in the same coordinates (ω_t, Ω_t) (possibly improper, Ω_t ⪰ 0), is built
// by the backward information filter — the conjugate step Λ = natural_step_towards(β_t+1,
// β_t+1 + λ̃_t+1, 1) followed by marginalising x_t+1 through the transition,
//     Ω_t = AᵀΛ(I + QΛ)⁻¹A,  ω_t = Aᵀ(I + ΛQ)⁻¹η     (no Q⁻¹ needed),
// and the smoothed marginal is one more ρ = 1 step: λ_t|T = natural_step_towards(λ_t|t, λ_t|t +
// β_t, 1). The test proves this equal to the Rauch–Tung–Striebel recursion written plainly.
//
// Noise variances are estimated by maximum likelihood with Nelder–Mead on log variances.
#pragma once

#include <functional>
#include <vector>

#include "blr/core/types.hpp"
#include "blr/inference/nelder_mead.hpp"

namespace blr::inference {

struct StateSpaceModel {
  Matrix transition;   ///< A (n×n)
  Matrix observation;  ///< C (p×n)
  Matrix state_noise;  ///< Q (n×n), positive semi-definite
  Matrix obs_noise;    ///< R (p×p), positive definite
  Vector init_mean;    ///< m₁ (prior mean of x_1)
  Matrix init_cov;     ///< P₁ (prior covariance of x_1), positive definite

  Index state_dim() const { return transition.rows(); }
  Index obs_dim() const { return observation.rows(); }
  /// Checks shapes and definiteness; throws a sentence naming the offending matrix.
  void validate() const;

  /// Local level: x_t = x_{t−1} + η (variance W), y_t = x_t + ε (variance V).
  static StateSpaceModel local_level(double obs_var, double state_var, double init_mean,
                                     double init_var);
  /// Local linear trend: level_t = level + slope + η, slope_t = slope + ζ, y = level + ε.
  static StateSpaceModel local_linear_trend(double obs_var, double level_var, double slope_var,
                                            const Vector& init_mean, const Matrix& init_cov);
};

/// Filtered, predicted and smoothed moments; row t of a `*_cov` matrix is vec(P_t) (n² entries).
struct KalmanResult {
  Matrix predicted_mean, predicted_cov;  ///< x_t | y_1:t−1
  Matrix filtered_mean, filtered_cov;    ///< x_t | y_1:t
  Matrix smoothed_mean, smoothed_cov;    ///< x_t | y_1:T (empty until smoothed)
  double log_likelihood = 0;
  Index steps() const { return filtered_mean.rows(); }
  Matrix filtered_covariance(Index t) const;
  Matrix smoothed_covariance(Index t) const;
};

/// Runs the filter over the rows of y (T×p). Rows holding a NaN are missing: no update there; an
/// infinite value is an error naming its row (as in kalman_log_likelihood and kalman_smooth).
KalmanResult kalman_filter(const StateSpaceModel& model, const Matrix& y);
/// Only the log-likelihood (no storage), for maximum likelihood.
double kalman_log_likelihood(const StateSpaceModel& model, const Matrix& y);
/// Fills the smoothed moments of a filter result by the conjugate two-filter recursion.
void kalman_smooth(const StateSpaceModel& model, const Matrix& y, KalmanResult& result);

/// Maximum likelihood of noise variances. `build` maps a vector of variances to a model; the
/// search runs over their logarithms from `start` (all positive).
struct VarianceFit {
  Vector variances;
  double log_likelihood = 0;
  int evaluations = 0;
  bool converged = false;
};
VarianceFit fit_variances(const std::function<StateSpaceModel(const Vector&)>& build,
                          const Matrix& y, const Vector& start,
                          const NelderMeadOptions& options = {});

}  // namespace blr::inference
