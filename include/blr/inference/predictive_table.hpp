// The predictive of new inputs as a table a statistician reads (`blr infer --predict`,
// `blr.infer.glm(...).predict(x)`): each row's latent a* = x*ᵀw is Gaussian under a Gaussian
// posterior, a mixture of Gaussians under a mixture posterior (GP latents likewise):
//   Gaussian (linreg, gpr)  y* = a* + ε, ε ~ N(0, σ²_noise): columns mean, sd = √(Var a* + σ²),
//                           lower, upper (the interval of y*);
//   logistic (gpc)          probability = P(y* = positive) = E[σ(a*)] (computed by the caller's
//                           predictive method), lower, upper: σ of a*'s interval (σ is monotone);
//   Poisson                 the rate e^{a*}: rate_mean Σ_c w_c e^{m_c + v_c/2}, rate_sd from
//                           E[e^{2a*}] = Σ_c w_c e^{2m_c + 2v_c} (one component: the lognormal sd
//                           e^{m + v/2}√(e^v − 1), without cancellation), lower, upper = e^{a*'s
//                           interval}.
// Intervals are equal-tailed at `level`, from the exact quantiles of the mixture (intervals.hpp).
#pragma once

#include <string>
#include <vector>

#include "blr/core/types.hpp"
#include "blr/inference/glm.hpp"

namespace blr::inference {

struct PredictiveTable {
  std::vector<std::string> columns;  ///< as in the header, per likelihood
  Matrix values;                     ///< rows × columns
};

/// The table of the header for latents a*_i ~ Σ_c w_c N(latent_mean(i, c), latent_variance(i, c));
/// `probability` (logistic) is E[σ(a*_i)], `noise_variance` (Gaussian) σ²_noise.
PredictiveTable predictive_table(Likelihood likelihood, const Vector& weights,
                                 const Matrix& latent_mean, const Matrix& latent_variance,
                                 const Vector& probability, double noise_variance, double level);

}  // namespace blr::inference
