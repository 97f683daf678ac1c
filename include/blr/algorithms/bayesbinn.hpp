// BayesBiNN and the straight-through estimator as the BLR on Bernoulli candidates
// (Khan & Rue 2023, §4.5, eqs. 47–52; Meng, Bachmann & Khan 2020).
//
// q(θ) = Π_j Bernoulli on {−1, +1} with natural parameter λ_j = ½log(p_j/(1−p_j)), μ_j = tanh λ_j.
// The BLR (eq. 49) is λ ← (1−ρ)λ − ρ ∇_μ E_q[ℓ̄] (natural_step); the prior Π Bernoulli(λ₀) adds −λ₀:
//   BayesBiNN (eq. 52): ∇_μ E_q[ℓ̄] by the Concrete relaxation (eqs. 50–51, K samples, temperature τ);
//                       `beta1` β > 0 averages the natural gradient ĝ + λ − λ₀ as the reference code
//                       does (research/algorithms.md §4); β = 0 is eq. 52 exactly. The step
//                       (bayesbinn_natural_step) and the relaxation's formulas (estimator/concrete.hpp)
//                       are shared with the LibTorch optimizer (blr/torch/optim/bayesbinn.hpp).
//   STE (eq. 48):       the zero-noise, zero-temperature, zero-entropy limit: the gradient at sign(λ)
//                       with the relaxation's scale s taken as 1 (STE's own approximation) and entropy
//                       weight 0 in E_q[ℓ̄] − w·H(q), so λ ← λ − α∇ℓ̄(sign λ).
#pragma once

#include <cmath>

#include "blr/core/option_table.hpp"
#include "blr/core/rng.hpp"
#include "blr/estimator/concrete.hpp"
#include "blr/model/loss.hpp"
#include "blr/rule/natural_step.hpp"
#include "blr/stage/gradient_averaging.hpp"
#include "blr/stage/coordinate.hpp"

namespace blr {

struct BernoulliState {
  Vector natural;           ///< λ
  Vector gradient_average;  ///< for momentum
  long step = 0;
  /// The binary point estimate sign(λ) (ties → +1... as −1 when λ ≤ 0, like the reference).
  Vector sign() const { return natural.unaryExpr([](double v) { return v > 0 ? 1.0 : -1.0; }); }
  /// μ = E_q[θ] = tanh λ.
  Vector mean() const { return natural.array().tanh().matrix(); }
};

struct BayesBinnOptions {
  double lr = 1e-4;            ///< α (ρ)
  double beta1 = 0.0;          ///< β ∈ [0, 1): average of the natural gradient (the reference's betas)
  double temperature = 1e-10;  ///< τ > 0
  int mc_samples = 1;          ///< K
  double prior_natural = 0.0;  ///< λ₀ (0 = uniform prior)

  static const OptionTable<BayesBinnOptions>& table();
  void validate() const { validate_options(*this); }
};

/// The BayesBiNN step on the natural parameter, written once for the core (Eigen arrays) and the
/// LibTorch optimizer (tensors):
///
///   d = ĝ + λ − λ₀                      (∇_μ of E_q[ℓ̄] − H(q) − log prior, in λ's coordinates)
///   u' = β·u + (1 − β)·d,   λ' = λ − α·u'/(1 − βᵗ)     (the reference's momentum, debiased)
///
/// With β = 0 it is written as eq. 52, λ' = (1 − α)λ − α(ĝ − λ₀) (the average stays 0), so that it
/// rounds exactly as the plain equation. `prior` is λ₀ per coordinate.
template <class V>
[[gnu::always_inline]] inline void bayesbinn_natural_step(const V& natural, const V& grad_mu, const V& prior, const V& average,
                            double beta, long t, double lr, V& new_natural, V& new_average) {
  if (beta == 0.0) {
    new_natural = (1.0 - lr) * natural - lr * (grad_mu - prior);
    new_average = average;
    return;
  }
  stage::Coordinate<V> c;
  c.gradient = grad_mu + natural - prior;
  c.average = average;
  stage::GradientAverage{beta, true}.at<double>({t}).direction(c);
  new_average = c.new_average;
  new_natural = natural - lr * c.direction;
}

class BayesBinn {
 public:
  explicit BayesBinn(BayesBinnOptions options)
      : options_(options), estimator_(ConcreteOptions{options.mc_samples, options.temperature, false}) {
    options_.validate();
  }

  template <HasGradient L>
  double step(BernoulliState& state, const L& loss, Rng& rng) const {
    const ConcreteEstimate e = estimator_.estimate(state.natural, loss, rng);
    const long t = state.step + 1;
    check_finite(e.grad_mu, "BayesBiNN natural gradient", t);
    const Index p = state.natural.size();
    if (state.gradient_average.size() != p) state.gradient_average = Vector::Zero(p);
    Eigen::ArrayXd natural, average;
    bayesbinn_natural_step<Eigen::ArrayXd>(
        state.natural.array(), e.grad_mu.array(), Eigen::ArrayXd::Constant(p, options_.prior_natural),
        state.gradient_average.array(), options_.beta1, t, options_.lr, natural, average);
    state.natural = natural.matrix();
    state.gradient_average = average.matrix();
    check_finite(state.natural, "natural parameter", t);
    state.step = t;
    return e.loss;
  }

  const BayesBinnOptions& options() const { return options_; }

 private:
  BayesBinnOptions options_;
  Concrete estimator_;
};

struct SteOptions {
  double lr = 1e-3;  ///< α
  void validate() const { check_positive("lr", lr); }
};

class StraightThrough {
 public:
  explicit StraightThrough(SteOptions options) : options_(options) { options_.validate(); }

  /// λ ← λ − α∇ℓ̄(sign λ): natural_step with entropy weight 0 and the sign-point gradient.
  template <HasGradient L>
  double step(BernoulliState& state, const L& loss) const {
    const Vector binary = state.sign();
    const Vector g = loss.gradient(binary);
    const long t = state.step + 1;
    check_finite(g, "straight-through gradient", t);
    state.natural = natural_step(state.natural, g, options_.lr, 0.0, nullptr, 0.0);
    state.step = t;
    return loss.value(binary);
  }

 private:
  SteOptions options_;
};

}  // namespace blr
