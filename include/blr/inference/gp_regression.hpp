// Gaussian-process regression with a Gaussian likelihood: the exact posterior, predictive and log
// marginal likelihood (Rasmussen & Williams 2006, GPML Algorithm 2.1, eq. 2.30), and its gradient
// with respect to the hyperparameters (eq. 5.9).
//
// With y | f ~ N(f, σₙ²I), f ~ N(0, K), K_y = K + σₙ²I = LLᵀ and α = K_y⁻¹y:
//     log p(y | X, θ) = −½ yᵀα − Σ_i log L_ii − (n/2) log 2π                     (eq. 2.30)
//     f* | y ~ N(k*ᵀα, k(x*, x*) − vᵀv),  v = L⁻¹k*                            (Alg. 2.1)
//     ∂ log p / ∂θ_j = ½ αᵀ (∂K_y/∂θ_j) α − ½ tr(K_y⁻¹ ∂K_y/∂θ_j)               (eq. 5.9)
// The last line, with α and R = K_y⁻¹ replaced by their analogues, is also the explicit part of the
// Laplace-evidence gradient (eq. 5.22, gp_laplace.hpp) and the whole ELBO gradient of GP CVI
// (gp_hyperparameters.hpp); `evidence_gradient_term` is its one implementation.
#pragma once

#include <vector>

#include "blr/core/types.hpp"

namespace blr::inference {

/// ½ αᵀ D α − ½ tr(R D) for a symmetric R and D (eq. 5.9).
double evidence_gradient_term(const Vector& alpha, const Matrix& r, const Matrix& d);

struct GprResult {
  Vector alpha;     ///< K_y⁻¹ y
  Matrix cholesky;  ///< L with LLᵀ = K + σₙ²I
  double log_marginal_likelihood = 0;
};

/// Exact GP regression with zero mean; `kernel` is K (n×n), noise_variance σₙ² > 0.
GprResult gp_regression(const Matrix& kernel, const Vector& y, double noise_variance);

/// Latent predictive f* at new inputs: `cross` is K(train, new) (n×m), `self_diag` k(x*, x*).
/// Add σₙ² to `variance` for the predictive of y*.
void gp_regression_predict(const GprResult& fit, const Matrix& cross, const Vector& self_diag,
                           Vector& mean, Vector& variance);

/// ∂ log p(y | X, θ)/∂θ_j for each ∂K_y/∂θ_j in `dk_y` (eq. 5.9).
Vector gp_regression_gradient(const GprResult& fit, const std::vector<Matrix>& dk_y);

}  // namespace blr::inference
