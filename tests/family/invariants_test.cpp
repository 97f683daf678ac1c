// The shared invariant suite of the exponential families (DESIGN.md §4.3). Every check runs over
// every family in `Families`; adding a family adds its line there and a `Case` (how to draw a
// random member, and which λ and μ are invalid).
//
// Checked, on several random members per family:
//   * λ ↔ μ round trips (members and static factories);
//   * ∇A(λ) = μ by central finite differences;
//   * the Fisher matrix ∇²A(λ), by central differences of μ, is symmetric positive definite;
//   * log q(x) = ⟨λ, T(x)⟩ − A(λ) + log h(x) at sampled points;
//   * the entropy and KL(q‖r) against Monte Carlo averages (5 standard errors, from the sample
//     variance), and KL against the Bregman divergence of A;
//   * KL(q‖q) = 0 and KL(q‖r) ≥ 0;
//   * the sample mean of T(x) equals μ within 5 standard errors;
//   * invalid λ and μ are rejected with blr::Error.
//
// Finite differences (derivation). For a smooth f evaluated with absolute error ≤ δ, the central
// difference D(h) = (f(x+h) − f(x−h)) / 2h has error h²|f‴|/6 + δ/h. We take h = ε^{1/3}·max(1,|x|)
// (ε = 2⁻⁵², the minimiser of that bound when f‴ and f are of order one), and bound the error by
// (a) the truncation term, estimated by Richardson: D(2h) − D(h) = h²f‴/2 + O(h⁴), so
//     |truncation of D(h)| ≈ |D(2h) − D(h)|/3, taken with a safety factor of 4 → 4/3·|D(2h) −
//     D(h)|,
// plus (b) the rounding term δ/h with δ = 64·ε·(1 + |f|) (a few ulps of every term of A or μ,
// with room for the cancellation inside log-partitions such as log Γ(α) + log Γ(β) − log Γ(α+β)).
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>
#include <vector>

#include "blr/core/rng.hpp"
#include "blr/family/families.hpp"
#include "stats.hpp"

namespace blr {
namespace {

using testing::RunningStats;

using testing::kEps;
constexpr int kMembers = 3;     // random members per family
constexpr long kDraws = 20000;  // Monte Carlo draws per check
constexpr double kStandardErrors = 5.0;

double uniform_in(Rng& rng, double lo, double hi) {
  return lo + (hi - lo) * rng.uniform();
}
Vector uniform_vector(Rng& rng, Index n, double lo, double hi) {
  Vector v(n);
  for (Index i = 0; i < n; ++i) v[i] = uniform_in(rng, lo, hi);
  return v;
}
Vector nan_vector(Index n) {
  return Vector::Constant(n, std::numeric_limits<double>::quiet_NaN());
}

// ---- one Case per family ---------------------------------------------------------------------
// make(rng): a random member, away from the boundary of Ω so that finite differences stay inside.
// invalid_naturals / invalid_expectations: parameters that must be rejected.
template <class F>
struct Case;

template <>
struct Case<GaussianFixed> {
  static GaussianFixed make(Rng& r) {
    return GaussianFixed(uniform_vector(r, 3, -2, 2), uniform_vector(r, 3, 0.5, 2.0));
  }
  static std::vector<Vector> invalid_naturals() { return {nan_vector(3)}; }
  static std::vector<Vector> invalid_expectations() { return {Vector{{1.0, INFINITY}}}; }
};

template <>
struct Case<GaussianDiag> {
  static GaussianDiag make(Rng& r) {
    return GaussianDiag(uniform_vector(r, 3, -2, 2), uniform_vector(r, 3, 0.5, 2.0));
  }
  static std::vector<Vector> invalid_naturals() {
    return {Vector{{1.0, 2.0, -0.5, 0.1}}, Vector{{1.0, 2.0, -0.5, 0.0}}, Vector{{1.0, -1.0, -1.0}},
            nan_vector(4)};
  }
  static std::vector<Vector> invalid_expectations() {
    return {Vector{{1.0, 0.5}} /* E[x²] < E[x]² */, Vector{{1.0, 2.0, 3.0}}};
  }
};

template <>
struct Case<GaussianFull> {
  static GaussianFull make(Rng& r) {
    const Index d = 3;
    Matrix a(d, d);
    for (Index i = 0; i < d * d; ++i) a.data()[i] = r.normal();
    const Matrix s = 0.3 * a * a.transpose() + Matrix::Identity(d, d);
    return GaussianFull(uniform_vector(r, d, -2, 2), s);
  }
  static std::vector<Vector> invalid_naturals() {
    // d = 2: λ = (Sm, −½S₀₀, −½S₁₁, −S₁₀). S = [[1, 2], [2, 1]] is indefinite.
    return {Vector{{0.0, 0.0, -0.5, -0.5, -2.0}}, Vector{{0.0, 0.0, 0.5, -0.5, 0.0}},
            Vector::Zero(4) /* no d has length 4 */, nan_vector(5)};
  }
  static std::vector<Vector> invalid_expectations() {
    // m = 0, E[xxᵀ] = [[1, 2], [2, 1]]: not a covariance.
    return {Vector{{0.0, 0.0, 1.0, 1.0, 2.0}}, Vector::Zero(6)};
  }
};

template <>
struct Case<Bernoulli> {
  static Bernoulli make(Rng& r) { return Bernoulli(uniform_vector(r, 4, -1.5, 1.5)); }
  static std::vector<Vector> invalid_naturals() {
    return {Vector{{0.0, INFINITY}}, Vector{{NAN, 1.0}}};
  }
  static std::vector<Vector> invalid_expectations() {
    return {Vector{{0.0, 1.0}}, Vector{{-1.0}}, Vector{{2.0}}};
  }
};

template <>
struct Case<Categorical> {
  static Categorical make(Rng& r) { return Categorical(uniform_vector(r, 3, -1.5, 1.5)); }
  static std::vector<Vector> invalid_naturals() {
    return {Vector{{0.0, -INFINITY}}, nan_vector(3)};
  }
  static std::vector<Vector> invalid_expectations() {
    return {Vector{{0.5, 0.6}} /* sums past 1 */, Vector{{0.0, 0.5}}, Vector{{-0.1, 0.5}}};
  }
};

template <>
struct Case<Beta> {
  static Beta make(Rng& r) { return Beta(uniform_in(r, 0.7, 4.0), uniform_in(r, 0.7, 4.0)); }
  static std::vector<Vector> invalid_naturals() {
    return {Vector{{-1.0, 2.0}}, Vector{{1.0, 0.0}}, Vector{{1.0, 2.0, 3.0}}, nan_vector(2)};
  }
  static std::vector<Vector> invalid_expectations() {
    return {Vector{{std::log(0.6), std::log(0.5)}} /* e^μ₁ + e^μ₂ > 1 */, Vector{{-1.0}}};
  }
};

template <>
struct Case<Gamma> {
  static Gamma make(Rng& r) { return Gamma(uniform_in(r, 0.7, 4.0), uniform_in(r, 0.5, 2.0)); }
  static std::vector<Vector> invalid_naturals() {
    return {Vector{{-1.5, -1.0}}, Vector{{0.0, 0.5}}, Vector{{0.0, 0.0}}, Vector{{1.0}}};
  }
  static std::vector<Vector> invalid_expectations() {
    return {Vector{{1.0, std::exp(0.5)}} /* E log x > log E x */, Vector{{0.0, -1.0}}};
  }
};

template <>
struct Case<Dirichlet> {
  static Dirichlet make(Rng& r) { return Dirichlet(uniform_vector(r, 4, 0.7, 4.0)); }
  static std::vector<Vector> invalid_naturals() {
    return {Vector{{1.0, -1.0, 2.0}}, Vector{{2.0}}, Vector{{1.0, 0.0}}, nan_vector(3)};
  }
  static std::vector<Vector> invalid_expectations() {
    return {Vector{{std::log(0.5), std::log(0.3), std::log(0.3)}}, Vector{{-1.0}}};
  }
};

// ---- the suite -------------------------------------------------------------------------------
using Families = ::testing::Types<GaussianFixed, GaussianDiag, GaussianFull, Bernoulli, Categorical,
                                  Beta, Gamma, Dirichlet>;

template <class F>
class FamilyInvariants : public ::testing::Test {
 protected:
  static_assert(ExponentialFamily<F>);
  std::vector<F> members(std::uint64_t seed) const {
    Rng rng(seed);
    std::vector<F> out;
    for (int i = 0; i < kMembers; ++i) out.push_back(Case<F>::make(rng));
    return out;
  }
};
TYPED_TEST_SUITE(FamilyInvariants, Families);

/// Largest |a_i − b_i| / (1 + |b_i|).
double relative_gap(const Vector& a, const Vector& b) {
  return ((a - b).array().abs() / (1.0 + b.array().abs())).maxCoeff();
}

TYPED_TEST(FamilyInvariants, NaturalAndExpectationRoundTrip) {
  using F = TypeParam;
  for (const F& q : this->members(1)) {
    const Vector lambda = q.natural();
    const Vector mu = q.expectation();
    ASSERT_EQ(lambda.size(), q.natural_size());
    ASSERT_EQ(mu.size(), q.natural_size());
    EXPECT_TRUE(F::natural_is_valid(lambda));
    EXPECT_LT(relative_gap(q.with_natural(lambda).natural(), lambda), 1e-12);
    EXPECT_LT(relative_gap(q.with_expectation(mu).natural(), lambda), 1e-9);
    EXPECT_LT(relative_gap(q.with_expectation(mu).expectation(), mu), 1e-11);
    // The static factories (which use the default for fixed parts) invert their own maps.
    EXPECT_LT(relative_gap(F::from_natural(lambda).natural(), lambda), 1e-12);
    EXPECT_LT(relative_gap(F::from_expectation(mu).expectation(), mu), 1e-11);
  }
}

/// Central difference of f along coordinate i at x, with the error bound of the file comment.
template <class Fn>
std::pair<Vector, Vector> central_difference(const Fn& f, const Vector& x, Index i) {
  const double h = std::cbrt(kEps) * std::max(1.0, std::abs(x[i]));
  auto diff = [&](double step) {
    Vector plus = x, minus = x;
    plus[i] += step;
    minus[i] -= step;
    const Vector fp = f(plus), fm = f(minus);
    return std::pair<Vector, Vector>{(fp - fm) / (2.0 * step),
                                     fp.cwiseAbs().cwiseMax(fm.cwiseAbs())};
  };
  const auto [d1, scale] = diff(h);
  const auto [d2, unused] = diff(2.0 * h);
  (void)unused;
  const Vector tol =
      (4.0 / 3.0) * (d2 - d1).cwiseAbs() + ((64.0 * kEps / h) * (1.0 + scale.array())).matrix();
  return {d1, tol};
}

TYPED_TEST(FamilyInvariants, GradientOfLogPartitionIsExpectation) {
  using F = TypeParam;
  for (const F& q : this->members(2)) {
    const Vector lambda = q.natural();
    const Vector mu = q.expectation();
    auto log_partition = [&](const Vector& l) {
      return Vector::Constant(1, q.with_natural(l).log_partition());
    };
    for (Index i = 0; i < lambda.size(); ++i) {
      const auto [d, tol] = central_difference(log_partition, lambda, i);
      EXPECT_NEAR(d[0], mu[i], tol[0]) << "coordinate " << i;
    }
  }
}

TYPED_TEST(FamilyInvariants, FisherIsSymmetricPositiveDefinite) {
  using F = TypeParam;
  for (const F& q : this->members(3)) {
    const Vector lambda = q.natural();
    const Index n = lambda.size();
    Matrix fisher(n, n), tol(n, n);
    auto expectation = [&](const Vector& l) { return q.with_natural(l).expectation(); };
    for (Index j = 0; j < n; ++j) {
      const auto [d, t] = central_difference(expectation, lambda, j);
      fisher.col(j) = d;
      tol.col(j) = t;
    }
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < i; ++j)
        EXPECT_NEAR(fisher(i, j), fisher(j, i), tol(i, j) + tol(j, i)) << "entry " << i << "," << j;
    const Matrix sym = 0.5 * (fisher + fisher.transpose());
    const double smallest = Eigen::SelfAdjointEigenSolver<Matrix>(sym).eigenvalues().minCoeff();
    // Positive beyond the finite-difference error (Weyl: eigenvalues move by ≤ ‖error‖₂ ≤ ‖·‖_F).
    EXPECT_GT(smallest, tol.norm());
  }
}

TYPED_TEST(FamilyInvariants, LogDensityIsExponentialFamilyForm) {
  using F = TypeParam;
  Rng rng(4);
  for (const F& q : this->members(4)) {
    const Vector lambda = q.natural();
    const double a = q.log_partition();
    for (int i = 0; i < 20; ++i) {
      const auto x = q.sample(rng);
      const double expected = lambda.dot(q.sufficient_statistic(x)) - a + q.log_base_measure(x);
      EXPECT_NEAR(q.log_density(x), expected, 1e-10 * (1.0 + std::abs(expected)));
    }
  }
}

TYPED_TEST(FamilyInvariants, EntropyMatchesMonteCarlo) {
  using F = TypeParam;
  Rng rng(5);
  for (const F& q : this->members(5)) {
    RunningStats neg_log_q;
    for (long i = 0; i < kDraws; ++i) neg_log_q.add(-q.log_density(q.sample(rng)));
    EXPECT_NEAR(neg_log_q.mean()[0], q.entropy(), kStandardErrors * neg_log_q.standard_error()[0]);
  }
}

TYPED_TEST(FamilyInvariants, KlMatchesMonteCarloAndBregman) {
  using F = TypeParam;
  Rng rng(6);
  for (const F& q : this->members(6)) {
    const F r = q.with_natural(Case<F>::make(rng).natural());  // same fixed parts as q
    const double kl = q.kl(r);
    RunningStats log_ratio;
    for (long i = 0; i < kDraws; ++i) {
      const auto x = q.sample(rng);
      log_ratio.add(q.log_density(x) - r.log_density(x));
    }
    EXPECT_NEAR(log_ratio.mean()[0], kl, kStandardErrors * log_ratio.standard_error()[0]);
    const double bregman =
        bregman_kl(q.log_partition(), r.log_partition(), q.natural(), r.natural(), q.expectation());
    EXPECT_NEAR(kl, bregman,
                1e-10 * (1.0 + std::abs(r.log_partition()) + std::abs(q.log_partition())));
  }
}

TYPED_TEST(FamilyInvariants, KlIsZeroOnItselfAndNonNegative) {
  using F = TypeParam;
  Rng rng(7);
  for (const F& q : this->members(7)) {
    EXPECT_NEAR(q.kl(q), 0.0, 1e-12 * (1.0 + std::abs(q.log_partition())));
    for (int i = 0; i < 10; ++i) {
      const F r = q.with_natural(Case<F>::make(rng).natural());
      EXPECT_GE(q.kl(r), 0.0);
      EXPECT_GE(r.kl(q), 0.0);
    }
  }
}

TYPED_TEST(FamilyInvariants, SampleMeanOfSufficientStatisticIsExpectation) {
  using F = TypeParam;
  Rng rng(8);
  for (const F& q : this->members(8)) {
    RunningStats t;
    for (long i = 0; i < kDraws; ++i) t.add(q.sufficient_statistic(q.sample(rng)));
    const Vector mu = q.expectation();
    for (Index i = 0; i < mu.size(); ++i) {
      EXPECT_NEAR(t.mean()[i], mu[i], kStandardErrors * t.standard_error()[i])
          << "coordinate " << i;
    }
  }
}

TYPED_TEST(FamilyInvariants, InvalidParametersAreRejected) {
  using F = TypeParam;
  for (const Vector& lambda : Case<F>::invalid_naturals()) {
    EXPECT_FALSE(F::natural_is_valid(lambda)) << lambda.transpose();
    EXPECT_THROW(F::from_natural(lambda), Error) << lambda.transpose();
  }
  for (const Vector& mu : Case<F>::invalid_expectations()) {
    EXPECT_THROW(F::from_expectation(mu), Error) << mu.transpose();
  }
}

TYPED_TEST(FamilyInvariants, ErrorMessagesNameTheFamily) {
  using F = TypeParam;
  const Vector lambda = Case<F>::invalid_naturals().front();
  try {
    (void)F::from_natural(lambda);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_FALSE(what.empty());
    EXPECT_EQ(what.back(), '.') << what;  // a sentence
  }
}

}  // namespace
}  // namespace blr
