// Monte Carlo (Bonnet/Price) and reparameterisation-Hessian estimators: fixed-noise values,
// unbiasedness on a quadratic (E[Ĥ] = A) and agreement with the closed-form Gaussian smoothing of
// Himmelblau's function (peers.md 4(g): m = (3, 2), variance 0.1, E_q f = 5.46). Stochastic checks
// use the standard error of replicated estimates (5 standard errors).
#include <gtest/gtest.h>

#include "blr/core/rng.hpp"
#include "blr/estimator/monte_carlo.hpp"
#include "blr/estimator/reparam_hessian.hpp"
#include "blr/model/logistic_regression.hpp"
#include "blr/model/quadratic.hpp"
#include "blr/model/test_functions.hpp"
#include "estimator/estimator_checks.hpp"

namespace blr {
namespace {

using testing::expect_within_standard_errors;
using testing::replicate;

using testing::random_spd;

using testing::max_abs;

Vector upper_triangle(const Matrix& h) {
  Vector out(h.rows() * (h.rows() + 1) / 2);
  Index k = 0;
  for (Index j = 0; j < h.cols(); ++j)
    for (Index i = 0; i <= j; ++i) out[k++] = h(i, j);
  return out;
}

// ---- fixed noise -------------------------------------------------------------------------------

TEST(MonteCarlo, FixedNoiseDiagonalAndFull) {
  const Himmelblau f;
  const Vector m{{3.0, 2.0}};
  const Vector s{{4.0, 9.0}};
  const std::vector<Vector> eps = {Vector{{0.5, -1.0}}, Vector{{-0.2, 0.3}}};
  const GaussianEstimate e = MonteCarlo<>().estimate_with_noise(GaussianDiag(m, s), f, eps);
  const Vector t1 = m + Vector{{0.25, -1.0 / 3.0}}, t2 = m + Vector{{-0.1, 0.1}};
  EXPECT_LE(max_abs(e.gradient - 0.5 * (f.gradient(t1) + f.gradient(t2))), 1e-12);
  EXPECT_LE(max_abs(e.curvature.diag - 0.5 * (f.hessian_diagonal(t1) + f.hessian_diagonal(t2))),
            1e-12);
  EXPECT_NEAR(e.loss, 0.5 * (f.value(t1) + f.value(t2)), 1e-12);
  EXPECT_EQ(e.evaluations, 2);

  // Full: θ = m + L⁻ᵀε has covariance S⁻¹.
  const Matrix prec{{4.0, 1.0}, {1.0, 2.0}};
  const GaussianFull q(m, prec);
  const GaussianEstimate ef = MonteCarlo<>().estimate_with_noise(q, f, {eps[0]});
  const Vector theta =
      q.mean + q.precision.lower().transpose().triangularView<Eigen::Upper>().solve(eps[0]);
  EXPECT_LE(max_abs(ef.curvature.dense - f.hessian(theta)), 1e-12);
  EXPECT_LE(max_abs(ef.gradient - f.gradient(theta)), 1e-12);
}

TEST(MonteCarlo, RngOverloadDrawsItsNoiseInOrder) {
  const Himmelblau f;
  const GaussianDiag q(Vector{{1.0, 1.0}}, Vector{{2.0, 5.0}});
  const MonteCarlo<> mc({.samples = 3});
  Rng a(42), b(42);
  const GaussianEstimate e1 = mc.estimate(q, f, a);
  const GaussianEstimate e2 = mc.estimate_with_noise(q, f, standard_normal_noise(b, 2, 3, false));
  EXPECT_EQ(e1.gradient, e2.gradient);
  EXPECT_EQ(e1.curvature.diag, e2.curvature.diag);
  EXPECT_TRUE(a == b);
}

TEST(MonteCarlo, AntitheticPairsGiveTheExactGradientOnAQuadratic) {
  Rng rng(6);
  const Quadratic f(random_spd(rng, 3), rng.normal_vector(3));
  const GaussianFull q(rng.normal_vector(3), random_spd(rng, 3));
  const GaussianEstimate e = MonteCarlo<>({.samples = 2, .antithetic = true}).estimate(q, f, rng);
  EXPECT_LE(max_abs(e.gradient - f.gradient(q.mean)), 1e-12);
  const std::vector<Vector> noise = standard_normal_noise(rng, 3, 4, true);
  EXPECT_EQ(noise[1], -noise[0]);
  EXPECT_EQ(noise[3], -noise[2]);
}

// ---- unbiasedness on a quadratic
// ------------------------------------------------------------------

class Unbiased : public ::testing::Test {
 protected:
  Rng rng{7};
  Matrix a = random_spd(rng, 3);
  Quadratic f{a, rng.normal_vector(3)};
  GaussianDiag diag{rng.normal_vector(3), Vector{{0.5, 1.0, 4.0}}};
  GaussianFull full{rng.normal_vector(3), random_spd(rng, 3)};
};

TEST_F(Unbiased, MonteCarloGradientAndHessian) {
  const MonteCarlo<> mc({.samples = 4});
  const auto gd = replicate(2000, [&](int) { return mc.estimate(diag, f, rng).gradient; });
  expect_within_standard_errors(gd, f.gradient(diag.mean), 5.0, "MC gradient, diagonal q");
  const auto gf = replicate(2000, [&](int) { return mc.estimate(full, f, rng).gradient; });
  expect_within_standard_errors(gf, f.gradient(full.mean), 5.0, "MC gradient, full q");
  const auto hf = replicate(
      200, [&](int) { return upper_triangle(mc.estimate(full, f, rng).curvature.dense); });
  expect_within_standard_errors(hf, upper_triangle(a), 5.0, "MC Hessian, full q");
}

TEST_F(Unbiased, ReparamHessianDiagonal) {
  const ReparamHessian rh({.samples = 4});
  const auto h = replicate(4000, [&](int) { return rh.estimate(diag, f, rng).curvature.diag; });
  expect_within_standard_errors(h, a.diagonal(), 5.0, "ReparamHessian, diagonal q");
  // The estimate is genuinely stochastic: its standard error is not zero.
  EXPECT_GT(h.standard_error.minCoeff(), 1e-3);
  const auto g = replicate(2000, [&](int) { return rh.estimate(diag, f, rng).gradient; });
  expect_within_standard_errors(g, f.gradient(diag.mean), 5.0, "ReparamHessian gradient");
}

TEST_F(Unbiased, ReparamHessianFull) {
  const ReparamHessian rh({.samples = 4});
  const auto h = replicate(4000, [&](int) {
    const GaussianEstimate e = rh.estimate(full, f, rng);
    EXPECT_EQ(e.curvature.kind, Curvature::Kind::dense);
    EXPECT_LE(max_abs(e.curvature.dense - e.curvature.dense.transpose()), 1e-14);
    return upper_triangle(e.curvature.dense);
  });
  expect_within_standard_errors(h, upper_triangle(a), 5.0, "ReparamHessian, full q");
}

TEST_F(Unbiased, AntitheticReparamHessianHasSmallerVariance) {
  // Far from the centre the term linear in ε dominates ĝ⊙s⊙(θ − m); the pairs (ε, −ε) cancel it.
  const GaussianDiag far(f.center() + Vector::Constant(3, 5.0), diag.precision);
  const ReparamHessian plain({.samples = 2});
  const ReparamHessian anti({.samples = 2, .antithetic = true});
  const auto p = replicate(2000, [&](int) { return plain.estimate(far, f, rng).curvature.diag; });
  const auto q = replicate(2000, [&](int) { return anti.estimate(far, f, rng).curvature.diag; });
  expect_within_standard_errors(q, a.diagonal(), 5.0, "antithetic ReparamHessian");
  EXPECT_LT(q.standard_error.maxCoeff(), p.standard_error.maxCoeff());
}

// ---- fixed-noise formula of the reparameterisation estimator
// ----------------------------------------

TEST(ReparamHessian, FixedNoiseMatchesTheFormula) {
  const Himmelblau f;
  const Vector m{{3.0, 2.0}}, s{{4.0, 9.0}}, eps{{0.5, -1.0}};
  const GaussianEstimate e = ReparamHessian().estimate_with_noise(GaussianDiag(m, s), f, {eps});
  const Vector theta = m + eps.cwiseQuotient(s.cwiseSqrt());
  const Vector g = f.gradient(theta);
  EXPECT_LE(max_abs(e.gradient - g), 1e-12);
  // ĝ ⊙ (θ − m) ⊙ s
  EXPECT_LE(max_abs(e.curvature.diag - g.cwiseProduct(theta - m).cwiseProduct(s)), 1e-12);

  const Matrix prec{{4.0, 1.0}, {1.0, 2.0}};
  const GaussianFull q(m, prec);
  const GaussianEstimate ef = ReparamHessian().estimate_with_noise(q, f, {eps});
  const Vector tf = m + q.precision.solve_upper(eps);
  const Vector gf = f.gradient(tf);
  const Matrix outer = prec * (tf - m) * gf.transpose();  // S(θ − m)ĝᵀ
  EXPECT_LE(max_abs(ef.curvature.dense - 0.5 * (outer + outer.transpose())), 1e-12);

  Rng a(3), b(3);
  const ReparamHessian rh({.samples = 5});
  EXPECT_EQ(rh.estimate(q, f, a).curvature.dense,
            rh.estimate_with_noise(q, f, standard_normal_noise(b, 2, 5, false)).curvature.dense);
}

// ---- Himmelblau's Gaussian smoothing (peers.md 4(g)) --------------------------------------------

class HimmelblauSmoothing : public ::testing::Test {
 protected:
  Himmelblau f;
  Vector m{{3.0, 2.0}};
  double v = 0.1;  // variance of each coordinate: precision 10
  GaussianDiag diag{m, Vector::Constant(2, 1.0 / v)};
  GaussianFull full{m, Matrix(Matrix::Identity(2, 2) / v)};
  Rng rng{8};
};

TEST_F(HimmelblauSmoothing, ClosedFormValue) {
  EXPECT_NEAR(Himmelblau::expected_value(m, v), 5.46, 1e-12);
}

TEST_F(HimmelblauSmoothing, MonteCarloMatchesClosedForms) {
  const MonteCarlo<> mc({.samples = 8});
  const auto r = replicate(4000, [&](int) {
    const GaussianEstimate e = mc.estimate(diag, f, rng);
    Vector out(5);
    out << e.loss, e.gradient, e.curvature.diag;
    return out;
  });
  Vector truth(5);
  truth << Himmelblau::expected_value(m, v), Himmelblau::expected_gradient(m, v),
      Himmelblau::expected_hessian(m, v).diagonal();
  EXPECT_NEAR(truth[0], 5.46, 1e-12);
  expect_within_standard_errors(r, truth, 5.0, "MonteCarlo on smoothed Himmelblau");
  // The loss average is a precise estimate here: within 0.1 of 5.46.
  EXPECT_NEAR(r.mean[0], 5.46, 0.1);

  const auto rf = replicate(
      2000, [&](int) { return upper_triangle(mc.estimate(full, f, rng).curvature.dense); });
  expect_within_standard_errors(rf, upper_triangle(Himmelblau::expected_hessian(m, v)), 5.0,
                                "MonteCarlo Hessian, full q");
}

TEST_F(HimmelblauSmoothing, ReparamHessianMatchesClosedForms) {
  const ReparamHessian rh({.samples = 8});
  const auto r = replicate(4000, [&](int) {
    const GaussianEstimate e = rh.estimate(diag, f, rng);
    Vector out(5);
    out << e.loss, e.gradient, e.curvature.diag;
    return out;
  });
  Vector truth(5);
  truth << Himmelblau::expected_value(m, v), Himmelblau::expected_gradient(m, v),
      Himmelblau::expected_hessian(m, v).diagonal();
  expect_within_standard_errors(r, truth, 5.0, "ReparamHessian on smoothed Himmelblau");

  const auto rf = replicate(
      4000, [&](int) { return upper_triangle(rh.estimate(full, f, rng).curvature.dense); });
  expect_within_standard_errors(rf, upper_triangle(Himmelblau::expected_hessian(m, v)), 5.0,
                                "ReparamHessian Hessian, full q");
}

TEST(MonteCarlo, FirstOrderOnAGradientOnlyModel) {
  // Variational optimisation with a fixed covariance: only gradients are asked for.
  Rng rng(9);
  const Matrix x{{1.0, 0.5}, {-0.3, 1.0}, {0.2, -1.0}};
  const LogisticRegression f(x, Vector{{1.0, 0.0, 1.0}});
  const GaussianFixed q(Vector{{0.1, -0.2}});
  const GaussianEstimate e = MonteCarloFirstOrder({.samples = 3}).estimate(q, f, rng);
  EXPECT_TRUE(e.curvature.empty());
  EXPECT_EQ(e.evaluations, 3);
}

}  // namespace
}  // namespace blr
