// WAIC of GLM posteriors (waic.hpp).
#include "blr/inference/waic.hpp"

#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <boost/math/special_functions/trigamma.hpp>
#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/family/special.hpp"
#include "blr/inference/quadrature.hpp"

namespace blr::inference {
namespace {

/// log p(y | a) of a Bernoulli (logit link) or Poisson (log link) response.
double log_density(Likelihood l, double y, double a) {
  if (l == Likelihood::logistic) return y * a - log1p_exp(a);
  return y * a - std::exp(a) - std::lgamma(y + 1.0);
}

Waic finish(Vector lppd, Vector p) {
  Waic w;
  w.lppd = lppd.sum();
  w.p_waic = p.sum();
  w.waic = -2 * (w.lppd - w.p_waic);
  w.pointwise_lppd = std::move(lppd);
  w.pointwise_p_waic = std::move(p);
  return w;
}

void check_shapes(const Vector& y, const Vector& weights, const Matrix& mean,
                  const Matrix& variance) {
  check(mean.rows() == y.size() && variance.rows() == y.size() && mean.cols() == weights.size() &&
            variance.cols() == weights.size() && weights.size() >= 1,
        fmt::format(
            "WAIC needs one row of latent moments per response and one column per "
            "mixture weight; got {} responses, {}×{} means, {}×{} variances and {} weights.",
            y.size(), mean.rows(), mean.cols(), variance.rows(), variance.cols(), weights.size()));
}

}  // namespace

Waic waic_latent(Likelihood likelihood, const Vector& y, const Vector& weights,
                 const Matrix& latent_mean, const Matrix& latent_variance, double noise_precision,
                 int nodes) {
  check_shapes(y, weights, latent_mean, latent_variance);
  const GaussHermite gh(nodes);
  const Index n = y.size(), k = weights.size(), q = gh.size();
  Vector lppd(n), p(n);
  // Per row: the values f = log p(y | a) at the nodes of every component, with mass w_c ω_j.
  Vector mass(k * q), f(k * q);
  for (Index c = 0; c < k; ++c) mass.segment(c * q, q) = weights[c] * gh.weights();
  const Vector log_mass = mass.array().log();
  const Eigen::ArrayXd z = gh.nodes().array();
  const double gaussian_constant = 0.5 * std::log(noise_precision / (2 * std::numbers::pi));
  Eigen::ArrayXd density(k * q);  // p(y | a) at the nodes (logistic), from the same exponential
  for (Index i = 0; i < n; ++i) {
    for (Index c = 0; c < k; ++c) {
      const double m = latent_mean(i, c), s = std::sqrt(std::max(0.0, latent_variance(i, c)));
      const Eigen::ArrayXd a = m + s * z;
      auto fc = f.segment(c * q, q).array();
      if (likelihood == Likelihood::gaussian) {
        fc = gaussian_constant - 0.5 * noise_precision * (y[i] - a).square();
      } else if (likelihood == Likelihood::logistic) {
        // e = e^{−|a|}: log(1 + eᵃ) = max(a, 0) + log1p(e), σ(a) = 1/(1 + e) or e/(1 + e).
        const Eigen::ArrayXd e = (-a.abs()).exp();
        fc = y[i] * a - (a.max(0.0) + e.log1p());
        const Eigen::ArrayXd big = 1.0 / (1.0 + e), small = e / (1.0 + e);  // σ(|a|), σ(−|a|)
        const bool one = y[i] == 1.0;  // p = σ(a) for y = 1, σ(−a) for y = 0
        density.segment(c * q, q) = (a >= 0).select(one ? big : small, one ? small : big);
      } else {
        for (Index j = 0; j < q; ++j) fc[j] = log_density(likelihood, y[i], a[j]);
      }
    }
    const double mean = mass.dot(f);
    p[i] = mass.dot((f.array() - mean).square().matrix());
    if (likelihood == Likelihood::gaussian) {
      // log Σ_c w_c N(y; m_c, v_c + 1/β), exactly.
      Vector terms(k);
      for (Index c = 0; c < k; ++c) {
        const double v = std::max(0.0, latent_variance(i, c)) + 1.0 / noise_precision;
        const double e = y[i] - latent_mean(i, c);
        terms[c] =
            std::log(weights[c]) - 0.5 * std::log(2 * std::numbers::pi * v) - 0.5 * e * e / v;
      }
      lppd[i] = log_sum_exp(terms);
    } else {
      // Σ mass·p directly where it cannot underflow (logistic), else in log space.
      const double total =
          likelihood == Likelihood::logistic ? (mass.array() * density).sum() : 0.0;
      lppd[i] = total > 1e-280 ? std::log(total) : log_sum_exp(Vector(f + log_mass));
    }
  }
  return finish(std::move(lppd), std::move(p));
}

Waic waic_gaussian_posterior(Likelihood likelihood, const Matrix& x, const Vector& y,
                             const Vector& mean, const Matrix& covariance, double noise_precision,
                             int nodes) {
  check(
      x.cols() == mean.size() && covariance.rows() == mean.size() &&
          covariance.cols() == mean.size(),
      "WAIC needs one coefficient per column of the design and a square covariance of that size.");
  const Matrix latent_mean = x * mean;
  const Matrix latent_variance = row_quadratic_forms(x, covariance);
  return waic_latent(likelihood, y, Vector::Ones(1), latent_mean, latent_variance, noise_precision,
                     nodes);
}

Waic waic_normal_gamma(const Matrix& x, const Vector& y, const Vector& mean, const Matrix& scale,
                       double noise_shape, double noise_rate) {
  check(x.cols() == mean.size() && scale.rows() == mean.size() && y.size() == x.rows(),
        "WAIC needs one coefficient per column of the design and one response per row.");
  check(noise_shape > 0 && noise_rate > 0,
        "The Normal–Gamma posterior's shape and rate must be positive.");
  const double a = noise_shape, b = noise_rate, nu = 2 * a;
  // v_i = x_iᵀΛ⁻¹x_i with Λ⁻¹ = (a/b) S.
  const Vector v = (a / b) * row_quadratic_forms(x, scale);
  const double var_log_tau = boost::math::trigamma(a);
  const double c =
      std::lgamma((nu + 1) / 2) - std::lgamma(nu / 2) - 0.5 * std::log(nu * std::numbers::pi);
  const Index n = y.size();
  Vector lppd(n), p(n);
  for (Index i = 0; i < n; ++i) {
    const double e = y[i] - x.row(i).dot(mean);
    const double s2 = (b / a) * (1 + v[i]);  // the Student t predictive's squared scale
    lppd[i] = c - 0.5 * std::log(s2) - 0.5 * (nu + 1) * std::log1p(e * e / (s2 * nu));
    const double e2 = e * e;
    p[i] = 0.5 * v[i] * v[i] + (a / b) * e2 * v[i] + 0.25 * var_log_tau +
           0.25 * e2 * e2 * a / (b * b) - 0.5 * e2 / b;
  }
  return finish(std::move(lppd), std::move(p));
}

}  // namespace blr::inference
