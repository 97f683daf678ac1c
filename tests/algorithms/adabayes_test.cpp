// The core presets of AdaBayes and AdaBayes-FP (blr/algorithms/adabayes.hpp) run by the core's
// Gaussian step (the fused diagonal kernel) equal the reference code's equations written plainly,
// on a full-batch logistic regression (the loss is summed, so g = ∇ℓ̄: B = 1).
#include <gtest/gtest.h>

#include <cmath>

#include "blr/algorithms/adabayes.hpp"
#include "blr/estimator/delta.hpp"
#include "blr/family/gaussian_diag.hpp"
#include "blr/model/logistic_regression.hpp"
#include "blr/rule/algorithm.hpp"

namespace blr {
namespace {

LogisticRegression problem() {
  Matrix x(40, 3);
  Vector y(40);
  for (Index i = 0; i < 40; ++i) {
    for (Index j = 0; j < 3; ++j) x(i, j) = std::sin(3.0 * static_cast<double>(i) + static_cast<double>(j));
    y(i) = static_cast<double>(i % 2);
  }
  return LogisticRegression(x, y);
}

TEST(AdaBayesPreset, CoreStepEqualsTheFilterWrittenPlainly) {
  const auto loss = problem();
  AdaBayesOptions o;
  o.lr = 0.05;
  o.lr_sgd = 0.3;
  o.beta1 = 0.7;
  o.weight_drift = 1e-3;
  const Algorithm<GaussianDiag, Delta<CurvatureSource::gradient_squared>, AdaBayesPolicy> method{
      Delta<CurvatureSource::gradient_squared>{}, adabayes_policy(o)};
  const double sigma2 = 0.3, d = std::exp(-0.0025 / sigma2);
  auto state = init(GaussianDiag(Vector::Zero(3), Vector::Constant(3, 1.0 / sigma2)));
  Rng rng(0);
  Vector theta = Vector::Zero(3), m = Vector::Zero(3), s2 = Vector::Constant(3, sigma2);
  double deviation = 0.0;
  for (int t = 1; t <= 30; ++t) {
    method.step(state, loss, rng);
    const Vector g = loss.gradient(theta);
    m = 0.7 * m + 0.3 * g;
    s2 = (s2 * d).array() + sigma2 * (1.0 - d);
    s2 = (s2.cwiseInverse() + g.cwiseAbs2()).cwiseInverse();
    theta = (1.0 - 1e-3) * (theta - s2.cwiseProduct(m) / (1.0 - std::pow(0.7, t)));
    deviation = std::max(deviation, (state.q.mean - theta).cwiseAbs().maxCoeff());
    EXPECT_LE((state.q.precision.cwiseInverse() - s2).cwiseAbs().maxCoeff() / sigma2, 1e-12);
  }
  EXPECT_LE(deviation, 1e-12);
}

TEST(AdaBayesPreset, FixedPointCoreStepEqualsItsEquationsWrittenPlainly) {
  const auto loss = problem();
  AdaBayesFpOptions o;
  o.lr = 0.05;
  o.lr_sgd = 0.3;
  o.eps = 1e-6;
  o.beta2 = 0.99;
  const Algorithm<GaussianDiag, Delta<CurvatureSource::gradient_squared>, AdaBayesFpPolicy> method{
      Delta<CurvatureSource::gradient_squared>{}, adabayes_fp_policy(o)};
  const double a = 1.0 / (2.0 * 0.3);
  auto state = init(GaussianDiag(Vector::Zero(3), Vector::Zero(3)));
  Rng rng(0);
  Vector theta = Vector::Zero(3), m = Vector::Zero(3), v = Vector::Zero(3);
  double deviation = 0.0;
  for (int t = 1; t <= 30; ++t) {
    method.step(state, loss, rng);
    const Vector g = loss.gradient(theta);
    m = 0.9 * m + 0.1 * g;
    v = 0.99 * v + 0.01 * g.cwiseAbs2();
    const Vector v_hat = (v / (1.0 - std::pow(0.99, t))).array() + 1e-6;
    const Vector l = ((v_hat / 0.0025).array() + a * a).sqrt() + a;
    theta = (1.0 - 5e-5) * (theta - (m / (1.0 - std::pow(0.9, t))).cwiseQuotient(l));
    deviation = std::max(deviation, (state.q.mean - theta).cwiseAbs().maxCoeff());
  }
  EXPECT_LE(deviation, 1e-12);
}

}  // namespace
}  // namespace blr
