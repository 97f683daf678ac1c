// Finite mixture of Gaussians with fixed weights (Khan & Rue 2023, §3.2 and App. E):
//
//     q(θ) = Σ_k π_k N(θ | m_k, S_k⁻¹),        q(θ, z = k) = π_k N(θ | m_k, S_k⁻¹).
//
// The marginal q(θ) is not an exponential family (its Fisher matrix can be singular); the BLR for
// mixtures (eq. 28, Lin et al. 2019) steps each component in the natural parameters of the joint
// q(θ, z), eq. 27:
//     λ_k = (S_k m_k, −½ S_k),          μ_k = (E[1{z=k} θ], E[1{z=k} θθᵀ]) = π_k (m_k, S_k⁻¹ + m_k
//     m_kᵀ),
// which with π fixed are the component's own λ and π_k times its own μ. Here they use the
// component's minimal layout (gaussian_full.hpp or gaussian_diag.hpp). The log-density terms that
// the update needs are eqs. 69–71:
//     r_k(θ) = π_k N_k(θ) / Σ_j π_j N_j(θ)                                     (71)
//     ∇ log q(θ) = Σ_j r_j g_j,            g_j = S_j (m_j − θ)                 (69)
//     ∇² log q(θ) = Σ_j r_j (g_j g_jᵀ − S_j) − ḡ ḡᵀ,   ḡ = Σ_j r_j g_j         (70, with
//                   A_ij = g_i g_jᵀ summed out).
// Components are GaussianFull or GaussianDiag. Not an ExponentialFamily: this header has its own
// API, checked by tests/family/mixture_test.cpp.
#pragma once

#include <cmath>
#include <concepts>
#include <utility>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/family/gaussian_full.hpp"
#include "blr/family/special.hpp"

namespace blr {

/// A Gaussian component of a mixture: GaussianFull or GaussianDiag.
template <class C>
concept GaussianComponent = std::same_as<C, GaussianFull> || std::same_as<C, GaussianDiag>;

template <GaussianComponent Component>
class GaussianMixture {
 public:
  GaussianMixture() = default;
  /// K ≥ 1 components of one dimension, weights positive and summing to 1 (within 1e-9;
  /// renormalised).
  GaussianMixture(std::vector<Component> components, Vector weights)
      : components_(std::move(components)), weights_(std::move(weights)) {
    check(!components_.empty(), "GaussianMixture: there must be at least one component.");
    check(static_cast<Index>(components_.size()) == weights_.size(),
          fmt::format("GaussianMixture: {} components but {} weights.", components_.size(),
                      weights_.size()));
    for (const auto& c : components_) {
      check(c.dimension() == components_.front().dimension(),
            "GaussianMixture: all components must have the same dimension.");
    }
    for (Index k = 0; k < weights_.size(); ++k) {
      check(weights_[k] > 0 && std::isfinite(weights_[k]),
            fmt::format("GaussianMixture: weights must be positive; weight {} is {}.", k,
                        weights_[k]));
    }
    check(
        std::abs(weights_.sum() - 1.0) < 1e-9,
        fmt::format("GaussianMixture: the weights must sum to 1; they sum to {}.", weights_.sum()));
    weights_ /= weights_.sum();
  }

  /// K.
  Index size() const { return static_cast<Index>(components_.size()); }
  /// d.
  Index dimension() const { return components_.front().dimension(); }
  const Vector& weights() const { return weights_; }
  const std::vector<Component>& components() const { return components_; }
  const Component& component(Index k) const { return components_.at(static_cast<std::size_t>(k)); }
  /// Mutable access for the per-component BLR update (eq. 28); the dimension must not change.
  Component& component(Index k) { return components_.at(static_cast<std::size_t>(k)); }

  /// log π_k + log N(θ | m_k, S_k⁻¹) for every k: the log of the joint q(θ, z = k).
  Vector log_joint(const Vector& theta) const {
    check(theta.size() == dimension(), "GaussianMixture: the point has the wrong length.");
    Vector out(size());
    for (Index k = 0; k < size(); ++k)
      out[k] = std::log(weights_[k]) + component(k).log_density(theta);
    return out;
  }
  /// log q(θ) = log Σ_k π_k N_k(θ).
  double log_density(const Vector& theta) const { return log_sum_exp(log_joint(theta)); }
  /// r_k(θ) = q(z = k | θ) (eq. 71); sums to 1.
  Vector responsibilities(const Vector& theta) const {
    const Vector lj = log_joint(theta);
    return (lj.array() - log_sum_exp(lj)).exp().matrix();
  }
  /// ∇_θ log q(θ) = Σ_j r_j S_j (m_j − θ) (eq. 69).
  Vector grad_log_density(const Vector& theta) const {
    const Vector r = responsibilities(theta);
    Vector g = Vector::Zero(dimension());
    for (Index j = 0; j < size(); ++j)
      g += r[j] * component(j).precision_times(component(j).mean - theta);
    return g;
  }
  /// ∇²_θ log q(θ) (eq. 70) = Σ_j r_j (g_j g_jᵀ − S_j) − ḡḡᵀ.
  Matrix hessian_log_density(const Vector& theta) const {
    const Vector r = responsibilities(theta);
    const Index d = dimension();
    Matrix h = Matrix::Zero(d, d);
    Vector gbar = Vector::Zero(d);
    for (Index j = 0; j < size(); ++j) {
      const Vector g = component(j).precision_times(component(j).mean - theta);
      h += r[j] * (g * g.transpose() - component(j).precision_matrix());
      gbar += r[j] * g;
    }
    h -= gbar * gbar.transpose();
    return h;
  }

  /// E[θ] = Σ_k π_k m_k.
  Vector mean() const {
    Vector m = Vector::Zero(dimension());
    for (Index k = 0; k < size(); ++k) m += weights_[k] * component(k).mean;
    return m;
  }
  /// Cov[θ] = Σ_k π_k (S_k⁻¹ + m_k m_kᵀ) − E[θ]E[θ]ᵀ.
  Matrix covariance() const {
    const Vector m = mean();
    Matrix c = -m * m.transpose();
    for (Index k = 0; k < size(); ++k) {
      const Component& q = component(k);
      c += weights_[k] * (covariance_of(q) + q.mean * q.mean.transpose());
    }
    return c;
  }

  /// λ_k of the joint q(θ, z = k) (eq. 27): the component's own natural parameter.
  Vector component_natural(Index k) const { return component(k).natural(); }
  /// μ_k of the joint (eq. 27): π_k times the component's own expectation parameter.
  Vector component_expectation(Index k) const { return weights_[k] * component(k).expectation(); }
  /// Replaces component k by the one with joint natural parameter λ_k (throws if invalid).
  void set_component_natural(Index k, const Vector& lambda) {
    check(lambda.size() == component(k).natural_size(),
          "GaussianMixture: the component natural parameter has the wrong length.");
    component(k) = Component::from_natural(lambda);
  }

  /// (z, θ) with z ~ π and θ ~ N(m_z, S_z⁻¹).
  std::pair<Index, Vector> sample_with_component(Rng& rng) const {
    double u = rng.uniform();
    Index z = size() - 1;
    for (Index k = 0; k + 1 < size(); ++k) {
      if (u < weights_[k]) {
        z = k;
        break;
      }
      u -= weights_[k];
    }
    return {z, component(z).sample(rng)};
  }
  Vector sample(Rng& rng) const { return sample_with_component(rng).second; }

  /// Monte Carlo estimate of the entropy H(q) = −E_q[log q(θ)] (no closed form) from n draws;
  /// `standard_error`, when given, receives the estimate's standard error.
  double entropy_estimate(Rng& rng, Index n, double* standard_error = nullptr) const {
    check(n >= 2, "GaussianMixture::entropy_estimate needs at least two draws.");
    double s1 = 0, s2 = 0;
    for (Index i = 0; i < n; ++i) {
      const double v = -log_density(sample(rng));
      s1 += v;
      s2 += v * v;
    }
    const double mean_v = s1 / static_cast<double>(n);
    if (standard_error != nullptr) {
      const double var =
          (s2 - static_cast<double>(n) * mean_v * mean_v) / static_cast<double>(n - 1);
      *standard_error = std::sqrt(std::max(var, 0.0) / static_cast<double>(n));
    }
    return mean_v;
  }

 private:
  static Matrix covariance_of(const GaussianFull& q) { return q.covariance(); }
  static Matrix covariance_of(const GaussianDiag& q) { return q.variance().asDiagonal(); }

  std::vector<Component> components_;
  Vector weights_;
};

/// Mixture of full-covariance Gaussians (the multimodal optimiser of §3.2).
using MixtureOfGaussians = GaussianMixture<GaussianFull>;
/// Mixture of diagonal Gaussians.
using MixtureOfDiagonalGaussians = GaussianMixture<GaussianDiag>;

}  // namespace blr
