// Special functions, constants and numerically careful scalar helpers: the one home of each
// (families, losses and inference models all use these).
//
// digamma ψ = (log Γ)′ and trigamma ψ′ come from Boost.Math (compiled once in
// src/core/family/special.cpp, so that no other translation unit pays for the Boost headers);
// inverse_digamma solves ψ(x) = y by Newton's method from Minka's (2000) starting point. The other
// helpers avoid overflow and cancellation: log(1 + eˣ), log(2·cosh x), log Σ exp, and draws of
// log G for G ~ Gamma(shape, 1) that stay finite for tiny shapes.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"

namespace blr {

/// ψ(x) = d/dx log Γ(x), for x > 0.
double digamma(double x);
/// ψ′(x), for x > 0.
double trigamma(double x);
/// The x > 0 with ψ(x) = y (any finite y), to about 1e-14 relative accuracy.
double inverse_digamma(double y);

/// The Dirichlet concentration α with ψ(α_k) − ψ(Σ_j α_j) = μ_k for all k (the maximum-likelihood
/// problem of Minka 2000: fixed-point warm start, then Newton with backtracking on the concave
/// objective). Needs K ≥ 2 and Σ_k e^{μ_k} < 1; throws blr::Error otherwise or if it fails.
Vector dirichlet_from_expected_log(const Vector& mu);

/// The Gamma shape α with log α − ψ(α) = gap, for gap > 0 (safeguarded Newton).
double gamma_shape_from_log_gap(double gap);

/// log 2π, for Gaussian log-densities.
inline const double kLog2Pi = std::log(2.0 * std::numbers::pi);

/// log(1 + eˣ) (softplus) without overflow or loss of accuracy.
inline double log1p_exp(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

/// log(2·cosh x) = |x| + log(1 + e^{−2|x|}).
inline double log_two_cosh(double x) {
  const double a = std::abs(x);
  return a + std::log1p(std::exp(-2.0 * a));
}

/// Logistic sigmoid 1/(1 + e^{−x}), accurate in both tails.
inline double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

/// log Σ_i exp(x_i); −∞ for an empty vector or all-−∞ entries.
inline double log_sum_exp(const Vector& x) {
  if (x.size() == 0) return -std::numeric_limits<double>::infinity();
  const double top = x.maxCoeff();
  if (!std::isfinite(top)) return top;
  return top + std::log((x.array() - top).exp().sum());
}

/// log G with G ~ Gamma(shape, 1) (Marsaglia & Tsang 2000; for shape < 1 the boost
/// G(a) = G(a+1)·U^{1/a} is applied in log space, so tiny shapes give a finite result).
inline double log_gamma_sample(Rng& rng, double shape) {
  double boost = 0.0;
  if (shape < 1.0) {
    boost = std::log(rng.uniform()) / shape;
    shape += 1.0;
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0, v = 0;
    do {
      x = rng.normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = rng.uniform();
    if (u < 1.0 - 0.0331 * x * x * x * x ||
        std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) {
      return std::log(d * v) + boost;
    }
  }
}

}  // namespace blr
