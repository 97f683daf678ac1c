// WAIC (inference/waic.hpp) against its definition computed by brute force: S posterior draws of
// the parameters, lppd_i = log mean_s p(y_i | θ_s) and p_waic,i = var_s log p(y_i | θ_s)
// (Gelman, Hwang & Vehtari 2014, eqs. 5 and 11–13, as ArviZ computes them). The tolerance is
// derived from the draws: 5 × the Monte Carlo standard error of each sum, bounded by the sum of
// the pointwise standard errors (sd of p / (√S · mean p) for lppd_i by the delta method,
// √((m₄ − v²)/S) for a variance). Quadrature error (32 Gauss–Hermite nodes on smooth integrands)
// is far below it. The point-mass limit: no spread, so p_waic = 0 and lppd = the log-likelihood
// at the mean, up to the rounding of the quadrature weights' sum.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <functional>
#include <numbers>
#include <string>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/family/special.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/fit_statistics.hpp"
#include "blr/inference/waic.hpp"

namespace blr::inference::waic_testing {
namespace {

constexpr int kDraws = 100000;

struct Brute {
  double lppd = 0, p_waic = 0, lppd_se = 0, p_se = 0;
};

/// The definition over draws: `log_p(s, i)` is log p(y_i | θ_s).
Brute brute_force(Index n, const std::function<Vector(Rng&)>& draw_log_p) {
  Rng rng(20261129);
  Matrix lp(kDraws, n);
  for (int s = 0; s < kDraws; ++s) lp.row(s) = draw_log_p(rng).transpose();
  Brute b;
  for (Index i = 0; i < n; ++i) {
    const Vector c = lp.col(i);
    const double top = c.maxCoeff();
    const Eigen::ArrayXd p = (c.array() - top).exp();
    const double mp = p.mean(), sp = std::sqrt((p - mp).square().mean());
    b.lppd += top + std::log(mp);
    b.lppd_se += sp / (std::sqrt(double(kDraws)) * mp);
    const double m = c.mean();
    const Eigen::ArrayXd d = c.array() - m;
    const double v = d.square().mean(), m4 = d.square().square().mean();
    b.p_waic += v;
    b.p_se += std::sqrt(std::max(0.0, m4 - v * v) / kDraws);
  }
  return b;
}

void expect_matches(const Waic& w, const Brute& b) {
  EXPECT_NEAR(w.lppd, b.lppd, 5 * b.lppd_se) << "MC se " << b.lppd_se;
  EXPECT_NEAR(w.p_waic, b.p_waic, 5 * b.p_se) << "MC se " << b.p_se;
  EXPECT_DOUBLE_EQ(w.waic, -2 * (w.lppd - w.p_waic));
  EXPECT_NEAR(w.pointwise_lppd.sum(), w.lppd, 1e-12 * std::abs(w.lppd));
  EXPECT_NEAR(w.pointwise_p_waic.sum(), w.p_waic, 1e-12 * w.p_waic);
}

struct Problem {
  Matrix x;
  Vector y, mean;
  Matrix covariance;
};

/// n rows of an intercept and two standard-normal features; a posterior around `truth` with a
/// covariance of the size a fit on 40 rows has.
Problem problem(Likelihood l, Index n) {
  Rng rng(7);
  Problem p;
  p.x = Matrix::Ones(n, 3);
  for (Index i = 0; i < n; ++i) p.x.row(i).tail(2) = rng.normal_vector(2).transpose();
  const Vector truth = (Vector(3) << 0.3, 0.8, -0.5).finished();
  p.y.resize(n);
  for (Index i = 0; i < n; ++i) {
    const double a = p.x.row(i).dot(truth);
    if (l == Likelihood::logistic) p.y[i] = rng.uniform() < sigmoid(a) ? 1 : 0;
    if (l == Likelihood::poisson) {
      // Inversion of the Poisson CDF.
      double u = rng.uniform(), pk = std::exp(-std::exp(a)), k = 0, cdf = pk;
      while (u > cdf && k < 100) pk *= std::exp(a) / ++k, cdf += pk;
      p.y[i] = k;
    }
    if (l == Likelihood::gaussian) p.y[i] = a + 0.7 * rng.normal();
  }
  p.mean = truth + 0.1 * rng.normal_vector(3);
  const Matrix r = Matrix::Random(3, 3);
  p.covariance = (r * r.transpose() + Matrix::Identity(3, 3)) / 40.0;
  return p;
}

Vector log_p(Likelihood l, const Vector& y, const Vector& a, double beta) {
  Vector out(y.size());
  for (Index i = 0; i < y.size(); ++i) {
    if (l == Likelihood::logistic) out[i] = y[i] * a[i] - log1p_exp(a[i]);
    if (l == Likelihood::poisson) out[i] = y[i] * a[i] - std::exp(a[i]) - std::lgamma(y[i] + 1);
    if (l == Likelihood::gaussian)
      out[i] = 0.5 * std::log(beta / (2 * std::numbers::pi)) -
               0.5 * beta * (y[i] - a[i]) * (y[i] - a[i]);
  }
  return out;
}

TEST(Waic, GaussianPosteriorEqualsItsDefinitionForEveryLikelihood) {
  for (Likelihood l : {Likelihood::logistic, Likelihood::poisson, Likelihood::gaussian}) {
    SCOPED_TRACE(to_string(l));
    const Problem p = problem(l, 40);
    const double beta = 2.0;
    const Matrix chol = Eigen::LLT<Matrix>(p.covariance).matrixL();
    const Brute b = brute_force(p.y.size(), [&](Rng& rng) {
      const Vector w = p.mean + chol * rng.normal_vector(3);
      return log_p(l, p.y, p.x * w, beta);
    });
    expect_matches(waic_gaussian_posterior(l, p.x, p.y, p.mean, p.covariance, beta), b);
  }
}

TEST(Waic, MixtureLatentsEqualTheirDefinition) {
  for (Likelihood l : {Likelihood::logistic, Likelihood::gaussian}) {
    SCOPED_TRACE(to_string(l));
    const Problem p = problem(l, 30);
    const Index n = p.y.size();
    const Vector weights = (Vector(2) << 0.3, 0.7).finished();
    Matrix m(n, 2), v(n, 2);
    m.col(0) = p.x * p.mean;
    m.col(1) = p.x * (p.mean + Vector::Constant(3, 0.4));
    v.col(0) = Vector::Constant(n, 0.05);
    v.col(1) = Vector::Constant(n, 0.2);
    const Brute b = brute_force(n, [&](Rng& rng) {
      const int c = rng.uniform() < weights[0] ? 0 : 1;
      Vector a(n);
      for (Index i = 0; i < n; ++i) a[i] = m(i, c) + std::sqrt(v(i, c)) * rng.normal();
      // One component per draw, shared by every row: the mixture is over θ, as a mixture
      // posterior's is.
      return log_p(l, p.y, a, 1.5);
    });
    expect_matches(waic_latent(l, p.y, weights, m, v, 1.5), b);
  }
}

TEST(Waic, NormalGammaPosteriorEqualsItsDefinition) {
  const Problem p = problem(Likelihood::gaussian, 40);
  NormalGammaRegression model;
  model.prior_precision = Vector::Constant(3, 0.5);
  model.validate();
  const NormalGammaFit f = fit_normal_gamma(model, p.x, p.y);
  const Matrix lambda_inverse = (f.noise_shape / f.noise_rate) * f.scale;
  const Matrix chol = Eigen::LLT<Matrix>(lambda_inverse).matrixL();
  const Brute b = brute_force(p.y.size(), [&](Rng& rng) {
    const double tau = std::exp(log_gamma_sample(rng, f.noise_shape)) / f.noise_rate;
    const Vector w = f.mean + chol * rng.normal_vector(3) / std::sqrt(tau);
    return log_p(Likelihood::gaussian, p.y, p.x * w, tau);
  });
  const Waic w = waic_normal_gamma(p.x, p.y, f.mean, f.scale, f.noise_shape, f.noise_rate);
  expect_matches(w, b);
  // lppd_i is the exact Student-t predictive density.
  const auto predictive = f.predict(p.x, p.y, 0.95);
  EXPECT_NEAR(w.lppd, predictive.log_density.sum(), 1e-10 * std::abs(w.lppd));
}

TEST(Waic, PointMassGivesTheLogLikelihoodAndNoPenalty) {
  for (Likelihood l : {Likelihood::logistic, Likelihood::poisson}) {
    const Problem p = problem(l, 25);
    const Waic w = waic_gaussian_posterior(l, p.x, p.y, p.mean, Matrix::Zero(3, 3));
    // Every node sits at the mean; the quadrature's weights sum to 1 within ~1e-15, so each row's
    // variance is (|f|·1e-15)² with |f| < 10: below 1e-24 over 25 rows.
    EXPECT_LT(w.p_waic, 1e-24);
    const double ll = fit_statistics(l, p.x, p.y, p.mean).log_likelihood;
    EXPECT_NEAR(w.lppd, ll, 1e-12 * std::abs(ll));
  }
}

TEST(Waic, RefusesMismatchedShapes) {
  try {
    waic_latent(Likelihood::logistic, Vector::Zero(3), Vector::Ones(1), Matrix::Zero(2, 1),
                Matrix::Zero(2, 1));
    FAIL() << "accepted 3 responses with 2 rows of latents";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("one row of latent moments per response"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace blr::inference::waic_testing
