// Spike-and-slab distribution of one parameter block (Khan & Rue 2023, §4.3, eq. 41):
//
//     q(θ) = π₁ N(θ | m, S⁻¹) + (1 − π₁) N(θ | 0, s₀⁻¹ I),     S = diag(s),
//
// the candidate whose BLR gives dropout (eqs. 42–43): the slab (m, s) is learned, the slab
// probability π₁ and the spike precision s₀ (large, to emulate a point mass at 0) are fixed. One
// object is one block θ_jl (the weights into unit j of layer l, dropped together); a network is a
// product of independent blocks. A draw picks z ~ Bernoulli(π₁) for the whole block, then
// θ = m + ε/√s (z = 1) or θ = ε/√s₀ (z = 0); as s₀ → ∞ this is the dropout weight z·(m + ε/√s).
// Not an exponential family: it is a two-component GaussianMixture<GaussianDiag> with fixed
// weights, and `as_mixture()` gives that view (responsibilities, ∇ and ∇² of log q, eqs. 69–71).
#pragma once

#include <cmath>
#include <utility>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/family/mixture.hpp"

namespace blr {

class SpikeAndSlab {
 public:
  Vector mean;       ///< m, the slab mean
  Vector precision;  ///< s, the slab's diagonal precision (each entry > 0)

  SpikeAndSlab() = default;
  SpikeAndSlab(Vector m, Vector s, double slab_probability, double spike_precision)
      : mean(std::move(m)),
        precision(std::move(s)),
        slab_probability_(slab_probability),
        spike_precision_(spike_precision) {
    check(mean.size() == precision.size(), "SpikeAndSlab: mean and precision differ in length.");
    check((precision.array() > 0).all() && precision.allFinite(),
          "SpikeAndSlab: the slab precision must be positive and finite.");
    check(slab_probability > 0 && slab_probability <= 1,
          fmt::format("SpikeAndSlab: the slab probability pi_1 must lie in (0, 1]; got {}.",
                      slab_probability));
    check_positive("spike_precision", spike_precision);
  }

  Index dimension() const { return mean.size(); }
  /// π₁, the probability of keeping the block.
  double slab_probability() const { return slab_probability_; }
  /// s₀, the fixed precision of the spike at 0.
  double spike_precision() const { return spike_precision_; }
  GaussianDiag slab() const { return GaussianDiag(mean, precision); }
  GaussianDiag spike() const {
    return GaussianDiag(Vector::Zero(mean.size()), Vector::Constant(mean.size(), spike_precision_));
  }
  /// The same distribution as a mixture (slab first, then spike; a slab probability of 1 gives a
  /// one-component mixture).
  MixtureOfDiagonalGaussians as_mixture() const {
    if (slab_probability_ >= 1.0) return MixtureOfDiagonalGaussians({slab()}, Vector::Ones(1));
    return MixtureOfDiagonalGaussians({slab(), spike()},
                                      Vector{{slab_probability_, 1.0 - slab_probability_}});
  }

  double log_density(const Vector& theta) const { return as_mixture().log_density(theta); }
  /// (q(z = 1 | θ), q(z = 0 | θ)): slab and spike responsibilities, summing to 1.
  Vector responsibilities(const Vector& theta) const {
    const Vector r = as_mixture().responsibilities(theta);
    return r.size() == 2 ? r : Vector{{1.0, 0.0}};
  }
  /// q(z = 1 | θ), the quantity App. G approximates by 1 when θ is far from 0 (eqs. 85–86).
  double slab_responsibility(const Vector& theta) const { return responsibilities(theta)[0]; }
  Vector grad_log_density(const Vector& theta) const {
    return as_mixture().grad_log_density(theta);
  }
  Matrix hessian_log_density(const Vector& theta) const {
    return as_mixture().hessian_log_density(theta);
  }

  /// E[θ] = π₁ m.
  Vector expected_value() const { return slab_probability_ * mean; }
  /// Var[θ_i] = π₁ (1/s_i + m_i²) + (1 − π₁)/s₀ − (π₁ m_i)².
  Vector variance() const {
    const auto m2 = mean.array().square();
    return (slab_probability_ * (precision.array().inverse() + m2) +
            (1.0 - slab_probability_) / spike_precision_ -
            slab_probability_ * slab_probability_ * m2)
        .matrix();
  }

  /// θ from given noise: m + ε/√s when `keep`, ε/√s₀ otherwise.
  Vector sample_from_noise(bool keep, const Vector& eps) const {
    check(eps.size() == mean.size(),
          "SpikeAndSlab::sample_from_noise: the noise has the wrong length.");
    return keep ? Vector(mean + eps.cwiseQuotient(precision.cwiseSqrt()))
                : Vector(eps / std::sqrt(spike_precision_));
  }
  /// (z, θ): z = true (slab) with probability π₁.
  std::pair<bool, Vector> sample_with_indicator(Rng& rng) const {
    const bool keep = rng.uniform() < slab_probability_;
    return {keep, sample_from_noise(keep, rng.normal_vector(mean.size()))};
  }
  Vector sample(Rng& rng) const { return sample_with_indicator(rng).second; }

 private:
  double slab_probability_ = 0.5;
  double spike_precision_ = 1e4;
};

}  // namespace blr
