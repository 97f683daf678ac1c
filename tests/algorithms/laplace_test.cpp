// The one Laplace routine (algorithms/laplace.hpp): a prior N(0, δ⁻¹I) given to the policy gives
// the same posterior, log joint and evidence as the same prior written into the loss (the GLM of
// `blr infer`); the observer sees every iterate with ℓ̄ at it; the step limit and the options.
#include <gtest/gtest.h>

#include <string>

#include "blr/algorithms/laplace.hpp"
#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/inference/glm.hpp"
#include "blr/model/logistic_regression.hpp"

namespace blr {
namespace {

struct Data {
  Matrix x;
  Vector y;
};

Data logistic_data(Index n, Index d, std::uint64_t seed) {
  Rng rng(seed);
  Data out{Matrix(n, d), Vector(n)};
  for (Index i = 0; i < out.x.size(); ++i) out.x.data()[i] = rng.normal();
  const Vector w = Vector::LinSpaced(d, -1.0, 1.5);
  for (Index i = 0; i < n; ++i) {
    const double p = 1.0 / (1.0 + std::exp(-out.x.row(i).dot(w)));
    out.y[i] = rng.uniform() < p ? 1.0 : 0.0;
  }
  return out;
}

TEST(LaplaceRoutine, PriorInThePolicyEqualsPriorInTheLoss) {
  const Data data = logistic_data(150, 4, 3);
  const double delta = 1.5;
  // ℓ̄ = negative log-likelihood, prior δ given to the Newton policy.
  const LogisticRegression likelihood(data.x, data.y);
  LaplaceOptions options;
  options.newton.prior_precision = delta;
  const LaplaceResult a = laplace(likelihood, Vector::Zero(4), options);
  // ℓ̄ = negative log joint with the normalised prior, δ = 0 (inference::laplace).
  const auto glm =
      inference::Glm::with_isotropic_prior(data.x, data.y, inference::Likelihood::logistic, delta);
  const inference::LaplaceResult b = inference::laplace(glm);
  ASSERT_TRUE(a.converged);
  ASSERT_TRUE(b.converged);
  EXPECT_EQ(a.iterations, b.iterations);
  // Both stop at max|∇| < 1e-10; the Hessian there has entries O(N), so the modes agree to
  // ~1e-10 / λ_min and the precisions to rounding.
  EXPECT_LT((a.posterior.mean - b.mean).cwiseAbs().maxCoeff(), 1e-10);
  const Matrix sa = a.posterior.precision_matrix(), sb = b.posterior.precision_matrix();
  EXPECT_LT((sa - sb).cwiseAbs().maxCoeff() / sb.norm(), 1e-12);
  EXPECT_NEAR(a.log_joint, b.log_joint, 1e-9);
  EXPECT_NEAR(a.log_evidence, b.log_evidence, 1e-9);
  EXPECT_NEAR(b.log_joint, -glm.value(b.mean), 1e-12 * std::abs(b.log_joint));
}

TEST(LaplaceRoutine, ObserverSeesEveryIterateWithItsLoss) {
  const Data data = logistic_data(120, 3, 5);
  const LogisticRegression loss(data.x, data.y, LogisticRegressionOptions{0.5});
  std::vector<Vector> means;
  std::vector<double> losses;
  long last = 0;
  const LaplaceResult r =
      laplace(loss, Vector::Zero(3), {}, [&](long step, const GaussianFull& q, double value) {
        EXPECT_EQ(step, last + 1);
        last = step;
        means.push_back(q.mean);
        losses.push_back(value);
      });
  ASSERT_TRUE(r.converged);
  ASSERT_EQ(static_cast<long>(means.size()), r.iterations);
  for (std::size_t t = 0; t < means.size(); ++t)
    EXPECT_EQ(losses[t], loss.value(means[t])) << "step " << t + 1;
  EXPECT_EQ(means.back(), r.posterior.mean);
  EXPECT_LT(loss.gradient(r.posterior.mean).cwiseAbs().maxCoeff(), LaplaceOptions{}.tolerance);
  const Matrix h = loss.hessian(r.posterior.mean);
  EXPECT_LT((r.posterior.precision_matrix() - h).cwiseAbs().maxCoeff() / h.norm(), 1e-14);
}

TEST(LaplaceRoutine, StopsAtTheStepLimitWithoutConverging) {
  const Data data = logistic_data(120, 3, 7);
  const LogisticRegression loss(data.x, data.y, LogisticRegressionOptions{0.5});
  LaplaceOptions options;
  options.max_steps = 1;
  const LaplaceResult r = laplace(loss, Vector::Zero(3), options);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 1);
  // The precision is still the Hessian at the final mean.
  const Matrix h = loss.hessian(r.posterior.mean);
  EXPECT_LT((r.posterior.precision_matrix() - h).cwiseAbs().maxCoeff() / h.norm(), 1e-14);
}

TEST(LaplaceRoutine, InvalidOptionsAreNamed) {
  const LogisticRegression loss(Matrix::Ones(2, 1), Vector::Ones(2), LogisticRegressionOptions{1});
  const auto message = [&](LaplaceOptions o) -> std::string {
    try {
      laplace(loss, Vector::Zero(1), o);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  LaplaceOptions steps, tolerance, rho;
  steps.max_steps = 0;
  tolerance.tolerance = 0;
  rho.newton.step_size = 1.5;
  EXPECT_NE(message(steps).find("max_steps"), std::string::npos);
  EXPECT_NE(message(tolerance).find("tolerance"), std::string::npos);
  EXPECT_NE(message(rho).find("step_size"), std::string::npos);
}

}  // namespace
}  // namespace blr
