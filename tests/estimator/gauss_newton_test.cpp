// Gauss–Newton (OGN, eq. 45) and its sampled variant (VOGN, eq. 46): Ĥ = c·Σ_i g_i g_iᵀ + ∇²R, as
// outer products for a full Gaussian and as their diagonal for a diagonal one.
#include <gtest/gtest.h>

#include "blr/family/special.hpp"
#include "blr/core/rng.hpp"
#include "blr/estimator/gauss_newton.hpp"
#include "blr/model/logistic_regression.hpp"
#include "blr/model/mlp.hpp"
#include "blr/rule/gaussian_rule.hpp"
#include "estimator/estimator_checks.hpp"

namespace blr {
namespace {

using testing::max_abs;

struct Problem {
  Matrix x;
  Vector y;
};

Problem make_problem(std::uint64_t seed, Index n, Index d) {
  Rng rng(seed);
  Problem p{Matrix(n, d), Vector(n)};
  for (Index i = 0; i < p.x.size(); ++i) p.x.data()[i] = rng.normal();
  for (Index i = 0; i < n; ++i) p.y[i] = rng.uniform() < 0.4 ? 1.0 : 0.0;
  return p;
}

/// Σ_{i∈rows} g_i g_iᵀ written out for logistic regression, g_i = (σ(x_iᵀθ) − y_i)x_i.
Matrix outer_sum(const Problem& p, const Vector& theta, const std::vector<Index>& rows) {
  Matrix h = Matrix::Zero(theta.size(), theta.size());
  for (Index i : rows) {
    const Vector xi = p.x.row(i).transpose();
    const Vector gi = (sigmoid(xi.dot(theta)) - p.y[i]) * xi;
    h += gi * gi.transpose();
  }
  return h;
}

std::vector<Index> all_rows(Index n) {
  std::vector<Index> r(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] = i;
  return r;
}

TEST(GaussNewton, EqualsTheSumOfOuterProductsAtTheMean) {
  const Problem p = make_problem(1, 20, 3);
  const double delta = 0.5;
  const LogisticRegression f(p.x, p.y, {.prior_precision = delta});
  Rng rng(2);
  const Vector m = rng.normal_vector(3);
  const Matrix expected = outer_sum(p, m, all_rows(20)) + delta * Matrix::Identity(3, 3);

  const GaussianEstimate full =
      GaussNewton().estimate(GaussianFull(m, Matrix::Identity(3, 3)), f, rng);
  ASSERT_EQ(full.curvature.kind, Curvature::Kind::outer);
  EXPECT_EQ(full.curvature.factors.rows(), 20);
  EXPECT_DOUBLE_EQ(full.curvature.scale, 1.0);
  EXPECT_LE(max_abs(full.curvature.shift - Vector::Constant(3, delta)), 0.0);
  EXPECT_LE(max_abs(full.curvature.to_dense(3) - expected), 1e-12);
  EXPECT_LE(max_abs(full.gradient - f.gradient(m)), 1e-12);
  EXPECT_NEAR(full.loss, f.value(m), 1e-12);

  const GaussianEstimate diag = GaussNewton().estimate(GaussianDiag(m, Vector::Ones(3)), f, rng);
  ASSERT_EQ(diag.curvature.kind, Curvature::Kind::diagonal);
  EXPECT_LE(max_abs(diag.curvature.diag - expected.diagonal()), 1e-12);
}

TEST(GaussNewton, MinibatchScaleAndNoShiftWithoutAPrior) {
  const Problem p = make_problem(3, 30, 4);
  const LogisticRegression f(p.x, p.y);
  const std::vector<Index> rows = {2, 5, 11, 29, 17};
  const LogisticRegression mini = f.with_rows(rows);
  Rng rng(4);
  const Vector m = rng.normal_vector(4);
  const GaussianEstimate e =
      GaussNewton().estimate(GaussianFull(m, Matrix::Identity(4, 4)), mini, rng);
  EXPECT_EQ(e.curvature.shift.size(), 0);    // so the rule can use rank-one updates
  EXPECT_DOUBLE_EQ(e.curvature.scale, 6.0);  // N/M = 30/5
  EXPECT_LE(max_abs(e.curvature.to_dense(4) - 6.0 * outer_sum(p, m, rows)), 1e-12);
}

TEST(GaussNewton, SampledVariantEvaluatesAtTheSamples) {
  const Problem p = make_problem(5, 15, 3);
  const LogisticRegression f(p.x, p.y, {.prior_precision = 0.2});
  const Vector m{{0.1, -0.3, 0.2}}, s{{4.0, 1.0, 9.0}};
  const GaussianDiag q(m, s);
  const std::vector<Vector> eps = {Vector{{1.0, -0.5, 0.2}}, Vector{{-0.3, 0.8, 1.1}}};
  const GaussNewton vogn({.sample = true, .samples = 2});
  const GaussianEstimate e = vogn.estimate_with_noise(q, f, eps);
  Vector expected_diag = Vector::Zero(3), expected_grad = Vector::Zero(3);
  for (const Vector& n : eps) {
    const Vector theta = m + n.cwiseQuotient(s.cwiseSqrt());
    expected_diag +=
        0.5 * (outer_sum(p, theta, all_rows(15)).diagonal() + Vector::Constant(3, 0.2));
    expected_grad += 0.5 * f.gradient(theta);
  }
  EXPECT_LE(max_abs(e.curvature.diag - expected_diag), 1e-12);
  EXPECT_LE(max_abs(e.gradient - expected_grad), 1e-12);
  EXPECT_EQ(e.evaluations, 2);

  // The full family stacks both samples' rows with scale c/K.
  const GaussianFull qf(m, Matrix(s.asDiagonal()));
  const GaussianEstimate ef = vogn.estimate_with_noise(qf, f, eps);
  EXPECT_EQ(ef.curvature.factors.rows(), 30);
  EXPECT_DOUBLE_EQ(ef.curvature.scale, 0.5);
  EXPECT_LE(max_abs(ef.curvature.diagonal_part(3) - expected_diag), 1e-12);

  // The Rng overload draws K noise vectors in order.
  Rng a(6), b(6);
  EXPECT_EQ(vogn.estimate(q, f, a).curvature.diag,
            vogn.estimate_with_noise(q, f, standard_normal_noise(b, 3, 2, false)).curvature.diag);
  // Without sampling, the Rng is not used.
  Rng c(7);
  GaussNewton().estimate(q, f, c);
  EXPECT_TRUE(c == Rng(7));
}

TEST(GaussNewton, WorksOnAnMlpAndFeedsTheRankOneRule) {
  Rng rng(8);
  Matrix x(12, 2);
  for (Index i = 0; i < x.size(); ++i) x.data()[i] = rng.normal();
  const Vector y = x.col(0).array().sin().matrix();
  const Mlp f(x, y, {.hidden = {3}});
  const Vector m = f.initial_parameters(rng);
  const Index d = f.dimension();
  const GaussianEstimate e =
      GaussNewton().estimate(GaussianFull(m, Matrix::Identity(d, d)), f, rng);
  const Matrix g = f.per_example_gradients(m);
  EXPECT_LE(max_abs(e.curvature.to_dense(d) - g.transpose() * g), 1e-12);
  // One BLR step through the rank-one path equals the dense step (1 − ρ)S + ρĤ.
  auto state = init(GaussianFull(m, Matrix::Identity(d, d)));
  Policy<> policy;
  policy.mean_rate = Schedule::constant(0.3);
  policy.precision_rate = Schedule::constant(0.3);
  step(state, e, policy);
  const Matrix expected = 0.7 * Matrix::Identity(d, d) + 0.3 * g.transpose() * g;
  EXPECT_LE(max_abs(state.q.precision.matrix() - expected), 1e-12);
}

}  // namespace
}  // namespace blr
