// Checks specific to single families and to the special functions: reparameterised Gaussian
// sampling with fixed noise, the minimal layout of the full Gaussian, the Concrete relaxation of
// the Bernoulli (eqs. 50–51), closed forms against textbook values, and the special functions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "blr/core/rng.hpp"
#include "blr/family/families.hpp"
#include "stats.hpp"

namespace blr {
namespace {

using testing::RunningStats;

TEST(GaussianFamilies, SampleFromNoiseIsTheReparameterisation) {
  Rng rng(41);
  const Index d = 4;
  Matrix a(d, d);
  for (Index i = 0; i < d * d; ++i) a.data()[i] = rng.normal();
  const GaussianFull full(rng.normal_vector(d), Matrix(a * a.transpose() + Matrix::Identity(d, d)));
  // θ − m = L⁻ᵀε is linear in ε; its matrix J must satisfy JJᵀ = S⁻¹.
  Matrix j(d, d);
  for (Index i = 0; i < d; ++i) j.col(i) = full.sample_from_noise(Vector::Unit(d, i)) - full.mean;
  EXPECT_LT((j * j.transpose() - full.covariance()).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_EQ(full.sample_from_noise(Vector::Zero(d)), full.mean);

  const GaussianDiag diag(Vector{{1.0, -1.0}}, Vector{{4.0, 0.25}});
  EXPECT_LT((diag.sample_from_noise(Vector{{1.0, 1.0}}) - Vector{{1.5, 1.0}}).norm(), 1e-15);
  const GaussianFixed fixed(Vector{{1.0, -1.0}}, Vector{{4.0, 0.25}});
  EXPECT_LT((fixed.sample_from_noise(Vector{{1.0, 1.0}}) - Vector{{1.5, 1.0}}).norm(), 1e-15);
  // sample(rng) draws ε from the same stream: same seed, same θ.
  Rng r1(5), r2(5);
  EXPECT_EQ(full.sample(r1), full.sample_from_noise(r2.normal_vector(d)));
  EXPECT_THROW(full.sample_from_noise(Vector::Zero(d + 1)), Error);
}

TEST(GaussianFamilies, FullMinimalLayoutIsDocumentedOrder) {
  Matrix s(3, 3);
  s << 4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2;
  const Vector m{{1.0, 2.0, 3.0}};
  const GaussianFull q(m, s);
  const Vector sm = s * m;
  const Vector expected{{sm[0], sm[1], sm[2], -2.0, -1.5, -1.0, -1.0, -0.5, -0.2}};
  EXPECT_LT((q.natural() - expected).cwiseAbs().maxCoeff(), 1e-12);
  const Vector x{{1.0, -2.0, 0.5}};
  const Vector t{{1.0, -2.0, 0.5, 1.0, 4.0, 0.25, -2.0, 0.5, -1.0}};
  EXPECT_LT((q.sufficient_statistic(x) - t).norm(), 1e-15);
  EXPECT_EQ(GaussianFull::dimension_for_natural_size(9), 3);
  EXPECT_EQ(GaussianFull::dimension_for_natural_size(10), -1);
}

TEST(GaussianFamilies, AgreeWhereTheyOverlap) {
  // A full Gaussian with diagonal S, a diagonal Gaussian and a fixed one with the same (m, s).
  const Vector m{{0.3, -1.2}}, s{{2.0, 0.7}};
  const GaussianFull full(m, Matrix(s.asDiagonal()));
  const GaussianDiag diag(m, s);
  const GaussianFixed fixed(m, s);
  const Vector x{{0.1, 0.4}};
  EXPECT_NEAR(full.log_density(x), diag.log_density(x), 1e-13);
  EXPECT_NEAR(fixed.log_density(x), diag.log_density(x), 1e-13);
  EXPECT_NEAR(full.entropy(), diag.entropy(), 1e-13);
  const GaussianDiag other(Vector{{1.0, 1.0}}, Vector{{0.5, 3.0}});
  const GaussianFull other_full(other.mean, Matrix(other.precision.asDiagonal()));
  EXPECT_NEAR(full.kl(other_full), diag.kl(other), 1e-13);
}

TEST(Bernoulli, ParametersOfSection45) {
  const Bernoulli q = Bernoulli::from_probability(Vector{{0.9, 0.5, 0.2}});
  EXPECT_NEAR(q.natural()[0], 0.5 * std::log(9.0), 1e-15);
  EXPECT_NEAR(q.natural()[1], 0.0, 1e-15);
  EXPECT_LT((q.expectation() - Vector{{0.8, 0.0, -0.6}}).norm(), 1e-15);
  EXPECT_LT((q.probability() - Vector{{0.9, 0.5, 0.2}}).norm(), 1e-15);
  // Extreme λ stays finite: A ≈ |λ|, variance ≈ 4e^{−2|λ|}.
  const Bernoulli extreme(Vector{{800.0, -800.0}});
  EXPECT_NEAR(extreme.log_partition(), 1600.0, 1e-12);
  EXPECT_TRUE(extreme.variance().allFinite());
  EXPECT_EQ(extreme.log_density(Vector{{1.0, 0.5}}), -std::numeric_limits<double>::infinity());
}

TEST(Bernoulli, RelaxedSamplesFollowEquation50) {
  const Bernoulli q(Vector{{0.3, -1.0}});
  const Vector u{{0.25, 0.9}};
  const double tau = 0.7;
  const Vector relaxed = q.relaxed_sample_from_noise(u, tau);
  for (Index j = 0; j < 2; ++j) {
    const double delta = 0.5 * std::log(u[j] / (1 - u[j]));
    EXPECT_NEAR(relaxed[j], std::tanh((q.natural()[j] + delta) / tau), 1e-15);
  }
  EXPECT_THROW(q.relaxed_sample_from_noise(u, 0.0), Error);
}

TEST(Bernoulli, ZeroTemperatureLimitHasTheLawOfQ) {
  // sign(λ + δ(u)) = +1 with probability σ(2λ) = p.
  Rng rng(42);
  const Bernoulli q(Vector{{0.4, -0.8, 1.3}});
  RunningStats positive;
  for (int i = 0; i < 20000; ++i) {
    const Vector r = q.relaxed_sample(rng, 1e-3);
    EXPECT_TRUE((r.array().abs() <= 1.0).all());
    positive.add((r.array() > 0).cast<double>().matrix());
  }
  for (Index j = 0; j < 3; ++j)
    EXPECT_NEAR(positive.mean()[j], q.probability()[j], 5 * positive.standard_error()[j]);
}

TEST(Bernoulli, RelaxedJacobianIsTheChainRuleOfEquation51) {
  // s_j = ∂θ̂_j/∂μ_j at fixed noise, by central differences in μ (λ = atanh μ).
  const Bernoulli q(Vector{{0.3, -0.6}});
  const Vector u{{0.4, 0.7}};
  const double tau = 0.5;
  const Vector s = q.relaxed_jacobian(q.relaxed_sample_from_noise(u, tau), tau);
  const Vector mu = q.expectation();
  const double h = 1e-6;
  for (Index j = 0; j < 2; ++j) {
    Vector plus = mu, minus = mu;
    plus[j] += h;
    minus[j] -= h;
    const double fd = (Bernoulli::from_expectation(plus).relaxed_sample_from_noise(u, tau)[j] -
                       Bernoulli::from_expectation(minus).relaxed_sample_from_noise(u, tau)[j]) /
                      (2 * h);
    EXPECT_NEAR(s[j], fd, 1e-7 * (1 + std::abs(fd)));
  }
}

TEST(Categorical, ProbabilitiesAndMinimalParameters) {
  const Categorical q = Categorical::from_probabilities(Vector{{0.2, 0.3, 0.5}});
  EXPECT_LT((q.natural() - Vector{{std::log(0.4), std::log(0.6)}}).norm(), 1e-15);
  EXPECT_LT((q.probabilities() - Vector{{0.2, 0.3, 0.5}}).norm(), 1e-15);
  EXPECT_NEAR(q.entropy(), -(0.2 * std::log(0.2) + 0.3 * std::log(0.3) + 0.5 * std::log(0.5)),
              1e-15);
  EXPECT_EQ(q.log_density(3), -std::numeric_limits<double>::infinity());
  EXPECT_THROW(Categorical::from_probabilities(Vector{{0.2, 0.3}}), Error);
  EXPECT_THROW(Categorical::from_probabilities(Vector{{1.0}}), Error);
  // Huge logits do not overflow.
  EXPECT_TRUE(Categorical(Vector{{1000.0, -1000.0}}).probabilities().allFinite());
}

TEST(ClosedForms, TextbookValues) {
  // Beta(2, 3): E log x = ψ(2) − ψ(5) = −(1/2 + 1/3 + 1/4) = −13/12.
  EXPECT_NEAR(Beta(2, 3).expectation()[0], -13.0 / 12.0, 1e-14);
  // Beta(1, 1) is uniform: entropy 0.
  EXPECT_NEAR(Beta(1, 1).entropy(), 0.0, 1e-15);
  // Exponential(rate 2) = Gamma(1, 2): entropy 1 − log 2.
  EXPECT_NEAR(Gamma(1, 2).entropy(), 1 - std::log(2.0), 1e-15);
  // Dirichlet(1, 1, 1) is uniform on the simplex, density 2: entropy −log 2.
  EXPECT_NEAR(Dirichlet(Vector::Ones(3)).entropy(), -std::log(2.0), 1e-14);
  // KL(Gamma(a, b) ‖ Gamma(a, b')) = a(log(b/b') + b'/b − 1).
  EXPECT_NEAR(Gamma(3, 2).kl(Gamma(3, 1)), 3 * (std::log(2.0) + 0.5 - 1), 1e-14);
}

TEST(SpecialFunctions, KnownValuesAndInverses) {
  constexpr double kEulerGamma = 0.57721566490153286061;
  EXPECT_NEAR(digamma(1.0), -kEulerGamma, 1e-15);
  EXPECT_NEAR(trigamma(1.0), std::numbers::pi * std::numbers::pi / 6, 1e-15);
  EXPECT_THROW(digamma(0.0), Error);
  EXPECT_THROW(trigamma(-1.0), Error);
  for (double x : {1e-6, 0.01, 0.3, 1.0, 2.5, 40.0, 1e5}) {
    EXPECT_NEAR(inverse_digamma(digamma(x)), x, 1e-12 * x) << x;
    const double gap = std::log(x) - digamma(x);
    EXPECT_NEAR(gamma_shape_from_log_gap(gap), x, 1e-9 * x) << x;
  }
  EXPECT_THROW(gamma_shape_from_log_gap(0.0), Error);
  for (const Vector& alpha :
       {Vector{{0.05, 0.3}}, Vector{{1.0, 2.0, 3.0}}, Vector{{200.0, 50.0, 0.5, 7.0}}}) {
    const Vector mu = Dirichlet(alpha).expectation();
    const Vector back = dirichlet_from_expected_log(mu);
    EXPECT_LT(((back - alpha).array().abs() / alpha.array()).maxCoeff(), 1e-8) << alpha.transpose();
  }
  EXPECT_NEAR(log1p_exp(800.0), 800.0, 1e-12);
  EXPECT_NEAR(log1p_exp(-800.0), 0.0, 1e-300);
  EXPECT_NEAR(log_two_cosh(0.0), std::log(2.0), 1e-15);
  EXPECT_NEAR(log_sum_exp(Vector{{1000.0, 1000.0}}), 1000.0 + std::log(2.0), 1e-12);
}

TEST(SpecialFunctions, LogGammaSamplesForTinyShapes) {
  // E[G] = a and E[log G] = ψ(a) for G ~ Gamma(a, 1); a = 0.05 would underflow in plain space.
  Rng rng(43);
  for (double a : {0.05, 0.7, 6.0}) {
    RunningStats g, lg;
    for (int i = 0; i < 20000; ++i) {
      const double l = log_gamma_sample(rng, a);
      ASSERT_TRUE(std::isfinite(l));
      g.add(std::exp(l));
      lg.add(l);
    }
    EXPECT_NEAR(g.mean()[0], a, 5 * g.standard_error()[0]) << a;
    EXPECT_NEAR(lg.mean()[0], digamma(a), 5 * lg.standard_error()[0]) << a;
  }
}

}  // namespace
}  // namespace blr
