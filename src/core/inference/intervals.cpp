#include "blr/inference/intervals.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/gamma.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <numbers>

#include "blr/core/error.hpp"

namespace blr::inference {
namespace {

double lower_tail(double level) { return (1.0 - level) / 2.0; }
double upper_tail(double level) { return (1.0 + level) / 2.0; }

/// Non-finite parameters give a non-finite interval, which the caller's finiteness check reports
/// by name (the parameters themselves are results that are not finite).
Interval not_finite() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {nan, nan};
}

}  // namespace

void check_level(double level) {
  check(level > 0 && level < 1,
        fmt::format("Option '--level' must lie strictly between 0 and 1 (0.95 for 95% intervals); "
                    "got {}.",
                    level));
  // The tails (1 ± level)/2 in double precision: a level within 1.1e-16 of 1 leaves an upper tail
  // that rounds to 1, whose quantile is infinite.
  check(upper_tail(level) < 1 && lower_tail(level) > 0,
        fmt::format("Option '--level' {:.17g} is so close to 1 that the upper tail (1 + level)/2 "
                    "rounds to 1 in double precision, where every quantile is infinite; use a "
                    "level of at most 1 - 1e-15.",
                    level));
}

double gaussian_z(double level) {
  check_level(level);
  return boost::math::quantile(boost::math::normal_distribution<double>(0.0, 1.0),
                               upper_tail(level));
}

Interval gaussian_interval(double mean, double sd, double level) {
  const double z = gaussian_z(level);
  return {mean - z * sd, mean + z * sd};
}

IntervalBands gaussian_bands(const Matrix& mean, const Matrix& sd, double level) {
  check(mean.rows() == sd.rows() && mean.cols() == sd.cols(),
        fmt::format("Gaussian bands need one sd per mean; got {}×{} means and {}×{} sds.",
                    mean.rows(), mean.cols(), sd.rows(), sd.cols()));
  const double z = gaussian_z(level);
  return {mean - z * sd, mean + z * sd};
}

Interval beta_interval(double a, double b, double level) {
  check_level(level);
  if (!std::isfinite(a) || !std::isfinite(b)) return not_finite();
  check(a > 0 && b > 0,
        fmt::format("A Beta distribution needs positive parameters; got ({}, {}).", a, b));
  const boost::math::beta_distribution<double> d(a, b);
  return {boost::math::quantile(d, lower_tail(level)), boost::math::quantile(d, upper_tail(level))};
}

Interval gamma_interval(double shape, double rate, double level) {
  check_level(level);
  if (!std::isfinite(shape) || !std::isfinite(rate)) return not_finite();
  check(shape > 0 && rate > 0,
        fmt::format("A Gamma distribution needs positive shape and rate; got ({}, {}).", shape,
                    rate));
  const boost::math::gamma_distribution<double> d(shape, 1.0 / rate);
  return {boost::math::quantile(d, lower_tail(level)), boost::math::quantile(d, upper_tail(level))};
}

Interval student_t_interval(double dof, double location, double scale, double level) {
  check_level(level);
  if (!std::isfinite(dof) || !std::isfinite(location) || !std::isfinite(scale))
    return not_finite();
  check(dof > 0,
        fmt::format("A Student t distribution needs positive degrees of freedom; got {}.", dof));
  const double t =
      boost::math::quantile(boost::math::students_t_distribution<double>(dof), upper_tail(level));
  return {location - t * scale, location + t * scale};
}

double GaussianMixture1d::mean() const { return weights.dot(means); }

double GaussianMixture1d::variance() const {
  const double m = mean();
  return weights.dot(Vector(variances.array() + (means.array() - m).square()));
}

double GaussianMixture1d::cdf(double x) const {
  double f = 0;
  for (Index k = 0; k < weights.size(); ++k) {
    const double s = std::sqrt(variances[k]);
    f += weights[k] *
         (s > 0 ? 0.5 * std::erfc(-(x - means[k]) / (s * std::numbers::sqrt2)) : (x >= means[k]));
  }
  return f;
}

double GaussianMixture1d::quantile(double p) const {
  check(p > 0 && p < 1, fmt::format("A quantile needs 0 < p < 1; got {}.", p));
  check(weights.size() >= 1 && means.size() == weights.size() && variances.size() == weights.size(),
        "A Gaussian mixture needs one mean and one variance per weight.");
  const double z =
      boost::math::quantile(boost::math::normal_distribution<double>(0.0, 1.0), p);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (Index k = 0; k < weights.size(); ++k) {
    const double q = means[k] + std::sqrt(variances[k]) * z;
    lo = std::min(lo, q);
    hi = std::max(hi, q);
  }
  if (weights.size() == 1 || lo == hi) return lo;
  // F(lo) ≤ p ≤ F(hi); halve until the midpoint is one of the ends (the last bit).
  for (int i = 0; i < 2100; ++i) {
    const double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    (cdf(mid) < p ? lo : hi) = mid;
  }
  return lo + (hi - lo) / 2;
}

Interval GaussianMixture1d::interval(double level) const {
  check_level(level);
  return {quantile(lower_tail(level)), quantile(upper_tail(level))};
}

Matrix correlation(const Matrix& covariance) {
  check(covariance.rows() == covariance.cols(), "A covariance matrix must be square.");
  const Index d = covariance.rows();
  Vector inv_sd(d);
  for (Index i = 0; i < d; ++i) {
    const double v = covariance(i, i);
    inv_sd[i] = v > 0 ? 1.0 / std::sqrt(v) : 0.0;
  }
  Matrix r = inv_sd.asDiagonal() * covariance * inv_sd.asDiagonal();
  r.diagonal().setOnes();
  return r;
}

}  // namespace blr::inference
