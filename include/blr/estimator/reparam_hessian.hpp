// The reparameterisation ("Price") Hessian estimator of IVON (Shen et al. 2024; Khan & Rue 2023,
// App. D): with θ = m + Σ^{1/2}ε and Stein's lemma E_q[(θ − m)∇ℓ̄(θ)ᵀ] = S⁻¹E_q[∇²ℓ̄],
//
//     ĝ = (1/K)Σ_k g_k,   g_k = ∇ℓ̄(θ_k),
//     Ĥ = (1/K)Σ_k g_k ⊙ s ⊙ (θ_k − m)                    diagonal q (IVON's 'price' estimate)
//     Ĥ = (1/K)Σ_k sym(S(θ_k − m) g_kᵀ),  sym(A) = ½(A + Aᵀ)   full q
//
// both unbiased for E_q[∇²ℓ̄] (the diagonal one for its diagonal) while needing only gradients.
// Ĥ need not be positive definite; the rule's positive-definite correction (or a small ρ) keeps S
// positive. Noise can be fixed with estimate_with_noise (what the Rng overload calls).
#pragma once

#include <vector>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/estimator/estimate.hpp"
#include "blr/estimator/gaussian_sampling.hpp"
#include "blr/model/loss.hpp"

namespace blr {

struct ReparamHessianOptions {
  int samples = 1;          ///< K ≥ 1 (even with `antithetic`)
  bool antithetic = false;  ///< draw (ε, −ε) pairs
  void validate() const {
    check(samples >= 1, fmt::format("Option 'samples' must be at least 1; got {}.", samples));
    check(!antithetic || samples % 2 == 0,
          fmt::format("Option 'samples' must be even when 'antithetic' is on; got {}.", samples));
  }
};

class ReparamHessian {
 public:
  using Options = ReparamHessianOptions;

  explicit ReparamHessian(Options options = {}) : options_(options) { options_.validate(); }
  const Options& options() const { return options_; }

  /// Draws options().samples standard-normal vectors and calls estimate_with_noise.
  template <SampleableGaussian Q, HasGradient L>
  GaussianEstimate estimate(const Q& q, const L& loss, Rng& rng) const {
    return estimate_with_noise(
        q, loss, standard_normal_noise(rng, q.dimension(), options_.samples, options_.antithetic));
  }

  /// θ_k = sample_with_noise(q, ε_k) for each given ε_k (K = eps.size()).
  template <SampleableGaussian Q, HasGradient L>
  GaussianEstimate estimate_with_noise(const Q& q, const L& loss,
                                       const std::vector<Vector>& eps) const {
    detail::check_dimensions(q, loss, "ReparamHessian");
    const Index d = q.dimension();
    detail::check_noise(eps, d, "ReparamHessian");
    const double inv_k = 1.0 / static_cast<double>(eps.size());
    GaussianEstimate e;
    e.gradient = Vector::Zero(d);
    e.evaluations = static_cast<int>(eps.size());
    Vector g;
    if constexpr (FullGaussian<Q>) {
      // Batched: offsets L⁻ᵀE and S(θ − m) = LE for all samples at once, then Ĥ from one product
      // UGᵀ (d²K flops in a single matrix product instead of K rank-one updates).
      const Index k_count = static_cast<Index>(eps.size());
      Matrix noise(d, k_count);
      for (Index k = 0; k < k_count; ++k) noise.col(k) = eps[static_cast<std::size_t>(k)];
      const Matrix& lower = q.precision.lower();
      const Matrix offsets = lower.transpose().template triangularView<Eigen::Upper>().solve(noise);
      const Matrix u = lower.template triangularView<Eigen::Lower>() * noise;
      Matrix grads(d, k_count);
      for (Index k = 0; k < k_count; ++k) {
        const Vector theta = q.mean + offsets.col(k);
        e.loss += value_and_gradient(loss, theta, g);
        grads.col(k) = g;
      }
      e.gradient = inv_k * grads.rowwise().sum();
      const Matrix h = u * grads.transpose();
      e.curvature = Curvature::full(0.5 * inv_k * (h + h.transpose()));
    } else {
      Vector diag_sum = Vector::Zero(d);
      for (const Vector& noise : eps) {
        const Vector theta = sample_with_noise(q, noise);
        e.loss += value_and_gradient(loss, theta, g);
        e.gradient += g;
        diag_sum += precision_times_offset(q, noise).cwiseProduct(g);  // g ⊙ s ⊙ (θ − m)
      }
      e.gradient *= inv_k;
      e.curvature = Curvature::diagonal(inv_k * diag_sum);
    }
    e.loss *= inv_k;
    return e;
  }

 private:
  Options options_;
};

}  // namespace blr
