#include <gtest/gtest.h>

#include <cmath>

#include "blr/core/cholesky.hpp"
#include "blr/core/rng.hpp"

namespace blr {
namespace {

TEST(Rng, SaveAndLoadResumeTheSameStream) {
  Rng a(42);
  for (int i = 0; i < 7; ++i) a.normal();  // odd count: a cached draw is pending
  const std::string state = a.save();
  Rng b(1);
  b.load(state);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a.normal(), b.normal());
  EXPECT_EQ(a.uniform(), b.uniform());
}

TEST(Rng, NormalMomentsWithinStandardErrors) {
  Rng rng(7);
  const int n = 200000;
  double s1 = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = rng.normal();
    s1 += x;
    s2 += x * x;
  }
  // mean has s.e. 1/sqrt(n); E[x²] = 1 with s.e. sqrt(2/n); 5 standard errors.
  EXPECT_NEAR(s1 / n, 0.0, 5.0 / std::sqrt(n));
  EXPECT_NEAR(s2 / n, 1.0, 5.0 * std::sqrt(2.0 / n));
}

TEST(Rng, MalformedStateIsRejected) {
  Rng rng(0);
  EXPECT_THROW(rng.load("not a state"), Error);
}

TEST(Cholesky, RankOneUpdateEqualsRefactorisation) {
  Rng rng(3);
  const Index d = 12;
  Matrix a(d, d);
  for (Index i = 0; i < d * d; ++i) a.data()[i] = rng.normal();
  const Matrix s = a * a.transpose() + Matrix::Identity(d, d);
  CholeskyFactor f = CholeskyFactor::from_matrix(s);
  const Vector v = rng.normal_vector(d);
  f.scale(0.7);
  f.rank_one_update(v);
  const Matrix expected = 0.7 * s + v * v.transpose();
  EXPECT_LT((f.matrix() - expected).cwiseAbs().maxCoeff(), 1e-11 * expected.cwiseAbs().maxCoeff());
  const Vector b = rng.normal_vector(d);
  EXPECT_LT((expected * f.solve(b) - b).norm(), 1e-10 * b.norm() * expected.norm());
}

TEST(Cholesky, IndefiniteMatrixIsRejected) {
  Matrix s(2, 2);
  s << 1, 2, 2, 1;
  EXPECT_THROW(CholeskyFactor::from_matrix(s), Error);
}

}  // namespace
}  // namespace blr
