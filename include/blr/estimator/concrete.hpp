// The Concrete (Gumbel-softmax) estimator for a mean-field Bernoulli q on {−1, +1}^P (Khan & Rue
// 2023, §4.5, eqs. 50–52; Meng et al. 2020, BayesBiNN). q(θ_j = 1) = σ(2λ_j), natural parameter
// λ, expectation μ = tanh(λ). The relaxed sample and the chain rule give
//
//     θ̂ = tanh((λ + δ(ε))/τ),   δ(ε) = ½·log(ε/(1 − ε)),  ε ~ U(0, 1)               (eq. 50)
//     ∇_μ E_q[ℓ̄] ≈ s ⊙ ∇_θ ℓ̄(θ̂),   s = (1 − θ̂² + 10⁻¹⁰) / (τ·(1 − tanh²(λ) + 10⁻¹⁰))   (eq. 51)
//
// averaged over K samples. The 10⁻¹⁰ safeguards are those of the BayesBiNN reference code
// (research/algorithms.md §4), kept so that the estimator matches it; the formula uses 1 − θ̂²
// and 1 − tanh²(λ) literally, as the reference does. The estimate is unbiased for
// ∇_μ E[ℓ̄(θ̂)] (the relaxed objective; by the chain rule through λ), and tends to the
// straight-through gradient as τ → 0. With `deterministic` (BayesBiNN's num_samples = 0):
// θ̂ = tanh(λ) and the plain gradient ∇ℓ̄(θ̂), no scaling, no noise.
#pragma once

#include <cmath>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"
#include "blr/model/loss.hpp"

namespace blr {

/// ∇_μ E_q[ℓ̄] in expectation coordinates and the mean loss at the relaxed samples.
struct ConcreteEstimate {
  Vector grad_mu;
  double loss = 0.0;
  int evaluations = 0;
};

struct ConcreteOptions {
  int samples = 1;             ///< K ≥ 1
  double temperature = 1.0;    ///< τ > 0
  bool deterministic = false;  ///< θ̂ = tanh(λ), ∇ℓ̄(θ̂) unscaled (no sampling)
  void validate() const {
    check(samples >= 1, fmt::format("Option 'samples' must be at least 1; got {}.", samples));
    check_positive("temperature", temperature);
  }
};

class Concrete {
 public:
  using Options = ConcreteOptions;
  static constexpr double kSafeguard = 1e-10;

  explicit Concrete(Options options = {}) : options_(options) { options_.validate(); }
  const Options& options() const { return options_; }

  /// Draws options().samples uniform vectors in (0, 1) (none when deterministic) and calls
  /// estimate_with_noise.
  template <HasGradient L>
  ConcreteEstimate estimate(const Vector& natural, const L& loss, Rng& rng) const {
    std::vector<Vector> u;
    if (!options_.deterministic) {
      for (int k = 0; k < options_.samples; ++k) {
        Vector draw(natural.size());
        for (Index j = 0; j < draw.size(); ++j) draw[j] = rng.uniform();
        u.push_back(std::move(draw));
      }
    }
    return estimate_with_noise(natural, loss, u);
  }

  /// The estimate from the given uniform draws ε_k ∈ (0, 1)^P (K = uniforms.size() ≥ 1; ignored
  /// and allowed empty when deterministic).
  template <HasGradient L>
  ConcreteEstimate estimate_with_noise(const Vector& natural, const L& loss,
                                       const std::vector<Vector>& uniforms) const {
    const Index p = natural.size();
    check(p == loss.dimension(),
          fmt::format("Concrete: λ has length {} but the loss has dimension {}.", p,
                      loss.dimension()));
    check(natural.allFinite(), "Concrete: the natural parameter λ is not finite.");
    ConcreteEstimate e;
    Vector g;
    if (options_.deterministic) {
      const Vector theta = natural.array().tanh().matrix();
      e.loss = value_and_gradient(loss, theta, g);
      e.grad_mu = g;
      e.evaluations = 1;
      return e;
    }
    check(!uniforms.empty(), "Concrete: at least one uniform noise vector is needed.");
    const double tau = options_.temperature;
    const Vector mu = natural.array().tanh().matrix();
    const Vector denominator = tau * (1.0 - mu.array().square() + kSafeguard).matrix();
    e.grad_mu = Vector::Zero(p);
    for (std::size_t k = 0; k < uniforms.size(); ++k) {
      const Vector& u = uniforms[k];
      check(u.size() == p,
            fmt::format("Concrete: noise vector {} has length {} but λ has length {}.", k, u.size(),
                        p));
      check((u.array() > 0.0).all() && (u.array() < 1.0).all(),
            fmt::format("Concrete: noise vector {} must lie in the open interval (0, 1).", k));
      const Vector delta = 0.5 * (u.array() / (1.0 - u.array())).log().matrix();
      const Vector theta = ((natural + delta) / tau).array().tanh().matrix();
      e.loss += value_and_gradient(loss, theta, g);
      const Vector s =
          (1.0 - theta.array().square() + kSafeguard).matrix().cwiseQuotient(denominator);
      e.grad_mu += s.cwiseProduct(g);
    }
    const double inv_k = 1.0 / static_cast<double>(uniforms.size());
    e.grad_mu *= inv_k;
    e.loss *= inv_k;
    e.evaluations = static_cast<int>(uniforms.size());
    return e;
  }

 private:
  Options options_;
};

}  // namespace blr
