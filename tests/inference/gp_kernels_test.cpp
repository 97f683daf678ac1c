// Kernels (kernels.hpp): values against the formulas written out per entry, gradients in
// (log ℓ, log σ²) against central differences, rbf_kernel as a thin call, positive
// definiteness, and bad options.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>

#include "blr/core/error.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/kernels.hpp"
#include "inference/gp_testing.hpp"

namespace blr::inference {
namespace {

/// k(r) by the textbook formulas (GPML eqs. 4.9, 4.17), one pair at a time.
double plain_kernel(KernelKind kind, double r, double l, double s2) {
  switch (kind) {
    case KernelKind::rbf:
      return s2 * std::exp(-r * r / (2 * l * l));
    case KernelKind::matern32: {
      const double s = std::sqrt(3.0) * r / l;
      return s2 * (1 + s) * std::exp(-s);
    }
    case KernelKind::matern52: {
      const double s = std::sqrt(5.0) * r / l;
      return s2 * (1 + s + s * s / 3) * std::exp(-s);
    }
  }
  return 0;
}

Matrix points() {
  Matrix x(5, 2);
  x << 0.0, 0.0, 0.3, -0.4, 1.0, 2.0, -1.5, 0.5, 0.3, -0.41;
  return x;
}

const KernelKind kKinds[] = {KernelKind::rbf, KernelKind::matern32, KernelKind::matern52};

TEST(GpKernel, ValuesEqualTheFormulas) {
  const Matrix x = points();
  for (KernelKind kind : kKinds) {
    const Kernel k{kind, 0.7, 2.5};
    const Matrix m = k.matrix(x, x);
    for (Index i = 0; i < x.rows(); ++i)
      for (Index j = 0; j < x.rows(); ++j) {
        const double r = (x.row(i) - x.row(j)).norm();
        // The matrix uses |a|² + |b|² − 2aᵀb; cancellation costs ~1e-16·|x|² in r², i.e. relative
        // 1e-15 in k for these sizes.
        EXPECT_NEAR(m(i, j), plain_kernel(kind, r, 0.7, 2.5), 1e-13) << to_string(kind);
      }
    EXPECT_EQ(k.diagonal(3), Vector::Constant(3, 2.5));
    // Positive definite on distinct points.
    EXPECT_EQ(Eigen::LLT<Matrix>(m).info(), Eigen::Success) << to_string(kind);
  }
}

TEST(GpKernel, RbfKernelIsTheKernelClass) {
  const Matrix x = points();
  EXPECT_EQ(rbf_kernel(x, x.topRows(2), 0.5, 4.0),
            (Kernel{KernelKind::rbf, 0.5, 4.0}.matrix(x, x.topRows(2))));
}

TEST(GpKernel, GradientsEqualCentralDifferences) {
  const Matrix x = points();
  for (KernelKind kind : kKinds) {
    const Kernel k{kind, 0.8, 1.7};
    const auto g = k.gradients(x);
    for (int p = 0; p < 2; ++p)
      for (Index i = 0; i < x.rows(); ++i)
        for (Index j = 0; j < x.rows(); ++j) {
          const auto f = [&](double t) {
            Vector theta = k.log_parameters();
            theta[p] = t;
            return Kernel::from_log_parameters(kind, theta).matrix(x, x)(i, j);
          };
          // Entries are O(1); each is computed to ~1e-15 (see above).
          const auto d = testing::central_difference(f, k.log_parameters()[p], 1e-4, 1e-15);
          EXPECT_NEAR(g[p](i, j), d.derivative, d.error_bound)
              << to_string(kind) << " parameter " << p << " entry " << i << "," << j;
        }
  }
}

TEST(GpKernel, BadOptionsAreOneSentence) {
  const auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string l = message([] { Kernel{KernelKind::rbf, 0.0, 1.0}.validate(); });
  EXPECT_NE(l.find("lengthscale"), std::string::npos) << l;
  const std::string v = message([] {
    Kernel{KernelKind::matern32, 1.0, -2.0}.matrix(points(), points());
  });
  EXPECT_NE(v.find("variance"), std::string::npos) << v;
  const std::string n = message([] { parse_kernel("cubic"); });
  EXPECT_NE(n.find("matern52"), std::string::npos) << n;
  for (const auto& m : {l, v, n}) {
    EXPECT_EQ(m.back(), '.') << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_EQ(parse_kernel("matern32"), KernelKind::matern32);
  EXPECT_THROW(Kernel{}.matrix(Matrix::Zero(2, 2), Matrix::Zero(2, 3)), Error);
}

}  // namespace
}  // namespace blr::inference
