// GP regression evidence (gp_regression.hpp) against N(y | 0, K + σₙ²I) written out; evidence and
// ELBO gradients against central differences; learned hyperparameters (gp_hyperparameters.hpp)
// raise the evidence and stop at a stationary point that is a local maximum; bad options.
#include <gtest/gtest.h>

#include <Eigen/LU>

#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/inference/gp_hyperparameters.hpp"
#include "blr/inference/gp_regression.hpp"
#include "inference/gp_testing.hpp"

namespace blr::inference {
namespace {

using testing::central_difference;
using testing::load_synth;

/// y = sin(3x) + N(0, 0.1²) at 40 inputs in [−2, 2], seed 7.
void regression_data(Matrix& x, Vector& y) {
  Rng rng(7);
  const Index n = 40;
  x.resize(n, 1);
  y.resize(n);
  for (Index i = 0; i < n; ++i) {
    x(i, 0) = -2 + 4 * rng.uniform();
    y[i] = std::sin(3 * x(i, 0)) + 0.1 * rng.normal();
  }
}

TEST(GpRegression, EvidenceIsTheGaussianDensityOfY) {
  Matrix x;
  Vector y;
  regression_data(x, y);
  for (KernelKind kind : {KernelKind::rbf, KernelKind::matern32}) {
    const Kernel kern{kind, 0.7, 1.3};
    const double noise = 0.05;
    const GprResult r = gp_regression(kern.matrix(x, x), y, noise);
    // log N(y | 0, C) = −½ yᵀC⁻¹y − ½ log det C − (n/2) log 2π with a dense inverse and
    // determinant.
    Matrix c = kern.matrix(x, x);
    c.diagonal().array() += noise;
    const double n = static_cast<double>(y.size());
    const double direct = -0.5 * y.dot(c.inverse() * y) - 0.5 * std::log(c.determinant()) -
                          0.5 * n * std::log(2 * std::numbers::pi);
    // cond(C) ≤ 1 + nσ²/σₙ² ≈ 1000: the dense inverse loses ~1e-13 relative.
    EXPECT_NEAR(r.log_marginal_likelihood, direct, 1e-10 * std::abs(direct)) << to_string(kind);
  }
}

TEST(GpRegression, EvidenceGradientEqualsCentralDifferences) {
  Matrix x;
  Vector y;
  regression_data(x, y);
  for (KernelKind kind : {KernelKind::rbf, KernelKind::matern32, KernelKind::matern52}) {
    Vector theta(3);
    theta << std::log(0.7), std::log(1.3), std::log(0.05);
    const auto at = [&](const Vector& t) {
      return gp_regression_evidence(Kernel::from_log_parameters(kind, t.head(2)), std::exp(t[2]), x,
                                    y);
    };
    const GpEvidence e = at(theta);
    for (Index p = 0; p < 3; ++p) {
      const auto value = [&](double v) {
        Vector t = theta;
        t[p] = v;
        return at(t).value;
      };
      // A closed form from one Cholesky: |log p| ~ 10, accurate to ~1e-13.
      const auto fd = central_difference(value, theta[p], 1e-3, 1e-12);
      EXPECT_NEAR(e.gradient[p], fd.derivative, fd.error_bound) << to_string(kind) << " " << p;
    }
  }
}

TEST(GpCviHyper, ElboGradientEqualsCentralDifferences) {
  const auto d = load_synth(8);
  CviOptions o;
  o.tolerance = 1e-13;
  o.max_iterations = 5000;
  for (KernelKind kind : {KernelKind::rbf, KernelKind::matern32}) {
    const Kernel kern{kind, 0.6, 1.5};
    const GpEvidence e = gp_cvi_evidence(kern, d.x_train, d.y_train, Likelihood::logistic, o);
    for (Index p = 0; p < 2; ++p) {
      const auto value = [&](double t) {
        Vector theta = kern.log_parameters();
        theta[p] = t;
        return gp_cvi_evidence(Kernel::from_log_parameters(kind, theta), d.x_train, d.y_train,
                               Likelihood::logistic, o)
            .value;
      };
      // The ELBO is stationary in the sites, so a site error δ ≤ 1e-13 costs O(δ²); the bound
      // is the rounding of a sum of ~30 O(1) terms and a log-determinant, ~1e-12.
      const auto fd = central_difference(value, kern.log_parameters()[p], 1e-3, 1e-12);
      EXPECT_NEAR(e.gradient[p], fd.derivative, fd.error_bound)
          << to_string(kind) << " parameter " << p;
    }
  }
}

/// The learned point is a stationary point and a local maximum: moving any log-parameter by ±0.05
/// lowers the objective.
void expect_local_maximum(const std::function<double(const Vector&)>& value, const GpLearned& r) {
  EXPECT_TRUE(r.converged) << r.stop;
  EXPECT_LE(r.gradient.cwiseAbs().maxCoeff(), 1e-5);
  EXPECT_GT(r.value, r.initial_value);
  EXPECT_NEAR(value(r.log_parameters), r.value, 1e-9 * std::abs(r.value));
  for (Index p = 0; p < r.log_parameters.size(); ++p)
    for (double s : {-0.05, 0.05}) {
      Vector t = r.log_parameters;
      t[p] += s;
      EXPECT_LT(value(t), r.value) << "parameter " << p << " shifted by " << s;
    }
}

TEST(GpLaplaceHyper, LearnedKernelMaximisesTheEvidence) {
  const auto d = load_synth();
  for (KernelKind kind : {KernelKind::rbf, KernelKind::matern52}) {
    const GpLearned r = learn_gpc_kernel(Kernel{kind, 1.0, 1.0}, d.x_train, d.y_train,
                                         Likelihood::logistic, GpcMethod::laplace);
    expect_local_maximum(
        [&](const Vector& t) {
          return gp_laplace_evidence(Kernel::from_log_parameters(kind, t), d.x_train, d.y_train,
                                     Likelihood::logistic)
              .value;
        },
        r);
    EXPECT_EQ(r.kernel.kind(), kind);
    EXPECT_NEAR(std::log(r.kernel.lengthscale()), r.log_parameters[0], 1e-15);
  }
}

TEST(GpCviHyper, LearnedKernelMaximisesTheElbo) {
  const auto d = load_synth(2);  // 125 points keep the ~20 CVI fits quick
  const GpLearned r = learn_gpc_kernel(Kernel{KernelKind::rbf, 1.0, 1.0}, d.x_train, d.y_train,
                                       Likelihood::logistic, GpcMethod::cvi);
  expect_local_maximum(
      [&](const Vector& t) {
        return gp_cvi_evidence(Kernel::from_log_parameters(KernelKind::rbf, t), d.x_train,
                               d.y_train, Likelihood::logistic, learning_cvi())
            .value;
      },
      r);
}

TEST(GpRegression, LearnedHyperparametersMaximiseTheEvidence) {
  Matrix x;
  Vector y;
  regression_data(x, y);
  const GpLearned r = learn_gpr_kernel(Kernel{KernelKind::rbf, 1.0, 1.0}, 1.0, x, y);
  expect_local_maximum(
      [&](const Vector& t) {
        return gp_regression_evidence(Kernel::from_log_parameters(KernelKind::rbf, t.head(2)),
                                      std::exp(t[2]), x, y)
            .value;
      },
      r);
  // The data were made with noise sd 0.1: the learned σₙ lies near it.
  EXPECT_GT(std::sqrt(r.noise_variance), 0.05);
  EXPECT_LT(std::sqrt(r.noise_variance), 0.2);
}

TEST(GpHyper, BadOptionsAreOneSentence) {
  const auto d = load_synth(8);
  try {
    learn_gpc_kernel(Kernel{KernelKind::rbf, -1.0, 1.0}, d.x_train, d.y_train, Likelihood::logistic,
                     GpcMethod::laplace);
    ADD_FAILURE() << "no error for a negative lengthscale";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("lengthscale"), std::string::npos) << m;
    EXPECT_EQ(m.back(), '.');
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
  EXPECT_THROW(learn_gpr_kernel(Kernel{}, 0.0, d.x_train, d.y_train), Error);
  GpLearnOptions o;
  o.lbfgs.max_iterations = 0;
  EXPECT_THROW(
      learn_gpc_kernel(Kernel{}, d.x_train, d.y_train, Likelihood::logistic, GpcMethod::laplace, o),
      Error);
}

}  // namespace
}  // namespace blr::inference
