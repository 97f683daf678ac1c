// The Laplace approximation for Gaussian-process classification (and other log-concave
// likelihoods): mode, predictive, approximate log marginal likelihood and its gradient
// (Rasmussen & Williams 2006, GPML §3.4, Algorithms 3.1, 3.2 and 5.1).
//
// Prior f ~ N(0, K), likelihood Π_i p(y_i | f_i) (logistic for 0/1 labels; Poisson and Gaussian
// work too). With W = −∇∇ log p(y | f) (diagonal, ≥ 0) and B = I + W^½ K W^½ = LLᵀ, Newton's method
// on Ψ(f) = log p(y | f) − ½ fᵀK⁻¹f is run in the coordinates f = Ka (Alg. 3.1):
//     b = Wf + ∇ log p(y | f),   a_new = b − W^½ L⁻ᵀ L⁻¹ W^½ K b,   f = K a_new,
// with the step in a halved while Ψ would fall. At the mode f̂ = K ∇ log p(y | f̂) and
//     log q(y | X, θ) = −½ aᵀ f̂ + log p(y | f̂) − Σ_i log L_ii                    (eq. 3.32)
//     f* ~ N(k*ᵀ ∇ log p(y | f̂),  k(x*, x*) − vᵀv),  v = L⁻¹ W^½ k*             (Alg. 3.2)
// The gradient with respect to a kernel hyperparameter θ_j has an explicit part and an implicit
// part through the mode (eqs. 5.22–5.24, Alg. 5.1), with R = W^½ B⁻¹ W^½ and ∂_j K = ∂K/∂θ_j:
//     ∂ log q/∂θ_j = ½ aᵀ ∂_jK a − ½ tr(R ∂_jK)                           (explicit, eq. 5.22)
//                  + s₂ᵀ (I − K R) ∂_jK ∇ log p(y | f̂),                    (implicit, eq. 5.24)
//     s₂ = ∂ log q/∂f̂ = −½ ∂ log|I + KW|/∂f̂ = ½ diag((K⁻¹ + W)⁻¹) ⊙ ∇³ log p(y | f̂)   (eq. 5.23)
// since ∂ log|I + KW|/∂f̂_i = [(I + KW)⁻¹K]_ii ∂W_ii/∂f̂_i and ∂W_ii/∂f̂_i = −∂³ log p(y_i | f̂_i).
// (Printed copies of eq. 5.23 and Alg. 5.1 carry a minus sign here; the derivation above and the
// finite-difference test fix it as +.) K is never inverted: diag((K⁻¹ + W)⁻¹) =
// diag(K) − colsum((L⁻¹W^½K)²).
#pragma once

#include <vector>

#include "blr/core/option_table.hpp"
#include "blr/core/types.hpp"
#include "blr/inference/glm.hpp"

namespace blr::inference {

struct GpLaplaceOptions {
  int max_iterations = 100;  ///< Newton steps
  double tolerance = 1e-10;  ///< stop when max|∇ log p(y | Ka) − a| falls below this
  void validate() const;  ///< the table's ranges (and the cross-option checks)
  static const OptionTable<GpLaplaceOptions>& table();
};

struct GpLaplaceResult {
  Vector mode;        ///< f̂ = K a
  Vector a;           ///< K⁻¹ f̂ (= ∇ log p(y | f̂) at convergence)
  Vector w;           ///< W = −∇∇ log p(y | f̂) (diagonal)
  Vector variance;    ///< diag((K⁻¹ + W)⁻¹): latent marginal variances at the training inputs
  Matrix b_cholesky;  ///< L with LLᵀ = I + W^½ K W^½
  double log_likelihood = 0;           ///< log p(y | f̂)
  double log_marginal_likelihood = 0;  ///< log q(y | X, θ), eq. 3.32
  int iterations = 0;
  bool converged = false;
};

/// Finds the mode from f = K·start_a (or f = 0, also when that is better) and evaluates the
/// approximation there.
/// `noise_precision` is β of a Gaussian likelihood (ignored otherwise).
GpLaplaceResult gp_laplace(const Matrix& kernel, const Vector& y, Likelihood likelihood,
                           const GpLaplaceOptions& options = {}, const Vector* start_a = nullptr,
                           double noise_precision = 1.0);

/// Latent predictive moments at new inputs (Alg. 3.2): `cross` is K(train, new) (n×m),
/// `self_diag` k(x*, x*). Class probabilities: predict_latent (glm.hpp).
/// The mean uses a = K⁻¹f̂, which equals ∇ log p(y | f̂) at the mode.
void gp_laplace_predict_latent(const GpLaplaceResult& fit, const Matrix& cross,
                               const Vector& self_diag, Vector& mean, Vector& variance);

/// ∂ log q(y | X, θ)/∂θ_j for each ∂K/∂θ_j in `dk` (Alg. 5.1: explicit and implicit parts).
Vector gp_laplace_gradient(const Matrix& kernel, const GpLaplaceResult& fit, const Vector& y,
                           Likelihood likelihood, const std::vector<Matrix>& dk,
                           double noise_precision = 1.0);

/// The lower Cholesky factor L of B = I + W^½ K W^½ (`sqrt_w` = W^½ ≥ 0); false when B is not
/// positive definite (K not positive semi-definite). Shared by Laplace and the CVI gradient.
bool gp_b_cholesky(const Matrix& kernel, const Vector& sqrt_w, Matrix& lower);
/// R = W^½ B⁻¹ W^½ = W^½ L⁻ᵀ L⁻¹ W^½ from L of gp_b_cholesky.
Matrix gp_r_matrix(const Matrix& lower, const Vector& sqrt_w);

/// ∂³ log p(y | f)/∂f³ of one site (the derivative of −W; eq. 5.23).
double site_third_derivative(Likelihood likelihood, double y, double f);

}  // namespace blr::inference
