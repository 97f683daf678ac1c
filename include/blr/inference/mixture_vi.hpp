// Non-conjugate VI with a mixture-of-Gaussians posterior (Khan & Rue 2023, §3.2, eqs. 27–30 with
// the gradients of App. E, eqs. 69–70; Lin, Khan & Schmidt 2019).
//
// q(θ) = Σ_k π_k N(θ | m_k, S_k⁻¹) with fixed π_k. Per component, with θ ~ q_k drawn by Monte
// Carlo,
//     ĝ_k = E_{q_k}[∇ℓ̄(θ) + ∇ log q(θ)],   Ĥ_k = E_{q_k}[∇²ℓ̄(θ) + ∇² log q(θ)],
//     ∇ log q(θ) = Σ_j r_j(θ) S_j (m_j − θ),                                  (eq. 69)
//     ∇² log q(θ) = Σ_j r_j(θ) [A_jj(θ) − S_j − Σ_i r_i(θ) A_ij(θ)]          (eq. 70)
// (A_ij = S_i(m_i − θ)(m_j − θ)ᵀS_j, r_j the responsibilities, eq. 71), eqs. 29–30 read
//     S_k ← S_k + ρĤ_k,  m_k ← m_k − ρ S_k⁻¹ ĝ_k,
// which on the natural parameter λ_k of (S_k m_k, S_k) (gaussian_natural.hpp) is the one BLR step
//     λ_k ← natural_step_towards(λ_k, ((S_k + Ĥ_k)m_k − ĝ_k, S_k + Ĥ_k), ρ).
// (For K = 1, ∇² log q = −S and this is the Gaussian BLR of eq. 12.) A step that would leave S_k
// not positive definite is retried with ρ/2 (the component is left unchanged after 30 halvings).
// ρ_t = ρ/(1 + t/t₀)^κ. The ELBO E_q[−ℓ̄ − log q] is estimated by stratified Monte Carlo over the
// components, with its standard error.
#pragma once

#include <functional>
#include <vector>

#include "blr/core/rng.hpp"
#include "blr/core/option_table.hpp"
#include "blr/core/types.hpp"

namespace blr::inference {

/// ℓ̄ with its gradient and Hessian, type-erased (any HasHessian loss can be wrapped).
struct LossFunctions {
  Index dimension = 0;
  std::function<double(const Vector&)> value;
  std::function<Vector(const Vector&)> gradient;
  std::function<Matrix(const Vector&)> hessian;

  template <class L>
  static LossFunctions wrap(const L& loss) {
    return {loss.dimension(), [&loss](const Vector& t) { return loss.value(t); },
            [&loss](const Vector& t) { return Vector(loss.gradient(t)); },
            [&loss](const Vector& t) { return Matrix(loss.hessian(t)); }};
  }
};

struct GaussianComponent {
  Vector mean;
  Matrix precision;
};

struct MixtureViOptions {
  int iterations = 2000;
  double rho = 0.1;
  double decay_time = 200;   ///< t₀
  double decay_power = 0.5;  ///< κ
  int samples = 10;          ///< Monte Carlo draws per component and iteration
  int elbo_samples = 20000;  ///< per component, for the final ELBO estimate
  std::uint64_t seed = 0;
  void validate() const;  ///< the table's ranges (and the cross-option checks)
  static const OptionTable<MixtureViOptions>& table();
};

struct MixtureViResult {
  Vector weights;
  std::vector<GaussianComponent> components;
  double elbo = 0, elbo_se = 0;
  int iterations = 0;
};

/// log q(θ) of a mixture.
double mixture_log_density(const Vector& weights, const std::vector<GaussianComponent>& comps,
                           const Vector& theta);
/// ∇ log q and ∇² log q (eqs. 69–70).
void mixture_log_density_derivatives(const Vector& weights,
                                     const std::vector<GaussianComponent>& comps,
                                     const Vector& theta, Vector& gradient, Matrix& hessian);
/// Stratified Monte Carlo estimate of E_q[−ℓ̄ − log q] and its standard error.
void mixture_elbo(const LossFunctions& loss, const Vector& weights,
                  const std::vector<GaussianComponent>& comps, int samples, Rng& rng, double& elbo,
                  double& se);

/// Runs the mixture BLR from the given components (weights fixed).
MixtureViResult mixture_vi(const LossFunctions& loss, const Vector& weights,
                           std::vector<GaussianComponent> init, const MixtureViOptions& options);

}  // namespace blr::inference
