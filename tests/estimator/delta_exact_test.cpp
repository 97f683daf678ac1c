// The delta method (App. C) and the exact quadratic expectations (eq. 14): equal on quadratics,
// the shapes of Ĥ per family, and the classical algorithms they give with the BLR step.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>

#include "blr/core/rng.hpp"
#include "blr/estimator/delta.hpp"
#include "blr/estimator/exact_quadratic.hpp"
#include "blr/estimator/monte_carlo.hpp"
#include "blr/model/linear_regression.hpp"
#include "blr/model/quadratic.hpp"
#include "blr/model/test_functions.hpp"
#include "blr/rule/gaussian_rule.hpp"
#include "estimator/estimator_checks.hpp"

namespace blr {
namespace {

using testing::random_spd;

using testing::max_abs;

TEST(Delta, SecondOrderIsExactOnQuadratics) {
  Rng rng(1);
  const Index d = 4;
  const Matrix a = random_spd(rng, d);
  const Vector c = rng.normal_vector(d);
  const Quadratic f(a, c, 0.25);
  const GaussianFull full(rng.normal_vector(d), random_spd(rng, d));
  const GaussianDiag diag(full.mean, Vector::Constant(d, 3.0));

  const GaussianEstimate e = DeltaSecondOrder().estimate(full, f, rng);
  const GaussianEstimate x = ExactQuadratic().estimate(full, f, rng);
  ASSERT_EQ(e.curvature.kind, Curvature::Kind::dense);
  EXPECT_LE(max_abs(e.gradient - a * (full.mean - c)), 1e-12);
  EXPECT_LE(max_abs(e.curvature.dense - a), 1e-15);
  EXPECT_LE(max_abs(e.gradient - x.gradient), 1e-15);
  EXPECT_LE(max_abs(e.curvature.dense - x.curvature.dense), 1e-15);
  EXPECT_NEAR(e.loss, f.value(full.mean), 1e-15);
  EXPECT_EQ(e.evaluations, 1);

  const GaussianEstimate ed = DeltaSecondOrder().estimate(diag, f, rng);
  ASSERT_EQ(ed.curvature.kind, Curvature::Kind::diagonal);
  EXPECT_LE(max_abs(ed.curvature.diag - a.diagonal()), 1e-15);
  EXPECT_LE(max_abs(ed.curvature.diag - ExactQuadratic().estimate(diag, f, rng).curvature.diag),
            1e-15);
}

TEST(Delta, FirstOrderAndGradientSquared) {
  Rng rng(2);
  const Himmelblau f;
  const Vector m{{1.0, -2.0}};
  const GaussianFixed q(m);
  const GaussianEstimate first = DeltaFirstOrder().estimate(q, f, rng);
  EXPECT_TRUE(first.curvature.empty());
  EXPECT_EQ(first.gradient, f.gradient(m));
  EXPECT_EQ(first.loss, f.value(m));
  const GaussianEstimate sq =
      DeltaGradientSquared().estimate(GaussianDiag(m, Vector::Ones(2)), f, rng);
  ASSERT_EQ(sq.curvature.kind, Curvature::Kind::diagonal);
  EXPECT_EQ(sq.curvature.diag, f.gradient(m).cwiseAbs2());
  // The Rng is not touched by a deterministic estimator.
  Rng fresh(2);
  DeltaSecondOrder().estimate(q, f, fresh);
  EXPECT_TRUE(fresh == Rng(2));
}

Policy<> full_step(double rho) {
  Policy<> p;
  p.mean_rate = Schedule::constant(rho);
  p.precision_rate = Schedule::constant(rho);
  return p;
}

TEST(Delta, WithTheRuleAtRhoOneIsNewtonsMethod) {
  // One BLR step with the second-order delta method and ρ = 1 is a Newton step (§1.3.2): on a
  // quadratic it lands on the minimiser with S = A; on Himmelblau it matches x − H⁻¹∇f.
  Rng rng(3);
  const Index d = 3;
  const Matrix a = random_spd(rng, d);
  const Quadratic f(a, rng.normal_vector(d));
  auto state = init(GaussianFull(rng.normal_vector(d), Matrix::Identity(d, d)));
  step(state, DeltaSecondOrder().estimate(state.q, f, rng), full_step(1.0));
  EXPECT_LE(max_abs(state.q.mean - f.center()), 1e-12);
  EXPECT_LE(max_abs(state.q.precision.matrix() - a), 1e-12);

  const Himmelblau h;
  const Vector x0{{3.3, 1.6}};
  auto hs = init(GaussianFull(x0, Matrix::Identity(2, 2)));
  step(hs, DeltaSecondOrder().estimate(hs.q, h, rng), full_step(1.0));
  const Vector newton = x0 - h.hessian(x0).llt().solve(h.gradient(x0));
  EXPECT_LE(max_abs(hs.q.mean - newton), 1e-12);
}

TEST(ExactQuadratic, ExpectedLossMatchesMonteCarlo) {
  Rng rng(4);
  const Index d = 3;
  const Quadratic f(random_spd(rng, d), rng.normal_vector(d), -0.5);
  const GaussianFull full(rng.normal_vector(d), random_spd(rng, d));
  const GaussianDiag diag(full.mean, Vector{{0.5, 2.0, 4.0}});
  const MonteCarlo<> mc({.samples = 20});
  for (int which = 0; which < 2; ++which) {
    const double exact = which == 0 ? ExactQuadratic().estimate(full, f, rng).loss
                                    : ExactQuadratic().estimate(diag, f, rng).loss;
    const auto r = testing::replicate(2000, [&](int) {
      return Vector::Constant(
          1, which == 0 ? mc.estimate(full, f, rng).loss : mc.estimate(diag, f, rng).loss);
    });
    testing::expect_within_standard_errors(r, Vector::Constant(1, exact), 5.0, "E_q[loss]");
  }
  // Closed form for the diagonal family: ℓ̄(m) + ½Σ A_jj/s_j.
  EXPECT_NEAR(ExactQuadratic().estimate(diag, f, rng).loss,
              f.value(diag.mean) + 0.5 * f.matrix().diagonal().cwiseQuotient(diag.precision).sum(),
              1e-12);
}

TEST(ExactQuadratic, OneStepGivesTheConjugatePosterior) {
  // peers.md 4(a) A1: Bayesian linear regression, α = 1, β = 4; one BLR step with exact
  // expectations and ρ = 1 from any q gives the posterior N(m_N, A⁻¹).
  Matrix phi(5, 2);
  phi << 1, 0, 1, 1, 1, 2, 1, 3, 1, 4;
  const LinearRegression f(phi, Vector{{1.0, 2.9, 5.2, 6.8, 9.1}},
                           {.noise_precision = 4.0, .prior_precision = 1.0});
  Rng rng(5);
  auto state = init(GaussianFull(Vector{{-3.0, 7.0}}, Matrix{{2.0, 0.3}, {0.3, 0.5}}));
  step(state, ExactQuadratic().estimate(state.q, f, rng), full_step(1.0));
  EXPECT_NEAR(state.q.mean[0], 0.9394261424, 1e-9);
  EXPECT_NEAR(state.q.mean[1], 2.0068012752, 1e-9);
  const Matrix cov = state.q.covariance();
  EXPECT_NEAR(cov(0, 0), 0.12858661, 1e-8);
  EXPECT_NEAR(cov(0, 1), -0.04250797, 1e-8);
  EXPECT_NEAR(cov(1, 1), 0.02231668, 1e-8);
}

}  // namespace
}  // namespace blr
