// Categorical distribution over K classes {0, …, K−1} in minimal form (the last class is the
// reference): q(x = k) = p_k.
//
// λ_k = log(p_k / p_{K−1}),  μ_k = p_k,  T(x)_k = 1[x = k]   for k = 0, …, K−2 (length K − 1),
// A(λ) = log(1 + Σ_k e^{λ_k}), h = 1, Fisher ∇²A = diag(p) − ppᵀ (first K − 1 classes).
// Valid λ: any finite vector; valid μ: positive entries summing to less than 1.
#pragma once

#include <cmath>
#include <limits>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"
#include "blr/family/family.hpp"
#include "blr/family/special.hpp"

namespace blr {

class Categorical {
 public:
  using Sample = Index;  ///< the class, 0 … K−1

  Categorical() = default;
  /// From the minimal λ (length K − 1, finite).
  explicit Categorical(Vector lambda) : natural_(std::move(lambda)) {
    check_all_finite("Categorical", "the natural parameter (log-odds against the last class)",
                     natural_);
  }
  /// From all K probabilities (positive, summing to 1 within 1e-9; renormalised).
  static Categorical from_probabilities(const Vector& p) {
    check(p.size() >= 2, "Categorical: there must be at least two classes.");
    for (Index k = 0; k < p.size(); ++k) {
      check(p[k] > 0 && std::isfinite(p[k]),
            fmt::format("Categorical: probabilities must be positive; entry {} is {}.", k, p[k]));
    }
    check(std::abs(p.sum() - 1.0) < 1e-9,
          fmt::format("Categorical: probabilities must sum to 1; they sum to {}.", p.sum()));
    const Index km1 = p.size() - 1;
    return Categorical((p.head(km1).array().log() - std::log(p[km1])).matrix());
  }

  /// K.
  Index classes() const { return natural_.size() + 1; }
  Index natural_size() const { return natural_.size(); }
  Vector natural() const { return natural_; }
  /// μ = (p_0, …, p_{K−2}).
  Vector expectation() const { return probabilities().head(natural_.size()); }
  /// All K probabilities (a softmax of (λ, 0)).
  Vector probabilities() const {
    Vector logits(classes());
    logits << natural_, 0.0;
    return (logits.array() - log_sum_exp(logits)).exp().matrix();
  }

  static bool natural_is_valid(const Vector& lambda) { return lambda.allFinite(); }
  static Categorical from_natural(const Vector& lambda) { return Categorical(lambda); }
  static Categorical from_expectation(const Vector& mu) {
    check_all_finite("Categorical", "the expectation parameter", mu);
    for (Index k = 0; k < mu.size(); ++k) {
      check(mu[k] > 0, fmt::format("Categorical: the expectation parameter (the first K-1 "
                                   "probabilities) must be positive; entry {} is {}.",
                                   k, mu[k]));
    }
    const double last = 1.0 - mu.sum();
    check(last > 0, fmt::format("Categorical: the first K-1 probabilities must sum to less than 1; "
                                "they sum to {}.",
                                mu.sum()));
    return Categorical((mu.array().log() - std::log(last)).matrix());
  }
  Categorical with_natural(const Vector& lambda) const { return from_natural(lambda); }
  Categorical with_expectation(const Vector& mu) const { return from_expectation(mu); }

  /// A = log(1 + Σ e^{λ_k}).
  double log_partition() const {
    Vector logits(classes());
    logits << natural_, 0.0;
    return log_sum_exp(logits);
  }
  double entropy() const { return log_partition() - natural_.dot(expectation()); }
  double kl(const Categorical& other) const {
    check(other.classes() == classes(), "Categorical::kl: the numbers of classes differ.");
    return bregman_kl(log_partition(), other.log_partition(), natural_, other.natural_,
                      expectation());
  }
  /// log p_x; −∞ outside {0, …, K−1}.
  double log_density(Index x) const {
    if (x < 0 || x >= classes()) return -std::numeric_limits<double>::infinity();
    return (x < natural_.size() ? natural_[x] : 0.0) - log_partition();
  }
  /// T(x): the one-hot code of x without its last entry.
  Vector sufficient_statistic(Index x) const {
    Vector t = Vector::Zero(natural_.size());
    if (x >= 0 && x < natural_.size()) t[x] = 1.0;
    return t;
  }
  double log_base_measure(Index) const { return 0.0; }
  /// Inverse-CDF draw.
  Index sample(Rng& rng) const {
    const Vector p = probabilities();
    double u = rng.uniform();
    for (Index k = 0; k + 1 < p.size(); ++k) {
      if (u < p[k]) return k;
      u -= p[k];
    }
    return p.size() - 1;
  }

 private:
  Vector natural_;
};

}  // namespace blr
