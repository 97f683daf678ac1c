// The fit statistics a statistician reads beside a GLM's coefficients, as statsmodels reports them
// (`llf`, `llnull`, `prsquared`, `aic`, `bic`, `rsquared`), for a Bayesian fit at its posterior
// mean θ̂ (issue 31, item 2):
//
//   log-likelihood       ℓ(θ̂) = Σ_i log p(y_i | x_iᵀθ̂); Gaussian: at the noise that maximises it,
//                        σ̂² = RSS/n, so ℓ = −(n/2)(log 2πσ̂² + 1)
//   null log-likelihood  ℓ₀, the intercept-only model at its maximum: logistic p̄ = ȳ, Poisson
//                        λ̄ = ȳ, Gaussian mean ȳ with σ̂₀² = Σ(y − ȳ)²/n
//   pseudo-R²            McFadden's 1 − ℓ/ℓ₀ (statsmodels' prsquared)
//   R²                   Gaussian: 1 − RSS/TSS
//   AIC, BIC             2k − 2ℓ and k log n − 2ℓ, k the number of coefficients (the intercept
//                        included, the Gaussian noise not: statsmodels' counting)
//
// With a near-flat prior θ̂ is the maximum-likelihood estimate and every number is statsmodels'
// (tests/cli/infer_fit_statistics.sh); with an informative prior ℓ(θ̂) is below the maximum.
#pragma once

#include "blr/core/types.hpp"
#include "blr/inference/glm.hpp"

namespace blr::inference {

struct FitStatistics {
  Index observations = 0;   ///< n
  Index parameters = 0;     ///< k
  double log_likelihood = 0;
  double null_log_likelihood = 0;
  double pseudo_r2 = 0;
  double r_squared = 0;     ///< Gaussian only (else NaN)
  double aic = 0, bic = 0;
};

/// The header's statistics of design `x` (n×k), responses `y` and posterior mean `mean`.
FitStatistics fit_statistics(Likelihood likelihood, const Matrix& x, const Vector& y,
                             const Vector& mean);

}  // namespace blr::inference
