// The common API of the exponential families used as candidate distributions q (Khan & Rue 2023,
// §2, eq. 4): densities of the form
//
//     q(x) = h(x) · exp( ⟨λ, T(x)⟩ − A(λ) ),      log q(x) = ⟨λ, T(x)⟩ − A(λ) + log h(x),
//
// with natural parameter λ ∈ Ω, sufficient statistic T, log-partition A and expectation parameter
// μ = E_q[T(x)] = ∇A(λ). Every family is a minimal representation (the entries of T are affinely
// independent), so λ ↦ μ is a bijection and the Fisher matrix ∇²A(λ) is positive definite; the
// BLR (eq. 6) steps λ with gradients taken with respect to μ.
//
// A family is a value type. `natural()` and `expectation()` flatten λ and μ into a Vector in the
// same documented order; `natural_size()` is that length. Parameters that the family holds fixed
// (the precision S₀ of GaussianFixed) are not part of λ: `with_natural` / `with_expectation` build
// a member of the same family keeping them, while the static `from_natural` / `from_expectation`
// use the documented default for them (S₀ = I) and otherwise equal the members. Invalid inputs
// raise blr::Error with a sentence naming the family and the violated condition.
//
// The families (and their λ, μ orders) are listed in the header of each file:
//   gaussian_fixed.hpp, gaussian_diag.hpp, gaussian_full.hpp, bernoulli.hpp (on {−1,+1}, §4.5),
//   categorical.hpp, beta.hpp, gamma.hpp, dirichlet.hpp.
// Mixtures (mixture.hpp, §3.2 / App. E) and spike-and-slab (spike_and_slab.hpp, §4.3) are not
// exponential families and have their own API.
#pragma once

#include <concepts>
#include <string_view>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"

namespace blr {

/// What the BLR and the shared invariant tests may ask of a candidate family `F`.
template <class F>
concept ExponentialFamily = std::copy_constructible<F> &&
    requires(const F& q, const Vector& v, const typename F::Sample& x, Rng& rng) {
  typename F::Sample;                                            ///< a point x of the support
  { q.natural() } -> std::convertible_to<Vector>;                ///< λ (minimal, flattened)
  { q.expectation() } -> std::convertible_to<Vector>;            ///< μ = ∇A(λ), same order
  { q.natural_size() } -> std::convertible_to<Index>;            ///< length of λ and μ
  { F::from_natural(v) } -> std::same_as<F>;                     ///< throws if λ ∉ Ω
  { F::from_expectation(v) } -> std::same_as<F>;                 ///< throws if μ ∉ int M
  { F::natural_is_valid(v) } -> std::same_as<bool>;              ///< λ ∈ Ω
  { q.with_natural(v) } -> std::same_as<F>;                      ///< keeps fixed parts
  { q.with_expectation(v) } -> std::same_as<F>;                  ///< keeps fixed parts
  { q.log_partition() } -> std::convertible_to<double>;          ///< A(λ)
  { q.entropy() } -> std::convertible_to<double>;                ///< −E_q[log q]
  { q.kl(q) } -> std::convertible_to<double>;                    ///< KL(q ‖ other)
  { q.log_density(x) } -> std::convertible_to<double>;           ///< log q(x)
  { q.sufficient_statistic(x) } -> std::convertible_to<Vector>;  ///< T(x)
  { q.log_base_measure(x) } -> std::convertible_to<double>;      ///< log h(x)
  { q.sample(rng) } -> std::same_as<typename F::Sample>;         ///< x ~ q
};

/// KL(q ‖ r) of two members of one exponential family as the Bregman divergence of A:
/// A(λ_r) − A(λ_q) − ⟨λ_r − λ_q, μ_q⟩.
inline double bregman_kl(double log_partition_q, double log_partition_r, const Vector& natural_q,
                         const Vector& natural_r, const Vector& expectation_q) {
  // A plain loop: Eigen's vectorised dot of an expression trips GCC 12's -Warray-bounds (a false
  // positive) once inlined at a known odd size.
  check(natural_q.size() == expectation_q.size() && natural_r.size() == expectation_q.size(),
        "bregman_kl: the parameters differ in length.");
  double inner = 0.0;
  for (Index i = 0; i < expectation_q.size(); ++i)
    inner += (natural_r[i] - natural_q[i]) * expectation_q[i];
  return log_partition_r - log_partition_q - inner;
}

/// Throws unless `v` has `expected` entries, naming the family and the parameter.
inline void check_size(std::string_view family, std::string_view what, const Vector& v,
                       Index expected) {
  if (v.size() != expected) {
    throw Error(
        fmt::format("{}: {} must have {} entries; got {}.", family, what, expected, v.size()));
  }
}

/// Throws unless every entry of `v` is finite, naming the family and the parameter.
inline void check_all_finite(std::string_view family, std::string_view what, const Vector& v) {
  for (Index i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) {
      throw Error(fmt::format("{}: {} must be finite; entry {} is {}.", family, what, i, v[i]));
    }
  }
}

}  // namespace blr
