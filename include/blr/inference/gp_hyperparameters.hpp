// Learning the kernel hyperparameters θ (kernels.hpp: log ℓ and log σ² of every base kernel of a
// sum of products, one log ℓ per input column with ARD) of a Gaussian process by maximising its
// evidence with L-BFGS (lbfgs.hpp) and exact gradients:
//   - classification, Laplace: log q(y | X, θ) (GPML eq. 3.32) and its gradient with the implicit
//     term through the mode (eqs. 5.22–5.24; gp_laplace.hpp);
//   - classification, CVI: the ELBO L(θ) = E_q[log p(y | f)] − KL(q ‖ N(0, K_θ)) at the fitted q;
//   - regression: log p(y | X, θ) (eq. 2.30) with θ = (kernel θ, log σₙ²) (eq. 5.9).
//
// The CVI gradient. At the CVI fixed point q = N(m, V) is stationary for L over all Gaussians, so
// dL/dθ = ∂L/∂θ with (m, V) held fixed (the envelope theorem), and only the KL term depends on θ:
//     ∂L/∂θ_j = −∂KL/∂θ_j = ½ tr[(K⁻¹(mmᵀ + V)K⁻¹ − K⁻¹) ∂_jK].
// In the site form of gp_cvi, V⁻¹ = K⁻¹ + T (T = diag τ) and K⁻¹m = ν − Tm =: α̃, hence
// K⁻¹VK⁻¹ = K⁻¹ − T^½B⁻¹T^½ with B = I + T^½KT^½, and
//     ∂L/∂θ_j = ½ α̃ᵀ ∂_jK α̃ − ½ tr(R ∂_jK),    R = T^½ B⁻¹ T^½,
// the same expression as eq. 5.9 and the explicit Laplace term (`evidence_gradient_term`), with no
// implicit term. It is exact only at a converged q that is stationary for the ELBO as computed.
// gp_cvi's sites use Gauss–Hermite values of E[∂²log p] where the ELBO's v-derivative is the
// quadrature of E[∂ log p·x]/(2√v); the two agree only to the quadrature error. At the latent sds
// of learned kernels on Ripley's data (up to ~4) 32 nodes leave ~1e-5 in the gradient, enough to
// stall the line search short of max|∇| ≤ 1e-5; 100 nodes (the learning default) do not.
#pragma once

#include <string>

#include "blr/core/types.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/gp_laplace.hpp"
#include "blr/inference/kernels.hpp"
#include "blr/inference/lbfgs.hpp"

namespace blr::inference {

/// An objective's value and its gradient in log space.
struct GpEvidence {
  double value = 0;
  Vector gradient;  ///< the kernel's θ (Kernel::log_parameters) and, for regression, log σₙ²
};

/// ∂ELBO/∂θ_j at a converged gp_cvi fit, for each ∂K/∂θ_j in `dk`.
Vector gp_cvi_elbo_gradient(const Matrix& kernel, const GpcResult& fit,
                            const std::vector<Matrix>& dk);

/// log q(y | X, θ) of the Laplace approximation and its gradient; `warm_a` (in/out, optional)
/// starts the mode search and receives the new a = K⁻¹f̂.
GpEvidence gp_laplace_evidence(const Kernel& kernel, const Matrix& x, const Vector& y,
                               Likelihood likelihood, const GpLaplaceOptions& options = {},
                               Vector* warm_a = nullptr);
/// The CVI ELBO at the fitted q and its gradient.
GpEvidence gp_cvi_evidence(const Kernel& kernel, const Matrix& x, const Vector& y,
                           Likelihood likelihood, const CviOptions& options = {});
/// The GP regression log marginal likelihood and its gradient (the kernel's θ, then log σₙ²).
GpEvidence gp_regression_evidence(const Kernel& kernel, double noise_variance, const Matrix& x,
                                  const Vector& y);

enum class GpcMethod { laplace, cvi };

/// A mode residual of 1e-12 (one Newton step more than the default).
inline GpLaplaceOptions tight_laplace() {
  GpLaplaceOptions o;
  o.tolerance = 1e-12;
  return o;
}

/// CVI defaults for hyperparameters: 100 Gauss–Hermite nodes.
inline CviOptions learning_cvi() {
  CviOptions o;
  o.quadrature_nodes = 100;
  return o;
}

/// L-BFGS defaults for hyperparameters: max|∇| ≤ 1e-5, steps of at most 3 in log space.
inline LbfgsOptions default_lbfgs() {
  LbfgsOptions o;
  o.gradient_tolerance = 1e-5;
  o.max_step = 3.0;
  return o;
}

struct GpLearnOptions {
  LbfgsOptions lbfgs = default_lbfgs();        ///< stops when max|∇| ≤ 1e-5 in log space
  GpLaplaceOptions laplace = tight_laplace();  ///< the mode to 1e-12: the values L-BFGS compares
                                               ///< differ by less than 1e-10 near the optimum
  CviOptions cvi = learning_cvi();             ///< 100 Gauss–Hermite nodes (see above)
  void validate() const;
};

struct GpLearned {
  Kernel kernel;
  double noise_variance = 0;  ///< regression only
  Vector log_parameters;      ///< θ: the kernel's, then (regression) log σₙ²
  double initial_value = 0;   ///< the objective at the starting hyperparameters
  double value = 0;           ///< the objective at the learned ones
  Vector gradient;            ///< in log space, at the learned ones
  int iterations = 0, evaluations = 0;
  bool converged = false;
  std::string stop;
};

/// Maximises the Laplace evidence or the CVI ELBO over the kernel's θ from `start`.
GpLearned learn_gpc_kernel(const Kernel& start, const Matrix& x, const Vector& y,
                           Likelihood likelihood, GpcMethod method,
                           const GpLearnOptions& options = {});
/// Maximises the GP regression evidence over the kernel's θ and log σₙ².
GpLearned learn_gpr_kernel(const Kernel& start, double noise_variance, const Matrix& x,
                           const Vector& y, const GpLearnOptions& options = {});

}  // namespace blr::inference
