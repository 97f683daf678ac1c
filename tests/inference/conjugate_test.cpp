// Conjugate Bayes as one BLR step with ρ = 1: oracles of research/peers.md §4(a) A1 and §4(b).
#include "blr/inference/conjugate.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>
#include <numbers>

#include "blr/core/rng.hpp"
#include "blr/inference/gaussian_natural.hpp"

namespace blr::inference {
namespace {

constexpr double kConjugateRel = 1e-9;

TEST(Conjugate, BetaBernoulliOracle) {
  const BetaBernoulli model{2.0, 2.0};
  const std::vector<int> data{1, 1, 0, 1, 1, 0, 1, 1, 0, 1};  // 7 of 10
  // Any starting point: ρ = 1 forgets it.
  const Vector post = conjugate_posterior(model, data, (Vector(2) << 17.0, -0.3).finished());
  EXPECT_DOUBLE_EQ(BetaBernoulli::a(post), 9.0);
  EXPECT_DOUBLE_EQ(BetaBernoulli::b(post), 5.0);
  EXPECT_NEAR(BetaBernoulli::mean(post), 0.642857142857, 1e-12);
  EXPECT_NEAR(BetaBernoulli::variance(post), 0.015306122449, 1e-12);
  EXPECT_NEAR(BetaBernoulli::mode(post), 2.0 / 3.0, 1e-15);
  const double log_seq = conjugate_log_evidence(model, data, post);
  EXPECT_NEAR(log_seq, -6.977747650802, kConjugateRel * 7);
  const double log_binom = log_seq + std::lgamma(11) - std::lgamma(8) - std::lgamma(4);
  EXPECT_NEAR(log_binom, -2.190255908020, kConjugateRel * 3);
  EXPECT_EQ(conjugate_sequential(model, data), post);
}

TEST(Conjugate, GammaPoissonOracle) {
  const GammaPoisson model{2.0, 1.0};
  const std::vector<double> data{2, 1, 0, 3, 4};
  const Vector post = conjugate_posterior(model, data, model.prior_natural());
  EXPECT_DOUBLE_EQ(GammaPoisson::a(post), 12.0);
  EXPECT_DOUBLE_EQ(GammaPoisson::b(post), 6.0);
  EXPECT_DOUBLE_EQ(GammaPoisson::mean(post), 2.0);
  EXPECT_NEAR(GammaPoisson::variance(post), 1.0 / 3.0, 1e-15);
  EXPECT_NEAR(conjugate_log_evidence(model, data, post), -9.661766264999, kConjugateRel * 10);
  EXPECT_NEAR(std::exp(GammaPoisson::predictive_log_pmf(post, 0)), 0.157267333911, 1e-12);
  EXPECT_TRUE(conjugate_sequential(model, data).isApprox(post, 1e-15));
}

TEST(Conjugate, NormalGammaOracle) {
  const NormalGamma model{0.0, 1.0, 1.0, 1.0};
  const std::vector<double> data{1.2, 0.8, 2.1, 1.5, 0.4};
  const Vector post = conjugate_posterior(model, data, model.prior_natural());
  const auto p = NormalGamma::params(post);
  EXPECT_NEAR(p.mu, 1.0, 1e-14);
  EXPECT_NEAR(p.kappa, 6.0, 1e-14);
  EXPECT_NEAR(p.alpha, 3.5, 1e-14);
  EXPECT_NEAR(p.beta, 2.45, 1e-14);
  EXPECT_NEAR(p.alpha / p.beta, 1.428571428571, 1e-12);
  EXPECT_NEAR(p.beta / ((p.alpha - 1) * p.kappa), 0.163333333333, 1e-12);
  EXPECT_NEAR(conjugate_log_evidence(model, data, post), -7.425906884239, kConjugateRel * 8);
  EXPECT_TRUE(conjugate_sequential(model, data).isApprox(post, 1e-14));
}

TEST(Conjugate, DirichletCategoricalMatchesClosedForm) {
  const DirichletCategorical model{(Vector(3) << 1.0, 2.0, 0.5).finished()};
  const std::vector<int> data{0, 2, 2, 1, 0, 2, 2};
  const Vector post = conjugate_posterior(model, data, Vector::Zero(3));
  const Vector alpha = DirichletCategorical::alpha(post);
  EXPECT_EQ(alpha, (Vector(3) << 3.0, 3.0, 4.5).finished());
  // log p(sequence) = ln B(α_N) − ln B(α₀), B the multivariate Beta function.
  auto log_b = [](const Vector& a) {
    double s = 0;
    for (Index k = 0; k < a.size(); ++k) s += std::lgamma(a[k]);
    return s - std::lgamma(a.sum());
  };
  EXPECT_NEAR(conjugate_log_evidence(model, data, post), log_b(alpha) - log_b(model.alpha0), 1e-12);
  EXPECT_NEAR(DirichletCategorical::mean(post)[2], 4.5 / 10.5, 1e-15);
  EXPECT_TRUE(conjugate_sequential(model, data).isApprox(post, 1e-15));
}

// §4(a) A1: x = 0..4, y = (1.0, 2.9, 5.2, 6.8, 9.1), φ = (1, x), α = 1, β = 4.
struct A1 {
  Matrix phi{5, 2};
  Vector y{5};
  A1() {
    for (int i = 0; i < 5; ++i) phi.row(i) << 1.0, i;
    y << 1.0, 2.9, 5.2, 6.8, 9.1;
  }
};

TEST(Conjugate, BayesianLinearRegressionA1) {
  const A1 a1;
  const BayesianLinearRegression model{1.0, 4.0};
  const Vector post = model.posterior(a1.phi, a1.y);
  const Matrix s = full_precision(post, 2);
  EXPECT_NEAR(s(0, 0), 21.0, 1e-12);
  EXPECT_NEAR(s(0, 1), 40.0, 1e-12);
  EXPECT_NEAR(s(1, 1), 121.0, 1e-12);
  const GaussianFull q = GaussianFull::from_natural(post);
  const Matrix cov = q.covariance();
  EXPECT_NEAR(cov(0, 0), 0.12858661, 1e-8);
  EXPECT_NEAR(cov(0, 1), -0.04250797, 1e-8);
  EXPECT_NEAR(cov(1, 1), 0.02231668, 1e-8);
  EXPECT_NEAR(q.mean[0], 0.9394261424, 1e-10);
  EXPECT_NEAR(q.mean[1], 2.0068012752, 1e-10);
  EXPECT_NEAR(model.log_evidence(a1.phi, a1.y, post), -7.227582424408, kConjugateRel * 8);
  const auto pred = linear_predictive(post, (Matrix(1, 2) << 1.0, 5.0).finished(), 4.0);
  EXPECT_NEAR(pred.mean[0], 10.973432519, 1e-9);
  EXPECT_NEAR(pred.variance[0], 0.511424017, 1e-9);
  // Online updating, one observation at a time, equals the batch posterior.
  EXPECT_TRUE(model.posterior_sequential(a1.phi, a1.y).isApprox(post, 1e-13));
}

TEST(Conjugate, LinearRegressionEvidenceEqualsDirectGaussianMarginal) {
  // log N(y | 0, β⁻¹I + α⁻¹ΦΦᵀ) on random data, independent of the natural-parameter algebra.
  Rng rng(3);
  const Index n = 30, d = 4;
  Matrix phi(n, d);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < d; ++j) phi(i, j) = rng.normal();
  Vector y(n);
  for (Index i = 0; i < n; ++i) y[i] = phi.row(i).sum() + 0.3 * rng.normal();
  const BayesianLinearRegression model{0.7, 5.0};
  const Matrix c = Matrix::Identity(n, n) / 5.0 + phi * phi.transpose() / 0.7;
  const Eigen::LLT<Matrix> llt(c);
  const Matrix l = llt.matrixL();
  const double direct = -0.5 * y.dot(llt.solve(y)) - l.diagonal().array().log().sum() -
                        0.5 * n * std::log(2 * std::numbers::pi);
  EXPECT_NEAR(model.log_evidence(phi, y, model.posterior(phi, y)), direct, 1e-9);
}

TEST(Conjugate, EvidenceMaximisationA1) {
  const A1 a1;
  const auto r = maximize_evidence(a1.phi, a1.y, {1.0, 4.0});
  ASSERT_TRUE(r.converged);
  EXPECT_NEAR(r.alpha, 0.3985399, 5e-8);
  EXPECT_NEAR(r.beta, 30.38488, 5e-5);
  EXPECT_NEAR(r.gamma, 1.9908953, 5e-8);
  EXPECT_NEAR(r.mean[0], 0.9775792, 5e-8);
  EXPECT_NEAR(r.mean[1], 2.0099282, 5e-8);
  EXPECT_NEAR(r.log_evidence, -4.854305078, 5e-10);
  // It is a stationary point of the evidence: nudging α or β lowers it.
  for (double f : {0.99, 1.01}) {
    const BayesianLinearRegression pa{r.alpha * f, r.beta}, pb{r.alpha, r.beta * f};
    EXPECT_LT(pa.log_evidence(a1.phi, a1.y, pa.posterior(a1.phi, a1.y)), r.log_evidence);
    EXPECT_LT(pb.log_evidence(a1.phi, a1.y, pb.posterior(a1.phi, a1.y)), r.log_evidence);
  }
}

// ---- Normal–Gamma linear regression (the noise precision unknown) ------------------------------
struct RandomRegression {
  Matrix phi;
  Vector y;
  RandomRegression(Index n, Index d, std::uint64_t seed) : phi(n, d), y(n) {
    Rng rng(seed);
    for (Index i = 0; i < n; ++i) {
      phi(i, 0) = 1.0;
      for (Index j = 1; j < d; ++j) phi(i, j) = rng.normal();
    }
    for (Index i = 0; i < n; ++i) y[i] = 3.0 + phi.row(i).tail(d - 1).sum() + 0.5 * rng.normal();
  }
};

TEST(Conjugate, NormalGammaRegressionIsTheClosedForm) {
  const RandomRegression r(25, 3, 11);
  const NormalGammaRegression model{(Vector(3) << 1e-3, 0.5, 2.0).finished(), 2.0, 3.0};
  const Vector post = model.posterior(r.phi, r.y);
  // Written plainly (Murphy, PML1 eq. 11.124 ff.): Λ_N = Λ₀ + ΦᵀΦ, m_N = Λ_N⁻¹Φᵀy,
  // a_N = a₀ + N/2, b_N = b₀ + ½(yᵀy − m_NᵀΛ_N m_N).
  const Matrix lambda = Matrix(model.prior_precision.asDiagonal()) + r.phi.transpose() * r.phi;
  const Vector m = lambda.ldlt().solve(r.phi.transpose() * r.y);
  const double a = 2.0 + 25 / 2.0, b = 3.0 + 0.5 * (r.y.squaredNorm() - m.dot(lambda * m));
  const auto p = NormalGammaRegression::params(post, 3);
  EXPECT_TRUE(p.precision.isApprox(lambda, 1e-13));
  EXPECT_TRUE(p.mean.isApprox(m, 1e-11));
  EXPECT_NEAR(p.shape, a, 1e-12);
  EXPECT_NEAR(p.rate, b, 1e-9 * b);
  // Online updating equals the batch posterior.
  EXPECT_TRUE(model.posterior_sequential(r.phi, r.y).isApprox(post, 1e-12));
  const auto f = fit_normal_gamma(model, r.phi, r.y);
  EXPECT_NEAR(f.noise_rate, b, 1e-9 * b);
  EXPECT_DOUBLE_EQ(f.dof, 2 * a);
  EXPECT_TRUE(f.scale.isApprox(b / a * lambda.inverse(), 1e-9));
  EXPECT_TRUE(f.covariance.isApprox(2 * a / (2 * a - 2) * f.scale, 1e-13));
}

TEST(Conjugate, NormalGammaEvidenceIsTheChainOfItsPredictives) {
  // log p(y) = Σ_i log p(y_i | y_<i), each a Student t predictive of the posterior so far (the
  // first from the prior): an oracle that shares no algebra with A(λ_N) − A(λ₀).
  const RandomRegression r(12, 3, 5);
  const NormalGammaRegression model{(Vector(3) << 0.1, 0.5, 2.0).finished(), 2.0, 3.0};
  double chain = 0;
  for (Index i = 0; i < r.phi.rows(); ++i) {
    const auto f = fit_normal_gamma(model, r.phi.topRows(i), r.y.head(i));
    chain += f.predict(r.phi.row(i), r.y.segment(i, 1), 0.95).log_density[0];
  }
  const auto f = fit_normal_gamma(model, r.phi, r.y);
  EXPECT_NEAR(f.log_evidence, chain, 1e-10 * std::abs(chain));
}

TEST(Conjugate, NormalGammaJeffreysEvidenceIsTheDirectIntegral) {
  // With p(τ) = 1/τ: p(y) = ∫ N(y | 0, τ⁻¹C) τ⁻¹ dτ, C = I + ΦΛ₀⁻¹Φᵀ,
  //                      = Γ(N/2) (π yᵀC⁻¹y)^{−N/2} |C|^{−½}.
  const RandomRegression r(20, 4, 8);
  const Vector p0 = (Vector(4) << 1e-2, 1.0, 0.3, 2.0).finished();
  const NormalGammaRegression model{p0, 0.0, 0.0};
  const Matrix c = Matrix::Identity(20, 20) +
                   r.phi * p0.cwiseInverse().asDiagonal() * r.phi.transpose();
  const Eigen::LLT<Matrix> llt(c);
  const double q = r.y.dot(llt.solve(r.y));
  const Matrix l = llt.matrixL();
  const double direct = std::lgamma(10.0) - 10.0 * std::log(std::numbers::pi * q) -
                        l.diagonal().array().log().sum();
  EXPECT_NEAR(fit_normal_gamma(model, r.phi, r.y).log_evidence, direct, 1e-10 * std::abs(direct));
}

TEST(Conjugate, NormalGammaFlatLimitIsOrdinaryLeastSquares) {
  // Λ₀ = δI → 0, Jeffreys' prior: m_N → the OLS estimate and sd_j → OLS's standard error times
  // √((N − p)/(N − 2)). Bound (Neumann series): ‖Λ_N⁻¹ − A⁻¹‖ ≤ ‖A⁻¹‖²δ/(1 − ‖A⁻¹‖δ), A = ΦᵀΦ,
  // and 2b_N − RSS ≤ δ‖w‖²(1 + ‖A⁻¹‖δ); the sd moves by half the relative sum, plus rounding
  // 100·cond(A)·ε on each side.
  const RandomRegression r(40, 4, 21);
  const double delta = 1e-8;
  const Index n = 40, p = 4;
  const Matrix a = r.phi.transpose() * r.phi;
  const Matrix a_inv = a.inverse();
  const Vector w = a.ldlt().solve(r.phi.transpose() * r.y);
  const double rss = (r.y - r.phi * w).squaredNorm();
  const Vector se = (rss / (n - p) * a_inv.diagonal()).cwiseSqrt();
  const Eigen::SelfAdjointEigenSolver<Matrix> eig(a);
  const double na = 1 / eig.eigenvalues().minCoeff();
  const double cond = eig.eigenvalues().maxCoeff() * na;
  const double eps = std::numeric_limits<double>::epsilon();
  const auto f = fit_normal_gamma({Vector::Constant(p, delta), 0.0, 0.0}, r.phi, r.y);
  EXPECT_DOUBLE_EQ(f.dof, static_cast<double>(n));
  const double rel_rss = delta * w.squaredNorm() * (1 + na * delta) / rss;
  for (Index j = 0; j < p; ++j) {
    const double rel_var = na * na * delta / (1 - na * delta) / a_inv(j, j);
    const double tol = 0.5 * (rel_var + rel_rss) + 100 * cond * eps;
    EXPECT_NEAR(f.sd()[j] / (se[j] * std::sqrt((n - p) / (n - 2.0))), 1.0, tol) << j;
    EXPECT_NEAR(f.mean[j], w[j], na * delta * w.norm() + 100 * cond * eps * w.cwiseAbs().maxCoeff());
  }
  // The Student-t intervals use ν = N.
  const auto ci = f.intervals(0.95);
  const double t = (ci[1].upper - f.mean[1]) / std::sqrt(f.scale(1, 1));
  EXPECT_NEAR(t, 2.021075390306273, 1e-9);  // t_{0.975, 40}
}

TEST(Conjugate, EvidenceMaximisationWithAnInterceptIsStationary) {
  const RandomRegression r(30, 3, 2);
  EvidenceOptions eo{1.0, 1.0};
  eo.intercept_precision = 1e-6;
  const auto res = maximize_evidence(r.phi, r.y, eo);
  ASSERT_TRUE(res.converged);
  // The intercept keeps its fixed precision; α and β are a stationary point of the evidence.
  const auto evidence = [&](double alpha, double beta) {
    const BayesianLinearRegression m{alpha, beta, 1e-6};
    return m.log_evidence(r.phi, r.y, m.posterior(r.phi, r.y));
  };
  EXPECT_NEAR(evidence(res.alpha, res.beta), res.log_evidence, 1e-10 * std::abs(res.log_evidence));
  for (double f : {0.99, 1.01}) {
    EXPECT_LT(evidence(res.alpha * f, res.beta), res.log_evidence);
    EXPECT_LT(evidence(res.alpha, res.beta * f), res.log_evidence);
  }
  EXPECT_NEAR(res.covariance.inverse()(0, 0), 1e-6 + res.beta * 30, 1e-6 * res.beta * 30);
}

TEST(Conjugate, NormalGammaBadSettingsAreErrors) {
  const RandomRegression r(5, 2, 1);
  EXPECT_THROW(fit_normal_gamma({Vector::Ones(2), 1.0, 0.0}, r.phi, r.y), Error);
  EXPECT_THROW(fit_normal_gamma({Vector::Zero(2), 0.0, 0.0}, r.phi, r.y), Error);
  // Jeffreys' prior with 2 rows: ν = 2, no finite variance.
  EXPECT_THROW(fit_normal_gamma({Vector::Ones(2), 0.0, 0.0}, r.phi.topRows(2), r.y.head(2)),
               Error);
}

TEST(Conjugate, BadOptionsAreErrors) {
  EXPECT_THROW(BetaBernoulli({0.0, 1.0}).prior_natural(), Error);
  EXPECT_THROW(BetaBernoulli({1.0, 1.0}).message(2), Error);
  EXPECT_THROW(GammaPoisson({1.0, 1.0}).message(1.5), Error);
  EXPECT_THROW(DirichletCategorical{Vector::Ones(3)}.message(3), Error);
  EXPECT_THROW(maximize_evidence(A1().phi, A1().y, {-1.0, 1.0}), Error);
}

}  // namespace
}  // namespace blr::inference
