// Mean-field Bernoulli on {−1, +1}^P: q(θ) = Π_j q(θ_j), q(θ_j = +1) = p_j (Khan & Rue 2023, §4.5).
//
// Natural λ_j = ½ log(p_j / (1 − p_j)), expectation μ_j = 2p_j − 1 = tanh(λ_j), T(θ) = θ, h = 1,
// A(λ) = Σ_j log(2 cosh λ_j), Fisher ∇²A = diag(1 − tanh² λ). This is the family of BayesBiNN
// (eq. 49). The Concrete (Gumbel-softmax) relaxation of eq. 50,
//     θ̂ = tanh((λ + δ(u)) / τ),   δ(u) = ½ log(u / (1 − u)),   u ~ U(0, 1),
// gives continuous surrogates in (−1, 1) whose τ → 0 limit sign(λ + δ(u)) has the law of q; its
// chain-rule factor s_j = ∂θ̂_j/∂μ_j = (1 − θ̂_j²) / (τ (1 − tanh² λ_j)) is eq. 51.
#pragma once

#include <cmath>
#include <limits>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"
#include "blr/family/family.hpp"
#include "blr/family/special.hpp"

namespace blr {

class Bernoulli {
 public:
  using Sample = Vector;  ///< entries −1 or +1

  Bernoulli() = default;
  /// From λ (any finite vector).
  explicit Bernoulli(Vector lambda) : natural_(std::move(lambda)) {
    check_all_finite("Bernoulli", "the natural parameter (half log-odds)", natural_);
  }
  /// From the probabilities p_j = q(θ_j = +1), each in (0, 1).
  static Bernoulli from_probability(const Vector& p) {
    for (Index j = 0; j < p.size(); ++j) {
      check(p[j] > 0 && p[j] < 1,
            fmt::format("Bernoulli: probabilities must lie in (0, 1); entry {} is {}.", j, p[j]));
    }
    return Bernoulli((0.5 * (p.array().log() - (-p.array()).log1p())).matrix());
  }

  Index dimension() const { return natural_.size(); }
  Index natural_size() const { return natural_.size(); }
  /// λ = ½ log(p / (1 − p)).
  Vector natural() const { return natural_; }
  /// μ = tanh λ = 2p − 1.
  Vector expectation() const { return natural_.array().tanh().matrix(); }
  /// p = q(θ = +1) = σ(2λ).
  Vector probability() const {
    return natural_.unaryExpr([](double l) { return sigmoid(2.0 * l); });
  }
  /// E[θ] = μ.
  Vector mean() const { return expectation(); }
  /// Var[θ] = 1 − μ² = 4p(1 − p) (the Fisher diagonal), accurate in the tails.
  Vector variance() const {
    return natural_.unaryExpr([](double l) { return 4.0 * sigmoid(2.0 * l) * sigmoid(-2.0 * l); });
  }

  static bool natural_is_valid(const Vector& lambda) { return lambda.allFinite(); }
  static Bernoulli from_natural(const Vector& lambda) { return Bernoulli(lambda); }
  static Bernoulli from_expectation(const Vector& mu) {
    for (Index j = 0; j < mu.size(); ++j) {
      check(mu[j] > -1 && mu[j] < 1,
            fmt::format("Bernoulli: the expectation 2p - 1 must lie in (-1, 1); entry {} is {}.", j,
                        mu[j]));
    }
    return Bernoulli(mu.array().atanh().matrix());
  }
  Bernoulli with_natural(const Vector& lambda) const { return from_natural(lambda); }
  Bernoulli with_expectation(const Vector& mu) const { return from_expectation(mu); }

  /// A = Σ log(2 cosh λ).
  double log_partition() const { return natural_.unaryExpr(&log_two_cosh).sum(); }
  /// H = A − ⟨λ, μ⟩.
  double entropy() const { return log_partition() - natural_.dot(expectation()); }
  double kl(const Bernoulli& other) const {
    check(other.dimension() == dimension(), "Bernoulli::kl: the dimensions differ.");
    return bregman_kl(log_partition(), other.log_partition(), natural_, other.natural_,
                      expectation());
  }
  /// log q(θ) = ⟨λ, θ⟩ − A; −∞ when some entry is not ±1.
  double log_density(const Vector& theta) const {
    check(theta.size() == dimension(), "Bernoulli::log_density: the point has the wrong length.");
    if (!((theta.array() == 1.0) || (theta.array() == -1.0)).all())
      return -std::numeric_limits<double>::infinity();
    return natural_.dot(theta) - log_partition();
  }
  Vector sufficient_statistic(const Vector& theta) const { return theta; }
  double log_base_measure(const Vector&) const { return 0.0; }

  /// θ_j = +1 with probability p_j.
  Vector sample(Rng& rng) const {
    Vector out(dimension());
    for (Index j = 0; j < dimension(); ++j)
      out[j] = rng.uniform() > sigmoid(-2.0 * natural_[j]) ? 1.0 : -1.0;
    return out;
  }
  /// δ(u) = ½ log(u / (1 − u)), the logistic noise of eq. 50.
  static double relaxation_noise(double u) { return 0.5 * (std::log(u) - std::log1p(-u)); }
  /// θ̂ = tanh((λ + δ(u)) / τ) for given uniforms u ∈ (0, 1) (eq. 50).
  Vector relaxed_sample_from_noise(const Vector& u, double temperature) const {
    check(u.size() == dimension(),
          "Bernoulli::relaxed_sample_from_noise: the noise has the wrong length.");
    check_positive("temperature", temperature);
    Vector out(dimension());
    for (Index j = 0; j < dimension(); ++j)
      out[j] = std::tanh((natural_[j] + relaxation_noise(u[j])) / temperature);
    return out;
  }
  /// A relaxed draw (eq. 50) with fresh uniforms.
  Vector relaxed_sample(Rng& rng, double temperature) const {
    Vector u(dimension());
    for (Index j = 0; j < dimension(); ++j) u[j] = rng.uniform();
    return relaxed_sample_from_noise(u, temperature);
  }
  /// s = ∂θ̂/∂μ = (1 − θ̂²) / (τ (1 − tanh² λ)) at a relaxed draw θ̂ (eq. 51).
  Vector relaxed_jacobian(const Vector& relaxed, double temperature) const {
    check(relaxed.size() == dimension(),
          "Bernoulli::relaxed_jacobian: the draw has the wrong length.");
    check_positive("temperature", temperature);
    return ((1.0 - relaxed.array().square()) / (temperature * variance().array())).matrix();
  }

 private:
  Vector natural_;
};

}  // namespace blr
