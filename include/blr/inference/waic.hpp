// WAIC, the widely applicable information criterion (Watanabe 2010), on the deviance scale as
// Gelman, Hwang & Vehtari (2014, eqs. 5, 11–13) and ArviZ (`scale="deviance"`) report it:
//
//   lppd   = Σ_i log E_q[p(y_i | θ)]          (log pointwise predictive density)
//   p_waic = Σ_i Var_q[log p(y_i | θ)]        (effective number of parameters)
//   WAIC   = −2 (lppd − p_waic)               (lower is better, comparable to AIC)
//
// For a GLM each term sees the posterior only through the linear predictor a_i = x_iᵀw, which is
// Gaussian under a Gaussian posterior and a mixture of Gaussians under a mixture posterior, so the
// expectations are one-dimensional and need no posterior draws:
//   logistic, Poisson  Gauss–Hermite quadrature (32 nodes) per mixture component; the variance
//                      is taken about the mean (two passes), so it does not cancel for narrow
//                      posteriors;
//   Gaussian, β known  log p = ½ log(β/2π) − (β/2)(y − a)² is quadratic in a, so its mean and
//                      variance are exact with three or more nodes; lppd is closed form,
//                      log Σ_c w_c N(y; m_c, v_c + 1/β);
//   Gaussian, τ ~ Gamma(a_N, b_N), w | τ ~ N(m, Λ⁻¹/τ) (the Normal–Gamma posterior, conjugate.hpp),
//                      with e = y − xᵀm and v = xᵀΛ⁻¹x (Λ⁻¹ = (a_N/b_N) S):
//                      lppd_i = log t_{2a_N}(y_i; xᵀm, (b_N/a_N)(1 + v)) (the exact predictive),
//                      E[log p] = ½(ψ(a_N) − log b_N − log 2π) − ½((a_N/b_N) e² + v),
//                      Var[log p] = v²/2 + (a_N/b_N) e² v + ψ′(a_N)/4 + e⁴ a_N/(4b_N²) − e²/(2b_N)
//                      (the variance given τ, v²/2 + τe²v, plus the variance over τ of the
//                      conditional mean, with Cov(log τ, τ) = 1/b_N).
// tests/inference/waic_test.cpp checks every case against Monte Carlo over posterior draws.
#pragma once

#include "blr/core/types.hpp"
#include "blr/inference/glm.hpp"

namespace blr::inference {

struct Waic {
  double lppd = 0, p_waic = 0, waic = 0;
  Vector pointwise_lppd, pointwise_p_waic;  ///< the terms of the two sums, one per row
};

/// WAIC of responses y whose linear predictors are a_i ~ Σ_c w_c N(latent_mean(i, c),
/// latent_variance(i, c)) (one column per mixture component; one column for a Gaussian posterior).
/// `noise_precision` is β of a Gaussian likelihood; `nodes` the Gauss–Hermite nodes.
Waic waic_latent(Likelihood likelihood, const Vector& y, const Vector& weights,
                 const Matrix& latent_mean, const Matrix& latent_variance,
                 double noise_precision = 1.0, int nodes = 32);

/// WAIC of a GLM with a Gaussian posterior N(mean, covariance) on the design x.
Waic waic_gaussian_posterior(Likelihood likelihood, const Matrix& x, const Vector& y,
                             const Vector& mean, const Matrix& covariance,
                             double noise_precision = 1.0, int nodes = 32);

/// WAIC of linear regression with the Normal–Gamma posterior: location `mean`, Student-t scale
/// matrix S = (b_N/a_N) Λ⁻¹ (`scale`), τ | y ~ Gamma(shape a_N, rate b_N).
Waic waic_normal_gamma(const Matrix& x, const Vector& y, const Vector& mean, const Matrix& scale,
                       double noise_shape, double noise_rate);

}  // namespace blr::inference
