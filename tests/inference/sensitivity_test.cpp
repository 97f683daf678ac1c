// GLM sensitivities (memory-perturbation equation) against exact leave-one-out refits written
// plainly here: linear regression with known noise (the corrected deviation, the leave-one-out
// variance and the LOO predictive are exact), logistic and Poisson regression on Pima (N = 200)
// with a plain Newton refit per example (the deviation must correlate ≥ 0.99 with the refitted
// change), CVI refits for CVI posteriors, and the refusals.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <functional>
#include <iostream>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/gaussian_natural.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/sensitivity.hpp"
#include "blr/io/csv.hpp"
#include "inference/pima.hpp"

namespace blr::inference {
namespace {

/// Pima's training file: design [1, standardised columns], and one column as the response.
struct PimaRegression {
  Matrix x;
  Vector glu, npreg;
};

PimaRegression pima_regression() {
  const auto t = io::CsvTable::read(std::string(BLR_DATA_DIR) + "/pima_train.csv");
  const std::vector<std::string> names = {"bp", "skin", "bmi", "ped", "age"};
  const auto st = io::Standardizer::fit(t.numeric_columns(names), names);
  PimaRegression p;
  p.x = io::with_intercept(st.transform(t.numeric_columns(names)));
  const Vector glu = t.numeric_column("glu");
  const double mu = glu.mean();
  const double sd = std::sqrt((glu.array() - mu).square().mean());
  p.glu = (glu.array() - mu) / sd;
  p.npreg = t.count_column("npreg");
  return p;
}

Matrix without_row(const Matrix& x, Index i) {
  Matrix out(x.rows() - 1, x.cols());
  out << x.topRows(i), x.bottomRows(x.rows() - i - 1);
  return out;
}

Vector without_entry(const Vector& y, Index i) {
  Vector out(y.size() - 1);
  out << y.head(i), y.tail(y.size() - i - 1);
  return out;
}

double correlation(const Vector& a, const Vector& b) {
  const Vector ca = a.array() - a.mean(), cb = b.array() - b.mean();
  return ca.dot(cb) / std::sqrt(ca.squaredNorm() * cb.squaredNorm());
}

/// A canonical link: the mean μ(a) and its slope μ'(a), the loss's curvature.
struct Link {
  std::function<double(double)> mean, slope;
};
const Link kLogit{[](double a) { return 1.0 / (1.0 + std::exp(-a)); },
                  [](double a) {
                    const double m = 1.0 / (1.0 + std::exp(-a));
                    return m * (1 - m);
                  }};
const Link kLog{[](double a) { return std::exp(a); }, [](double a) { return std::exp(a); }};

/// Plain Newton on −Σ log p(y_j | x_jᵀw) + ½δ|w|² for a canonical link (gradient Σ(μ − y)x,
/// Hessian Σ μ' x xᵀ + δI), from `w`, until max|∇| < 1e-12.
Vector plain_newton(const Matrix& x, const Vector& y, double delta, const Link& link, Vector w) {
  for (int it = 0; it < 100; ++it) {
    Vector g = delta * w;
    Matrix h = delta * Matrix::Identity(w.size(), w.size());
    for (Index j = 0; j < x.rows(); ++j) {
      const double a = x.row(j).dot(w);
      g += (link.mean(a) - y[j]) * x.row(j).transpose();
      h += link.slope(a) * x.row(j).transpose() * x.row(j);
    }
    if (g.cwiseAbs().maxCoeff() < 1e-12) return w;
    w -= h.ldlt().solve(g);
  }
  ADD_FAILURE() << "plain Newton did not converge";
  return w;
}

/// Exact leave-one-out changes η_i^{\i} − η_i by refitting without each example.
struct Refits {
  Vector change;
  double correlation = 0, correlation_first_order = 0;
  double sq_error = 0, sq_error_first_order = 0;
};

Refits compare(const Sensitivity& s, const std::function<Vector(Index)>& refit_mean,
               const Matrix& x, const char* what) {
  const Index n = x.rows();
  Refits r;
  r.change.resize(n);
  for (Index i = 0; i < n; ++i) r.change[i] = x.row(i).dot(refit_mean(i)) - s.latent_mean[i];
  r.correlation = correlation(s.deviation, r.change);
  r.correlation_first_order = correlation(s.deviation_first_order, r.change);
  r.sq_error = (s.deviation - r.change).squaredNorm();
  r.sq_error_first_order = (s.deviation_first_order - r.change).squaredNorm();
  std::cout << what << ": correlation with the refitted change " << r.correlation
            << " (first order " << r.correlation_first_order << "); max |error| "
            << (s.deviation - r.change).cwiseAbs().maxCoeff() << " (first order "
            << (s.deviation_first_order - r.change).cwiseAbs().maxCoeff() << ")\n";
  return r;
}

TEST(Sensitivity, LinearRegressionIsExactLeaveOneOut) {
  const auto p = pima_regression();
  const double delta = 1.0, beta = 2.0;  // known noise precision, not 1, so that β is exercised
  const Index n = p.x.rows(), d = p.x.cols();
  const BayesianLinearRegression conj{delta, beta};
  const GaussianFull q = GaussianFull::from_natural(conj.posterior(p.x, p.glu));
  const Matrix covariance = q.covariance();
  Glm model = Glm::with_isotropic_prior(p.x, p.glu, Likelihood::gaussian, delta);
  model.noise_precision = beta;
  const Sensitivity s = glm_sensitivity(model, q.mean, covariance);
  // Refit without example i, written plainly: S = δI + βXᵀX, m = S⁻¹βXᵀy.
  double max_dev = 0, max_var = 0, loo_nll = 0;
  for (Index i = 0; i < n; ++i) {
    const Matrix x = without_row(p.x, i);
    const Vector y = without_entry(p.glu, i);
    const Matrix sp = delta * Matrix::Identity(d, d) + beta * x.transpose() * x;
    const Eigen::LLT<Matrix> llt(sp);
    const Vector m = llt.solve(beta * x.transpose() * y);
    const Vector xi = p.x.row(i).transpose();
    const double eta = xi.dot(m), v = xi.dot(llt.solve(xi));
    max_dev = std::max(max_dev, std::abs(s.deviation[i] - (eta - s.latent_mean[i])));
    max_var = std::max(max_var, std::abs(s.loo_variance[i] - v));
    const double tv = v + 1 / beta, r = p.glu[i] - eta;
    loo_nll += 0.5 * (std::log(2 * std::numbers::pi * tv) + r * r / tv) / n;
    // e_i = β(η_i − y_i), h_i = β, first order v_i e_i.
    EXPECT_NEAR(s.error[i], beta * (s.latent_mean[i] - p.glu[i]), 1e-12);
    EXPECT_EQ(s.curvature[i], beta);
    EXPECT_NEAR(s.deviation_first_order[i], s.variance[i] * s.error[i], 1e-15);
  }
  // The bound; the round-off of these solves (κ(S) < 1e3 on standardised columns) is
  // about 1e-13.
  EXPECT_LE(max_dev, 1e-8);
  EXPECT_LE(max_var, 1e-8);
  std::cout << "linear regression: max |deviation − exact| " << max_dev
            << ", max |v^{\\i} − exact| " << max_var << "\n";
  const TestMetrics loo = loo_estimate(model, s);
  EXPECT_NEAR(loo.nll, loo_nll, 1e-8);
  // The first-order form is not exact: it misses the factor 1/(1 − βv_i), by far more than the
  // bound above.
  EXPECT_GT((s.deviation_first_order - s.deviation).cwiseAbs().maxCoeff(), 1e-6);
}

TEST(Sensitivity, LinearRegressionSameFromLaplaceAndCvi) {
  // Laplace and CVI are exact for a Gaussian likelihood, and the expected sites equal the point
  // ones, so all three posteriors give the same sensitivities (to the solvers' tolerances).
  const auto p = pima_regression();
  Glm model = Glm::with_isotropic_prior(p.x, p.glu, Likelihood::gaussian, 1.0);
  model.noise_precision = 2.0;
  const BayesianLinearRegression conj{1.0, 2.0};
  const GaussianFull q = GaussianFull::from_natural(conj.posterior(p.x, p.glu));
  const Sensitivity exact = glm_sensitivity(model, q.mean, q.covariance());
  const LaplaceResult lap = laplace(model);
  const Sensitivity from_laplace = glm_sensitivity(model, lap.mean, lap.covariance);
  const CviResult cv = cvi(model);
  ASSERT_TRUE(cv.converged);
  const Sensitivity from_cvi =
      glm_sensitivity(model, cv.mean, cv.covariance, {SiteEvaluation::expected, 32});
  EXPECT_LE((from_laplace.deviation - exact.deviation).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LE((from_cvi.deviation - exact.deviation).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LE((from_cvi.score - exact.score).cwiseAbs().maxCoeff(), 1e-8);
}

TEST(Sensitivity, LogisticPimaAgainstNewtonRefits) {
  const auto pima = testing::load_pima();
  const double delta = 1.0;
  const Glm model =
      Glm::with_isotropic_prior(pima.x_train, pima.y_train, Likelihood::logistic, delta);
  const LaplaceResult lap = laplace(model);
  ASSERT_TRUE(lap.converged);
  const Sensitivity s = glm_sensitivity(model, lap.mean, lap.covariance);
  for (Index i = 0; i < s.error.size(); ++i) {
    const double prob = 1 / (1 + std::exp(-s.latent_mean[i]));
    EXPECT_NEAR(s.error[i], prob - pima.y_train[i], 1e-14);
    EXPECT_NEAR(s.score[i], prob * (1 - prob) * std::abs(s.deviation[i]), 1e-15);
  }
  std::vector<Vector> means(s.error.size());
  const Refits r = compare(
      s,
      [&](Index i) {
        means[i] = plain_newton(without_row(pima.x_train, i), without_entry(pima.y_train, i),
                                delta, kLogit, lap.mean);
        return means[i];
      },
      pima.x_train, "logistic (Laplace, Pima N = 200)");
  EXPECT_GE(r.correlation, 0.99);  // the goal
  EXPECT_LT(r.sq_error, r.sq_error_first_order);
  // The leave-one-out predictive from the refits (Laplace at each refitted mode, Gauss–Hermite as
  // in loo_estimate) against the estimate without refitting.
  Vector loo_mean(s.error.size()), loo_var(s.error.size());
  for (Index i = 0; i < s.error.size(); ++i) {
    const Glm sub = Glm::with_isotropic_prior(without_row(pima.x_train, i),
                                              without_entry(pima.y_train, i),
                                              Likelihood::logistic, delta);
    const Vector xi = pima.x_train.row(i).transpose();
    loo_mean[i] = xi.dot(means[i]);
    loo_var[i] = xi.dot(sub.hessian(means[i]).ldlt().solve(xi));
  }
  const TestMetrics exact =
      test_metrics(Likelihood::logistic,
                   predict_latent(Likelihood::logistic, loo_mean, loo_var, pima.y_train),
                   pima.y_train);
  const TestMetrics est = loo_estimate(model, s);
  std::cout << "logistic LOO: estimate NLL " << est.nll << ", accuracy " << est.accuracy
            << "; refits NLL " << exact.nll << ", accuracy " << exact.accuracy << "\n";
  // Each misclassified LOO prediction changes the accuracy by 1/N; the estimate must not differ
  // from the refits by more than the examples whose refitted and estimated probabilities fall on
  // different sides of ½.
  Index flips = 0;
  for (Index i = 0; i < s.error.size(); ++i)
    flips += ((loo_mean[i] > 0) != (s.latent_mean[i] + s.deviation[i] > 0));
  EXPECT_LE(std::abs(est.accuracy - exact.accuracy), static_cast<double>(flips) / 200 + 1e-12);
  // The estimate must be nearer the refits' LOO NLL than the in-sample NLL is (which leaves each
  // example in the fit and so is optimistic).
  const TestMetrics in_sample = test_metrics(
      Likelihood::logistic,
      predict(Likelihood::logistic, lap.mean, lap.covariance, pima.x_train, pima.y_train),
      pima.y_train);
  std::cout << "logistic in-sample NLL " << in_sample.nll << "\n";
  EXPECT_LT(std::abs(est.nll - exact.nll), std::abs(in_sample.nll - exact.nll));
}

TEST(Sensitivity, PoissonPimaAgainstNewtonRefits) {
  const auto p = pima_regression();
  const double delta = 1.0;
  const Glm model = Glm::with_isotropic_prior(p.x, p.npreg, Likelihood::poisson, delta);
  const LaplaceResult lap = laplace(model);
  ASSERT_TRUE(lap.converged);
  const Sensitivity s = glm_sensitivity(model, lap.mean, lap.covariance);
  const Refits r = compare(
      s,
      [&](Index i) {
        return plain_newton(without_row(p.x, i), without_entry(p.npreg, i), delta, kLog,
                            lap.mean);
      },
      p.x, "Poisson (Laplace, Pima npreg, N = 200)");
  EXPECT_GE(r.correlation, 0.99);
  EXPECT_LT(r.sq_error, r.sq_error_first_order);
}

TEST(Sensitivity, LogisticCviAgainstCviRefits) {
  const auto pima = testing::load_pima();
  const Glm model =
      Glm::with_isotropic_prior(pima.x_train, pima.y_train, Likelihood::logistic, 1.0);
  const CviResult fit = cvi(model);
  ASSERT_TRUE(fit.converged);
  const Sensitivity s =
      glm_sensitivity(model, fit.mean, fit.covariance, {SiteEvaluation::expected, 32});
  const Refits r = compare(
      s,
      [&](Index i) {
        const Glm sub = Glm::with_isotropic_prior(without_row(pima.x_train, i),
                                                  without_entry(pima.y_train, i),
                                                  Likelihood::logistic, 1.0);
        const CviResult f = cvi(sub, {}, &fit.natural);
        EXPECT_TRUE(f.converged);
        return f.mean;
      },
      pima.x_train, "logistic (CVI, Pima N = 200)");
  EXPECT_GE(r.correlation, 0.99);
  EXPECT_LT(r.sq_error, r.sq_error_first_order);
}

TEST(Sensitivity, RefusesMismatchesAndPosteriorsWithoutTheSite) {
  const auto pima = testing::load_pima();
  const Glm model =
      Glm::with_isotropic_prior(pima.x_train, pima.y_train, Likelihood::logistic, 1.0);
  const Index d = model.dimension();
  EXPECT_THROW(glm_sensitivity(model, Vector::Zero(d + 1), Matrix::Identity(d, d)), Error);
  EXPECT_THROW(glm_sensitivity(model, Vector::Zero(d), Matrix::Identity(d + 1, d + 1)), Error);
  Matrix nan_cov = Matrix::Identity(d, d);
  nan_cov(0, 0) = std::nan("");
  EXPECT_THROW(glm_sensitivity(model, Vector::Zero(d), nan_cov), Error);
  // A covariance far wider than any posterior of these data: h·v ≥ 1, no site to remove.
  try {
    glm_sensitivity(model, Vector::Zero(d), 1e6 * Matrix::Identity(d, d));
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not contain its site"), std::string::npos);
  }
  EXPECT_THROW(glm_sensitivity(model, Vector::Zero(d), Matrix::Identity(d, d),
                               {SiteEvaluation::expected, 0}),
               Error);
}

}  // namespace
}  // namespace blr::inference
