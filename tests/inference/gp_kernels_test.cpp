// Kernels (kernels.hpp): values against the formulas written out per entry, gradients in
// (log ℓ, log σ²) against central differences, rbf_kernel as a thin call, positive
// definiteness, and bad options. The kernel algebra: sums and products with ARD, linear, white and
// constant against their definitions entry by entry, every gradient of an expression against
// central differences, the parser and its errors, and the GP evidence and its gradient on three
// kernel expressions against scikit-learn 1.2.1 (bench/gp_kernels_vs_sklearn.py prints them).
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>

#include "blr/core/error.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/gp_hyperparameters.hpp"
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
    default:
      return 0;
  }
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
    EXPECT_EQ(k.diagonal(x), Vector::Constant(x.rows(), 2.5));
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

// ---- the kernel algebra ---------------------------------------------------------------------------

/// 3-D inputs for the algebra's tests.
Matrix points3() {
  Matrix x(6, 3);
  x << 0.0, 0.1, -0.2, 0.4, -0.5, 0.3, 1.0, 2.0, 0.5, -1.5, 0.5, 0.0, 0.3, -0.4, 1.2, 0.7, 0.9, -0.6;
  return x;
}

TEST(GpKernelAlgebra, SumsProductsAndArdEqualTheirDefinitions) {
  const Matrix x = points3(), z = points3().topRows(4) * 0.5;
  const Vector ell = (Vector(3) << 0.7, 1.4, 2.1).finished();
  const Kernel k = Kernel::parse("rbf(v=1.5)*linear(v=0.4)+matern32(l=0.9,v=0.6)+white(v=0.05)+"
                                 "constant(v=0.3)")
                       .with_ard(3);
  ASSERT_EQ(k.expression(), "rbf*linear+matern32+white+constant");
  // with_ard copies each factor's ℓ to every column; set rbf's to (0.7, 1.4, 2.1).
  Vector theta = k.log_parameters();
  ASSERT_EQ(theta.size(), 3 + 1 + 1 + 3 + 1 + 1 + 1);
  theta.head(3) = ell.array().log().matrix();
  const Kernel kk = k.with_log_parameters(theta);
  for (const bool same : {true, false}) {
    const Matrix& b = same ? x : z;
    const Matrix m = same ? kk.matrix(x) : kk.matrix(x, z);
    for (Index i = 0; i < x.rows(); ++i)
      for (Index j = 0; j < b.rows(); ++j) {
        const Vector d = x.row(i) - b.row(j);
        const double r_ard = d.cwiseQuotient(ell).norm();
        const double r_m32 = d.norm() / 0.9;
        const double rbf = 1.5 * std::exp(-0.5 * r_ard * r_ard);
        const double linear = 0.4 * x.row(i).dot(b.row(j));
        const double m32 = 0.6 * (1 + std::sqrt(3.0) * r_m32) * std::exp(-std::sqrt(3.0) * r_m32);
        const double white = same && i == j ? 0.05 : 0.0;
        EXPECT_NEAR(m(i, j), rbf * linear + m32 + white + 0.3, 1e-13) << i << "," << j;
      }
  }
  const Vector diag = kk.diagonal(x);
  for (Index i = 0; i < x.rows(); ++i)
    EXPECT_NEAR(diag[i], 1.5 * 0.4 * x.row(i).squaredNorm() + 0.6 + 0.05 + 0.3, 1e-13);
  EXPECT_LT((kk.matrix(x).diagonal() - diag).cwiseAbs().maxCoeff(), 1e-13);
  // Positive definite on distinct points (white adds 0.05 I).
  EXPECT_EQ(Eigen::LLT<Matrix>(kk.matrix(x)).info(), Eigen::Success);
  // The operators build the same kernel as the expression.
  const Kernel built =
      Kernel(KernelKind::rbf, 1.0, 1.5) * Kernel(KernelKind::linear, 1.0, 0.4) +
      Kernel(KernelKind::matern32, 0.9, 0.6) + Kernel(KernelKind::white, 1.0, 0.05) +
      Kernel(KernelKind::constant, 1.0, 0.3);
  EXPECT_EQ(built.with_ard(3).log_parameters(), k.log_parameters());
}

TEST(GpKernelAlgebra, EveryGradientEqualsCentralDifferences) {
  const Matrix x = points3();
  const Kernel k =
      Kernel::parse("rbf(l=0.8,v=1.3)*linear(v=0.5)+matern52(l=1.1,v=0.7)*matern32(l=0.6)+"
                    "white(v=0.1)+constant(v=0.2)")
          .with_ard(3);
  const auto g = k.gradients(x);
  const Vector theta0 = k.log_parameters();
  ASSERT_EQ(g.size(), static_cast<size_t>(theta0.size()));
  const auto names = k.parameter_names();
  ASSERT_EQ(names.size(), g.size());
  for (Index p = 0; p < theta0.size(); ++p)
    for (Index i = 0; i < x.rows(); ++i)
      for (Index j = 0; j < x.rows(); ++j) {
        const auto f = [&](double t) {
          Vector theta = theta0;
          theta[p] = t;
          return k.with_log_parameters(theta).matrix(x)(i, j);
        };
        // Entries are O(1) sums of O(1) products, each to ~1e-15.
        const auto d = testing::central_difference(f, theta0[p], 1e-4, 1e-15);
        EXPECT_NEAR(g[static_cast<size_t>(p)](i, j), d.derivative, d.error_bound)
            << names[static_cast<size_t>(p)] << " entry " << i << "," << j;
      }
}

TEST(GpKernelAlgebra, ParserNamesAndErrors) {
  const Kernel k = Kernel::parse(" rbf ( l = 2 , v=3 ) * rbf + white ", 0.5, 0.25);
  EXPECT_EQ(k.expression(), "rbf*rbf+white");
  EXPECT_EQ(k.parameter_names(),
            (std::vector<std::string>{"rbf#1.lengthscale", "rbf#1.variance", "rbf#2.lengthscale",
                                      "rbf#2.variance", "white.variance"}));
  EXPECT_EQ(k.parameters(), (Vector(5) << 2, 3, 0.5, 0.25, 0.25).finished());
  EXPECT_EQ(Kernel::parse("matern52").with_ard(2).parameter_names(),
            (std::vector<std::string>{"matern52.lengthscale[0]", "matern52.lengthscale[1]",
                                      "matern52.variance"}));
  EXPECT_TRUE(Kernel::parse("rbf").is_single());
  EXPECT_FALSE(Kernel::parse("rbf").with_ard(2).is_single());
  EXPECT_NE(k.describe().find("rbf(ℓ=2, σ²=3)"), std::string::npos) << k.describe();
  for (const std::string bad : {"cubic", "rbf+", "rbf(l=1", "rbf(q=1)", "linear(l=1)", "rbf(l=)",
                                "rbf(l=1e400)", "rbf**white", "(rbf+white)*linear", "rbf white",
                                ""}) {
    try {
      Kernel::parse(bad).validate();
      ADD_FAILURE() << "'" << bad << "' parsed";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.back(), '.') << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  }
  EXPECT_THROW(Kernel::parse("rbf(l=0)").validate(), Error);
  EXPECT_THROW(Kernel::parse("rbf").with_ard(2).matrix(points3()), Error);  // 2 ℓ, 3 columns
  EXPECT_THROW(Kernel::parse("linear").lengthscale(), Error);
  EXPECT_THROW(Kernel::parse("rbf+white").variance(), Error);
  EXPECT_THROW((Kernel::parse("rbf+white") * Kernel::parse("linear")), Error);
}

// The data of bench/gp_kernels_vs_sklearn.py: x_i = (sin 0.7i, cos 1.3i, 0.1i − 1), i = 0..19.
struct SklearnData {
  Matrix x;
  Vector y, labels;
};
SklearnData sklearn_data() {
  SklearnData d{Matrix(20, 3), Vector(20), Vector(20)};
  for (Index i = 0; i < 20; ++i) {
    const double t = static_cast<double>(i);
    d.x.row(i) << std::sin(0.7 * t), std::cos(1.3 * t), 0.1 * t - 1.0;
    d.y[i] = std::sin(2 * d.x(i, 0)) + 0.5 * d.x(i, 1) + 0.1 * std::cos(5 * t);
    d.labels[i] = std::sin(2 * d.x(i, 0)) + d.x(i, 1) > 0 ? 1.0 : 0.0;
  }
  return d;
}

TEST(GpKernelAlgebra, EvidenceEqualsScikitLearn) {
  // scikit-learn 1.2.1 (Debian python3-sklearn), bench/gp_kernels_vs_sklearn.py; 15 digits
  // printed. Our evidence is a Cholesky of a 20×20 matrix with condition ≲ 1e3 and sums of 20
  // logs: agreement to ~1e-12 relative; 1e-9 absolute leaves room for the two Cholesky routines.
  const SklearnData d = sklearn_data();
  {
    Kernel k = Kernel::parse("rbf(v=1.5)+white(v=0.05)").with_ard(3);
    Vector theta = k.log_parameters();
    theta.head(3) << std::log(0.8), std::log(1.3), std::log(2.0);
    k = k.with_log_parameters(theta);
    const GpEvidence e = gp_regression_evidence(k, 0.1, d.x, d.y);
    EXPECT_NEAR(e.value, -13.9617938736409, 1e-9);
    const double expected[] = {2.50699583802508, 3.62019683503169, 3.01885475528223,
                               -3.46785267137222, -1.54066604481465};
    ASSERT_EQ(e.gradient.size(), 6);  // and the noise's
    for (Index p = 0; p < 5; ++p) EXPECT_NEAR(e.gradient[p], expected[p], 1e-9) << p;
  }
  {
    const Kernel k = Kernel::parse("matern52(l=1.2,v=0.7)*linear(v=0.4)+constant(v=0.3)");
    const GpEvidence e = gp_regression_evidence(k, 0.2, d.x, d.y);
    EXPECT_NEAR(e.value, -17.7691843837129, 1e-9);
    const double expected[] = {5.70072370309682, 1.01917943727893, 1.01917943727893,
                               -0.434378654232177};
    for (Index p = 0; p < 4; ++p) EXPECT_NEAR(e.gradient[p], expected[p], 1e-9) << p;
  }
  {
    Kernel k = Kernel::parse("rbf(v=2)+linear(v=0.2)").with_ard(3);
    Vector theta = k.log_parameters();
    theta.head(3) << std::log(0.9), std::log(1.1), std::log(1.7);
    k = k.with_log_parameters(theta);
    GpLaplaceOptions tight;
    tight.tolerance = 1e-12;
    const GpEvidence e = gp_laplace_evidence(k, d.x, d.labels, Likelihood::logistic, tight);
    // scikit-learn's Newton stops at a change of the log evidence below 1e-10 (its default), so
    // its mode, and the evidence at it, differ from ours at the mode to 1e-12 by up to ~1e-10.
    EXPECT_NEAR(e.value, -10.3359524599989, 1e-8);
    const double expected[] = {-0.322246515137368, 0.190727882861164, 0.249199188481779,
                               0.679603701071521, 0.385317950015205};
    for (Index p = 0; p < 5; ++p) EXPECT_NEAR(e.gradient[p], expected[p], 1e-6) << p;
  }
}

TEST(GpKernelAlgebra, LearningAnArdKernelRaisesTheEvidenceToAStationaryPoint) {
  const SklearnData d = sklearn_data();
  const Kernel start = Kernel::parse("rbf+white(v=0.1)").with_ard(3);
  const GpLearned r = learn_gpr_kernel(start, 0.1, d.x, d.y);
  EXPECT_TRUE(r.converged) << r.stop;
  EXPECT_GT(r.value, r.initial_value);
  EXPECT_LE(r.gradient.cwiseAbs().maxCoeff(), 1e-5);
  EXPECT_EQ(r.kernel.expression(), "rbf+white");
  EXPECT_EQ(r.log_parameters.size(), 3 + 1 + 1 + 1);
  EXPECT_NEAR(gp_regression_evidence(r.kernel, r.noise_variance, d.x, d.y).value, r.value,
              1e-12 * std::abs(r.value));
}

}  // namespace
}  // namespace blr::inference
