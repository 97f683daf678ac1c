// The system-BLAS products (blr/core/blas.hpp) against Eigen's, and the threshold that keeps small
// problems on Eigen's rounding.
//
// Tolerance: both sides compute each entry as a dot product of length k in double precision, each
// within γ_k·Σ|a_i||b_i| of the exact value (Higham, Accuracy and Stability, eq. 3.5,
// γ_k = ku/(1−ku), u = 2⁻⁵³), so they differ by at most 2γ_k·(|A||B|) entry by entry.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "blr/core/blas.hpp"
#include "blr/core/rng.hpp"
#include "blr/inference/glm.hpp"

namespace blr {
namespace {

Matrix random_matrix(Index rows, Index cols, uint64_t seed) {
  Rng rng(seed);
  Matrix m(rows, cols);
  for (Index j = 0; j < cols; ++j)
    for (Index i = 0; i < rows; ++i) m(i, j) = rng.normal();
  return m;
}

double gamma(Index k) {
  const double u = std::numeric_limits<double>::epsilon() / 2;
  return k * u / (1 - k * u);
}

/// Entry by entry, |x − y| ≤ 2γ_k·bound.
void expect_within_rounding(const Matrix& x, const Matrix& y, const Matrix& bound, Index k) {
  ASSERT_EQ(x.rows(), y.rows());
  ASSERT_EQ(x.cols(), y.cols());
  for (Index j = 0; j < x.cols(); ++j)
    for (Index i = 0; i < x.rows(); ++i)
      EXPECT_LE(std::abs(x(i, j) - y(i, j)), 2 * gamma(k) * bound(i, j)) << i << "," << j;
}

TEST(Blas, GramEqualsTheProductWithinRounding) {
  const Matrix a = random_matrix(3001, 37, 1);
  Matrix g = Matrix::Zero(37, 37);
  blas_gram_accumulate(a, g);
  g.triangularView<Eigen::StrictlyUpper>() = g.transpose();  // the lower triangle, compared whole
  expect_within_rounding(g, a.transpose() * a, a.cwiseAbs().transpose() * a.cwiseAbs(), a.rows());
}

TEST(Blas, MultiplyTakesBlocksWithAnOuterStride) {
  const Matrix a = random_matrix(50, 40, 2), b = random_matrix(30, 20, 3);
  Matrix c = Matrix::Constant(60, 25, 7.0);
  // A's rows 5..34 (stride 50), B's columns 3..17 of rows 0..19 (stride 30), into a block of C.
  blas_multiply(a.block(5, 2, 30, 20), b.block(0, 3, 20, 15), c.block(10, 4, 30, 15));
  const Matrix expected = a.block(5, 2, 30, 20) * b.block(0, 3, 20, 15);
  expect_within_rounding(c.block(10, 4, 30, 15), expected,
                         a.block(5, 2, 30, 20).cwiseAbs() * b.block(0, 3, 20, 15).cwiseAbs(), 20);
  Matrix outside = c;
  outside.block(10, 4, 30, 15).setConstant(7.0);
  EXPECT_EQ(outside, Matrix::Constant(60, 25, 7.0)) << "entries outside C's block are untouched";
}

TEST(Blas, GramAccumulatesBlocksIntoTheLowerTriangle) {
  const Matrix a = random_matrix(500, 12, 8);
  Matrix c = Matrix::Constant(12, 12, 3.0);
  blas_gram_accumulate(a.topRows(200), c);
  blas_gram_accumulate(a.bottomRows(300), c);
  const Matrix expected = (a.transpose() * a).array() + 3.0;
  const Matrix bound = (a.cwiseAbs().transpose() * a.cwiseAbs()).array() + 3.0;
  for (Index j = 0; j < 12; ++j) {
    for (Index i = 0; i < 12; ++i) {
      if (i < j)
        EXPECT_EQ(c(i, j), 3.0) << "the strict upper triangle is left alone";
      else
        EXPECT_LE(std::abs(c(i, j) - expected(i, j)), 2 * gamma(501) * bound(i, j));
    }
  }
  Matrix wrong(11, 12);
  EXPECT_THROW(blas_gram_accumulate(a, wrong), std::exception);
}

TEST(Blas, EmptyInnerDimensionGivesZeros) {
  Matrix c = Matrix::Constant(3, 4, 1.0);
  blas_multiply(Matrix(3, 0), Matrix(0, 4), c);
  EXPECT_EQ(c, Matrix::Zero(3, 4));
  Matrix none(0, 0), zero = Matrix::Zero(3, 3);
  blas_gram_accumulate(Matrix(5, 0), none);
  blas_gram_accumulate(Matrix(0, 3), zero);
  EXPECT_EQ(zero, Matrix::Zero(3, 3));
}

TEST(Blas, MismatchedShapesAreRefused) {
  Matrix c(3, 3);
  EXPECT_THROW(blas_multiply(Matrix(3, 2), Matrix(3, 3), c), std::exception);
}

TEST(Blas, ThresholdKeepsSmallProblemsOnEigen) {
  // Pima (768 rows, 8 features and the intercept) stays below; a 10⁵ × 50 design goes above.
  EXPECT_FALSE(blas_worthwhile(9, 9, 768));
  EXPECT_TRUE(blas_worthwhile(50, 50, 100000));
  const Matrix x = random_matrix(768, 9, 4);
  Vector w = random_matrix(768, 1, 5).col(0).cwiseAbs();
  const Matrix wx = w.asDiagonal() * x;
  Matrix eigen(9, 9);
  eigen.triangularView<Eigen::Lower>() = wx.transpose() * x;
  eigen.triangularView<Eigen::StrictlyUpper>() = eigen.transpose();
  EXPECT_EQ(inference::weighted_gram(x, w), eigen) << "bit for bit below the threshold";
}

TEST(Blas, WeightedGramAboveTheThreshold) {
  const Matrix x = random_matrix(9000, 40, 6);  // 1.4·10⁷ multiply-adds, three blocks of rows
  ASSERT_TRUE(blas_worthwhile(40, 40, 9000));
  const Vector w = random_matrix(9000, 1, 7).col(0).cwiseAbs();
  const Matrix exact = x.transpose() * w.asDiagonal() * x;
  const Matrix bound = x.cwiseAbs().transpose() * w.asDiagonal() * x.cwiseAbs();
  // Each term √w_i·x_ia·√w_i·x_ib carries five roundings before the sum (two square roots, two
  // scalings, the product) and Eigen's w_i·x_ia·x_ib two: within γ_{k+5} + γ_{k+2} ≤ 2γ_{k+5}.
  const Matrix g = inference::weighted_gram(x, w);
  EXPECT_EQ(g, g.transpose()) << "the mirrored triangle is exactly symmetric";
  expect_within_rounding(g, exact, bound, 9000 + 5);
  // Weights of both signs stay on Eigen's triangle (no square root of a negative weight).
  Vector signed_w = w;
  signed_w.head(100) *= -1;
  const Matrix s = inference::weighted_gram(x, signed_w);
  expect_within_rounding(s, x.transpose() * signed_w.asDiagonal() * x,
                         x.cwiseAbs().transpose() * signed_w.cwiseAbs().asDiagonal() * x.cwiseAbs(),
                         9000);
}

}  // namespace
}  // namespace blr
