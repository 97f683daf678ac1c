// Merging posteriors in natural parameters (blr/inference/merge.hpp): Bayesian linear regression
// fitted on disjoint splits from one prior N(m₀, S₀⁻¹) and merged equals the full-data posterior.
#include "blr/inference/merge.hpp"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/gaussian_natural.hpp"
#include "blr/rule/natural_step.hpp"

namespace blr::inference {
namespace {

/// Mean and covariance of a full Gaussian from its natural parameter (the family's layout).
struct Moments {
  Vector mean;
  Matrix covariance;
};
Moments moments(const Vector& lambda) {
  const GaussianFull q = GaussianFull::from_natural(lambda);
  return {q.mean, q.covariance()};
}

constexpr double kEps = std::numeric_limits<double>::epsilon();

struct Problem {
  Matrix phi;
  Vector y;
  Vector prior;  // λ₀ = (S₀m₀, vec S₀)
  BayesianLinearRegression model;
  Index d = 0;
};

Problem make_problem(Index n, Index d, uint64_t seed) {
  Rng rng(seed);
  Problem p;
  p.d = d;
  p.model.noise_precision = 4.0;
  p.phi = Matrix(n, d);
  for (Index i = 0; i < n; ++i) p.phi.row(i) = rng.normal_vector(d).transpose();
  const Vector w = rng.normal_vector(d);
  p.y = p.phi * w + 0.5 * rng.normal_vector(n);
  // A correlated prior with a non-zero mean: S₀ = AAᵀ + I, m₀ ~ N(0, I).
  Matrix a(d, d);
  for (Index j = 0; j < d; ++j) a.col(j) = rng.normal_vector(d);
  const Matrix s0 = a * a.transpose() + Matrix::Identity(d, d);
  const Vector m0 = rng.normal_vector(d);
  p.prior = pack_full(s0 * m0, s0);
  return p;
}

// The posterior of rows [begin, end): one conjugate ρ = 1 step from the prior (conjugate.hpp).
Vector fit(const Problem& p, Index begin, Index end) {
  const Matrix phi = p.phi.middleRows(begin, end - begin);
  const Vector y = p.y.segment(begin, end - begin);
  return natural_step_towards(p.prior, p.prior + p.model.data_message(phi, y), 1.0);
}

TEST(Merge, DisjointSplitsGiveTheFullDataPosterior) {
  const Index n = 90, d = 4, k = 3;
  const Problem p = make_problem(n, d, 11);
  std::vector<Vector> parts;
  for (Index t = 0; t < k; ++t) parts.push_back(fit(p, t * n / k, (t + 1) * n / k));
  const Vector merged = merge_natural(p.prior, parts);
  const Vector full = fit(p, 0, n);

  // Round-off bound on the natural parameters: both sides sum the same terms (N messages, the
  // prior K + 1 times) in different orders, so each entry differs by at most γ·Σ|terms| with
  // γ = (N + 2K + 2)·ε (summation error of the longer chain, to first order).
  const double gamma = static_cast<double>(n + 2 * k + 2) * kEps;
  const Matrix s0 = full_precision(p.prior, d);
  const Matrix abs_s = static_cast<double>(k + 1) * s0.cwiseAbs() +
                       p.model.noise_precision * p.phi.cwiseAbs().transpose() * p.phi.cwiseAbs();
  const Vector abs_b = static_cast<double>(k + 1) * full_sm(p.prior, d).cwiseAbs() +
                       p.model.noise_precision * p.phi.cwiseAbs().transpose() * p.y.cwiseAbs();
  const Matrix ds = full_precision(merged, d) - full_precision(full, d);
  const Vector db = full_sm(merged, d) - full_sm(full, d);
  for (Index i = 0; i < d; ++i) {
    EXPECT_LE(std::abs(db[i]), gamma * abs_b[i]) << "S·m entry " << i;
    for (Index j = 0; j < d; ++j) EXPECT_LE(std::abs(ds(i, j)), gamma * abs_s(i, j)) << i << j;
  }

  // Means: a perturbed linear system S m = b has relative error
  // ≤ κ(S)(‖δS‖/‖S‖ + ‖δb‖/‖b‖) / (1 − κ(S)‖δS‖/‖S‖) (2-norms; ‖δS‖₂ ≤ ‖δS‖_F).
  const Moments fm = moments(full), mm = moments(merged);
  Eigen::SelfAdjointEigenSolver<Matrix> eig(full_precision(full, d));
  const double s_norm = eig.eigenvalues().maxCoeff();
  const double kappa = s_norm / eig.eigenvalues().minCoeff();
  const double rs = gamma * abs_s.norm() / s_norm;
  const double rb = gamma * abs_b.norm() / full_sm(full, d).norm();
  // Each side's Cholesky solve adds its own backward error γ_{3d+1}|Rᵀ||R| (Higham, Thm 10.4;
  // ‖|Rᵀ||R|‖ ≤ d‖S‖), i.e. a relative forward error ≤ κ(3d+1)d·ε per side.
  const double dd = static_cast<double>(d);
  const double solves = 2.0 * kappa * (3.0 * dd + 1.0) * dd * kEps;
  const double mean_bound = kappa * (rs + rb) / (1.0 - kappa * rs) + solves;
  ASSERT_LT(mean_bound, 1e-10) << "the bound must be tight enough to mean 'exact'";
  EXPECT_LE((mm.mean - fm.mean).norm(), mean_bound * fm.mean.norm());
  // Covariances: ‖δ(S⁻¹)‖/‖S⁻¹‖ ≤ κ rs / (1 − κ rs).
  const double cov_bound = kappa * rs / (1.0 - kappa * rs) + solves;
  EXPECT_LE((mm.covariance - fm.covariance).norm(),
            cov_bound * fm.covariance.norm() * std::sqrt(static_cast<double>(d)));
  // Far from the prior: the merge really pooled the data (each split alone is off).
  for (const Vector& part : parts) {
    EXPECT_GT((moments(part).mean - fm.mean).norm(), 1e3 * mean_bound * fm.mean.norm());
  }
}

TEST(Merge, OnePosteriorComesBackExactly) {
  const Problem p = make_problem(40, 3, 5);
  const Vector one = fit(p, 0, 40);
  EXPECT_EQ(merge_natural(p.prior, {one}), one);
  // A scale α = 1/T merge of T copies of one posterior is that posterior (to round-off).
  const Vector three = merge_natural(p.prior, {one, one, one}, 1.0 / 3.0);
  EXPECT_LE((three - one).cwiseAbs().maxCoeff(), 8 * kEps * one.cwiseAbs().maxCoeff());
}

TEST(Merge, RefusesBadInput) {
  const Vector prior = Vector::Ones(6);
  EXPECT_THROW(merge_natural(prior, {}), Error);
  EXPECT_THROW(merge_natural(prior, {Vector::Ones(5)}), Error);
  EXPECT_THROW(merge_natural(prior, {prior}, 0.0), Error);
  EXPECT_THROW(merge_natural(prior, {prior}, std::nan("")), Error);
}

}  // namespace
}  // namespace blr::inference
