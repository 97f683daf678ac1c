// The Concrete estimator for Bernoulli candidates on {−1, +1} (eqs. 50–52, BayesBiNN): the
// deterministic limit, unbiasedness for the relaxed objective (checked against quadrature), the
// K-sample average against a large-K reference, and the noise-free variant.
#include <gtest/gtest.h>

#include <cmath>

#include "blr/core/rng.hpp"
#include "blr/estimator/concrete.hpp"
#include "blr/model/quadratic.hpp"
#include "estimator/estimator_checks.hpp"

namespace blr {
namespace {

using testing::expect_within_standard_errors;
using testing::replicate;

// A separable smooth loss ½Σ a_j(θ_j − c_j)², so the relaxed expectation is a 1-D integral per
// coordinate.
const DiagonalQuadratic kLoss(Vector{{1.0, 2.0, 0.5, 3.0}}, Vector{{0.3, -0.6, 1.5, 0.1}});

TEST(Concrete, DeterministicLimitForSmallTemperatureAndLargeNaturalParameters) {
  // τ = 1e-10 (BayesBiNN's setting) and |λ| ≥ 10: θ̂ = sign(λ) for every draw, so the estimate no
  // longer depends on the noise: s ⊙ ∇ℓ̄(sign λ) with s = (0 + 1e-10)/(τ(1 − tanh²λ + 1e-10)).
  const Vector lambda{{10.0, -10.0, 12.0, -15.0}};
  const double tau = 1e-10;
  const Concrete concrete({.samples = 3, .temperature = tau});
  const Vector sign = lambda.array().sign().matrix();
  Vector expected(4);
  const Vector g = kLoss.gradient(sign);
  for (Index j = 0; j < 4; ++j) {
    const double t = std::tanh(lambda[j]);
    expected[j] = (1e-10 / (tau * (1.0 - t * t + 1e-10))) * g[j];
  }
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    Rng rng(seed);
    const ConcreteEstimate e = concrete.estimate(lambda, kLoss, rng);
    for (Index j = 0; j < 4; ++j)
      EXPECT_NEAR(e.grad_mu[j], expected[j], 1e-12 * std::abs(expected[j]));
    EXPECT_DOUBLE_EQ(e.loss, kLoss.value(sign));
    EXPECT_EQ(e.evaluations, 3);
  }
}

/// ∇_μ of the relaxed objective E_ε[ℓ̄(tanh((λ + δ(ε))/τ))] by quadrature over δ, whose density is
/// the logistic 2σ(2δ)(1 − σ(2δ)); d/dλ under the integral, divided by dμ/dλ = 1 − tanh²λ.
Vector relaxed_gradient_by_quadrature(const Vector& lambda, double tau) {
  Vector out(lambda.size());
  const int n = 400000;
  const double lo = -40.0, hi = 40.0, h = (hi - lo) / n;
  for (Index j = 0; j < lambda.size(); ++j) {
    double sum = 0.0;
    for (int k = 0; k <= n; ++k) {
      const double delta = lo + k * h;
      const double sig = 1.0 / (1.0 + std::exp(-2.0 * delta));
      const double density = 2.0 * sig * (1.0 - sig);
      const double theta = std::tanh((lambda[j] + delta) / tau);
      const double dtheta_dlambda = (1.0 - theta * theta) / tau;
      Vector t = Vector::Zero(lambda.size());
      const double grad = kLoss.diagonal()[j] * (theta - kLoss.center()[j]);
      const double w = (k == 0 || k == n) ? 0.5 : 1.0;
      sum += w * density * grad * dtheta_dlambda;
    }
    const double mu = std::tanh(lambda[j]);
    out[j] = sum * h / (1.0 - mu * mu);
  }
  return out;
}

TEST(Concrete, UnbiasedForTheRelaxedObjective) {
  const Vector lambda{{0.8, -0.4, 1.5, 0.0}};
  for (double tau : {1.0, 0.5}) {
    const Vector truth = relaxed_gradient_by_quadrature(lambda, tau);
    const Concrete concrete({.samples = 4, .temperature = tau});
    Rng rng(11);
    const auto r =
        replicate(5000, [&](int) { return concrete.estimate(lambda, kLoss, rng).grad_mu; });
    expect_within_standard_errors(r, truth, 5.0, "Concrete vs quadrature");
  }
}

TEST(Concrete, SampleAverageAgreesWithALargeSampleReference) {
  const Vector lambda{{0.3, 1.2, -0.7, 2.0}};
  Rng rng(12);
  const Concrete small({.samples = 2, .temperature = 0.7});
  const Concrete large({.samples = 500, .temperature = 0.7});
  const auto r = replicate(3000, [&](int) { return small.estimate(lambda, kLoss, rng).grad_mu; });
  const auto ref = replicate(200, [&](int) { return large.estimate(lambda, kLoss, rng).grad_mu; });
  for (Index j = 0; j < 4; ++j) {
    const double se = std::hypot(r.standard_error[j], ref.standard_error[j]);
    EXPECT_NEAR(r.mean[j], ref.mean[j], 5.0 * se) << "coordinate " << j;
  }
  // Averaging K samples divides the variance by K: the K = 500 estimate is ~16× less spread.
  EXPECT_LT(ref.standard_error.maxCoeff() * std::sqrt(200.0),
            0.2 * r.standard_error.maxCoeff() * std::sqrt(3000.0));
}

TEST(Concrete, FixedNoiseMatchesTheFormula) {
  const Vector lambda{{0.5, -1.0, 2.0, 0.1}};
  const Vector u{{0.2, 0.7, 0.5, 0.9}};
  const double tau = 0.8;
  const ConcreteEstimate e = Concrete({.temperature = tau}).estimate_with_noise(lambda, kLoss, {u});
  const Vector delta = 0.5 * (u.array() / (1.0 - u.array())).log().matrix();
  const Vector theta = ((lambda + delta) / tau).array().tanh().matrix();
  const Vector mu = lambda.array().tanh().matrix();
  const Vector s =
      ((1.0 - theta.array().square() + 1e-10) / (tau * (1.0 - mu.array().square() + 1e-10)))
          .matrix();
  EXPECT_LE((e.grad_mu - s.cwiseProduct(kLoss.gradient(theta))).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_DOUBLE_EQ(e.loss, kLoss.value(theta));
  // The Rng overload draws uniforms coordinate by coordinate, sample by sample.
  Rng a(5), b(5);
  std::vector<Vector> draws;
  for (int k = 0; k < 2; ++k) {
    Vector d(4);
    for (Index j = 0; j < 4; ++j) d[j] = b.uniform();
    draws.push_back(d);
  }
  const Concrete two({.samples = 2, .temperature = tau});
  EXPECT_EQ(two.estimate(lambda, kLoss, a).grad_mu,
            two.estimate_with_noise(lambda, kLoss, draws).grad_mu);
}

TEST(Concrete, DeterministicVariantIsTheGradientAtTanhLambda) {
  const Vector lambda{{0.5, -1.0, 2.0, 0.1}};
  Rng rng(6);
  const ConcreteEstimate e = Concrete({.deterministic = true}).estimate(lambda, kLoss, rng);
  const Vector w = lambda.array().tanh().matrix();
  EXPECT_EQ(e.grad_mu, kLoss.gradient(w));
  EXPECT_EQ(e.loss, kLoss.value(w));
  EXPECT_TRUE(rng == Rng(6));
}

}  // namespace
}  // namespace blr
