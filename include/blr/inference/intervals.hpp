// Credible intervals and posterior correlations: what a statistician reads off a posterior.
//
// An equal-tailed credible interval at level L holds the central mass L of a marginal posterior:
// [F⁻¹((1 − L)/2), F⁻¹((1 + L)/2)] with F the marginal's CDF. Each posterior family gets the exact
// quantiles of its own marginal:
//   Gaussian N(m, s²)              m ± z·s,  z = Φ⁻¹((1 + L)/2)   (Boost.Math's normal quantile)
//   Beta(a, b), Gamma(a, rate b)   Boost.Math's beta and gamma quantiles (conjugate posteriors;
//                                  a Dirichlet's marginals are Beta(α_k, α₀ − α_k))
//   Student t(ν, loc, scale)       loc ± t_ν·scale (the Normal–Gamma marginal of μ:
//                                  ν = 2α, scale² = β/(ακ); Murphy 2007, eq. 110)
//   mixture Σ_k w_k N(m_k, s_k²)   the root of Σ_k w_k Φ((x − m_k)/s_k) = p by bisection, which the
//                                  component quantiles bracket: F ≤ p at min_k(m_k + s_k z_p) and
//                                  F ≥ p at max_k(m_k + s_k z_p).
// A monotone map g of a quantity keeps quantiles: the interval of σ(a) or e^a is the map of a's.
// The correlation of a covariance Σ is D^{−½} Σ D^{−½}, D = diag(Σ).
#pragma once

#include "blr/core/types.hpp"

namespace blr::inference {

/// An interval [lower, upper].
struct Interval {
  double lower = 0, upper = 0;
};

/// Throws a sentence naming `--level` unless 0 < level < 1.
void check_level(double level);
/// z = Φ⁻¹((1 + level)/2), the half-width of a Gaussian interval in standard deviations.
double gaussian_z(double level);

/// Equal-tailed intervals of the distributions above. Non-finite parameters give NaN bounds (for
/// the caller's finiteness check to name); finite parameters outside the domain are an error.
Interval gaussian_interval(double mean, double sd, double level);
Interval beta_interval(double a, double b, double level);
Interval gamma_interval(double shape, double rate, double level);
Interval student_t_interval(double dof, double location, double scale, double level);

/// Gaussian intervals m ± z·sd elementwise, with z computed once (10^6 Kalman states need one
/// quantile): the bands of the Kalman states and forecasts, a GP's latent values and the CLI's
/// marginals.
struct IntervalBands {
  Matrix lower, upper;  ///< the shape of the mean (a column for a vector)
};
IntervalBands gaussian_bands(const Matrix& mean, const Matrix& sd, double level);

/// A one-dimensional mixture of Gaussians (a single component is a Gaussian); a component of
/// variance 0 is a point mass.
struct GaussianMixture1d {
  Vector weights, means, variances;  ///< weights sum to 1

  double mean() const;
  double variance() const;  ///< law of total variance
  double cdf(double x) const;
  /// The p-quantile (0 < p < 1); exact for one component, bisection to the last bit otherwise.
  double quantile(double p) const;
  Interval interval(double level) const;
};

/// D^{−½} Σ D^{−½}; a zero variance gives a zero row and column (and 1 on the diagonal).
Matrix correlation(const Matrix& covariance);

}  // namespace blr::inference
