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

/// The per-coordinate formulas of the relaxation, written once for every value type: a scalar
/// (float, double), an Eigen array (the core, below) or a tensor (the LibTorch BayesBiNN,
/// blr/torch/optim/bayesbinn.hpp), or the fused CPU loops' scalar (forced inline, so that those
/// loops vectorise). They use +, −, ×, ÷ and the functions tanh_of and log_of, which
/// a tensor type provides by argument-dependent lookup.
namespace concrete {

inline float tanh_of(float x) { return std::tanh(x); }
inline double tanh_of(double x) { return std::tanh(x); }
inline float log_of(float x) { return std::log(x); }
inline double log_of(double x) { return std::log(x); }
template <class D>
auto tanh_of(const Eigen::ArrayBase<D>& x) {
  return x.tanh();
}
template <class D>
auto log_of(const Eigen::ArrayBase<D>& x) {
  return x.log();
}

/// The reference code's safeguard against 0/0 where the relaxation saturates.
inline constexpr double kSafeguard = 1e-10;

/// δ(ε) = ½·log(ε/(1 − ε)) for ε ~ U(0, 1): logistic noise (eq. 50).
template <class V>
[[gnu::always_inline]] inline V logistic_noise(const V& uniform) {
  return 0.5 * log_of(uniform / (1.0 - uniform));
}

/// (λ + δ)/τ: the argument of the relaxed sample's tanh.
template <class V>
[[gnu::always_inline]] inline V relaxed_argument(const V& natural, const V& delta,
                                                 double temperature) {
  return (natural + delta) / temperature;
}

/// θ̂ = tanh((λ + δ)/τ): the relaxed sample on (−1, 1) (eq. 50).
template <class V>
[[gnu::always_inline]] inline V relaxed_sample(const V& natural, const V& delta, double temperature) {
  return tanh_of(relaxed_argument(natural, delta, temperature));
}

/// τ·(1 − μ² + 10⁻¹⁰), μ = tanh λ: the denominator of the scale below (fixed between steps).
template <class V>
[[gnu::always_inline]] inline V relaxation_denominator(const V& mean, double temperature) {
  return temperature * (1.0 - mean * mean + kSafeguard);
}

/// s = (1 − θ̂² + 10⁻¹⁰) / (τ·(1 − μ² + 10⁻¹⁰)): the chain rule from θ̂ to μ (eq. 51), given the
/// denominator from relaxation_denominator.
template <class V>
[[gnu::always_inline]] inline V relaxation_scale(const V& relaxed, const V& denominator) {
  return (1.0 - relaxed * relaxed + kSafeguard) / denominator;
}

}  // namespace concrete

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
  static constexpr double kSafeguard = concrete::kSafeguard;

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
    const Eigen::ArrayXd lambda = natural.array();
    const Eigen::ArrayXd denominator =
        concrete::relaxation_denominator<Eigen::ArrayXd>(lambda.tanh(), tau);
    e.grad_mu = Vector::Zero(p);
    for (std::size_t k = 0; k < uniforms.size(); ++k) {
      const Vector& u = uniforms[k];
      check(u.size() == p,
            fmt::format("Concrete: noise vector {} has length {} but λ has length {}.", k, u.size(),
                        p));
      check((u.array() > 0.0).all() && (u.array() < 1.0).all(),
            fmt::format("Concrete: noise vector {} must lie in the open interval (0, 1).", k));
      const Eigen::ArrayXd delta = concrete::logistic_noise<Eigen::ArrayXd>(u.array());
      const Eigen::ArrayXd theta = concrete::relaxed_sample<Eigen::ArrayXd>(lambda, delta, tau);
      e.loss += value_and_gradient(loss, theta.matrix(), g);
      e.grad_mu += (concrete::relaxation_scale<Eigen::ArrayXd>(theta, denominator) * g.array()).matrix();
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
