// Shared checks for the loss tests: derivatives against central finite differences, with the
// tolerance derived from the finite-difference error estimate (model/finite_difference.hpp), and
// the identities that tie the capabilities of a loss together.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "blr/model/finite_difference.hpp"
#include "blr/model/loss.hpp"

namespace blr::testing {

/// Allowed deviation from a finite-difference estimate: 10× its estimated error (the estimate is
/// of the right size, not a bound), plus 1e-13 relative to the entry for rounding in the analytic
/// value itself.
inline double fd_tolerance(double fd_error, double value) {
  return 10.0 * fd_error + 1e-13 * std::abs(value);
}

/// Relative agreement of two vectors computed by different but exact formulas.
inline double relative_gap(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const double scale = std::max({1.0, a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff()});
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

template <HasGradient L>
void expect_gradient_matches(const L& f, const Vector& theta, const std::string& what) {
  const auto fd = numeric_gradient(f, theta);
  const Vector g = f.gradient(theta);
  ASSERT_EQ(g.size(), theta.size()) << what;
  for (Index j = 0; j < g.size(); ++j) {
    EXPECT_NEAR(g[j], fd.value[j], fd_tolerance(fd.error[j], g[j]))
        << what << ": gradient entry " << j;
  }
  Vector g2;
  const double v = value_and_gradient(f, theta, g2);
  EXPECT_LE(relative_gap(g, g2), 1e-14) << what << ": value_and_gradient";
  EXPECT_NEAR(v, f.value(theta), 1e-14 * std::max(1.0, std::abs(v))) << what;
}

template <HasHessian L>
void expect_hessian_matches(const L& f, const Vector& theta, const std::string& what) {
  const auto fd = numeric_hessian(f, theta);
  const Matrix h = f.hessian(theta);
  ASSERT_EQ(h.rows(), theta.size()) << what;
  ASSERT_EQ(h.cols(), theta.size()) << what;
  EXPECT_LE(relative_gap(h, h.transpose()), 1e-14) << what << ": Hessian not symmetric";
  for (Index i = 0; i < h.rows(); ++i) {
    for (Index j = 0; j < h.cols(); ++j) {
      EXPECT_NEAR(h(i, j), fd.value(i, j), fd_tolerance(fd.error(i, j), h(i, j)))
          << what << ": Hessian entry (" << i << ", " << j << ")";
    }
  }
}

/// diag, Hessian-vector products and per-example gradients agree with the dense Hessian and the
/// gradient.
template <HasHessian L>
void expect_consistent(const L& f, const Vector& theta, const Vector& v, const std::string& what) {
  const Matrix h = f.hessian(theta);
  if constexpr (HasDiagonalHessian<L>) {
    EXPECT_LE(relative_gap(f.hessian_diagonal(theta), h.diagonal()), 1e-12) << what;
  }
  if constexpr (HasHessianVectorProduct<L>) {
    EXPECT_LE(relative_gap(f.hessian_vector_product(theta, v), h * v), 1e-12) << what;
  }
  if constexpr (HasPerExampleGradients<L>) {
    const Matrix rows = f.per_example_gradients(theta);
    const Vector sum =
        f.example_scale() * rows.colwise().sum().transpose() + f.regularizer_gradient(theta);
    EXPECT_LE(relative_gap(sum, f.gradient(theta)), 1e-12) << what << ": per-example gradients";
  }
}

}  // namespace blr::testing
