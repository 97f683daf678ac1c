// What each estimator asks of a loss is checked at compile time (a missing capability is not an
// overload), and options are validated with sentences.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/estimator/concrete.hpp"
#include "blr/estimator/delta.hpp"
#include "blr/estimator/exact_quadratic.hpp"
#include "blr/estimator/gauss_newton.hpp"
#include "blr/estimator/monte_carlo.hpp"
#include "blr/estimator/reparam_hessian.hpp"
#include "blr/model/linear_regression.hpp"
#include "blr/model/logistic_regression.hpp"
#include "blr/model/quadratic.hpp"
#include "blr/model/test_functions.hpp"
#include "error_message.hpp"

namespace blr {
namespace {

/// A loss with a value and a gradient only.
struct GradientOnly {
  Index dimension() const { return 2; }
  double value(const Vector& t) const { return t.squaredNorm(); }
  Vector gradient(const Vector& t) const { return 2.0 * t; }
};

/// A loss with a dense Hessian but no diagonal one.
struct DenseOnly : GradientOnly {
  Matrix hessian(const Vector&) const { return 2.0 * Matrix::Identity(2, 2); }
};

template <class E, class Q, class L>
concept CanEstimate = requires(const E& e, const Q& q, const L& f, Rng& rng) {
  { e.estimate(q, f, rng) } -> std::same_as<GaussianEstimate>;
};

static_assert(HasGradient<GradientOnly> && !HasHessian<GradientOnly> &&
              !HasDiagonalHessian<GradientOnly>);

// Delta: first order and gradient-squared need a gradient; second order the Hessian in the shape
// of q.
static_assert(CanEstimate<DeltaFirstOrder, GaussianFixed, GradientOnly>);
static_assert(CanEstimate<DeltaGradientSquared, GaussianDiag, GradientOnly>);
static_assert(!CanEstimate<DeltaSecondOrder, GaussianFull, GradientOnly>);
static_assert(!CanEstimate<DeltaSecondOrder, GaussianDiag, GradientOnly>);
static_assert(CanEstimate<DeltaSecondOrder, GaussianFull, DenseOnly>);
static_assert(!CanEstimate<DeltaSecondOrder, GaussianDiag, DenseOnly>);
static_assert(CanEstimate<DeltaSecondOrder, GaussianDiag, Himmelblau>);

// MonteCarlo: the same rules; ReparamHessian needs only gradients.
static_assert(CanEstimate<MonteCarloFirstOrder, GaussianFull, GradientOnly>);
static_assert(!CanEstimate<MonteCarlo<>, GaussianFull, GradientOnly>);
static_assert(!CanEstimate<MonteCarlo<>, GaussianDiag, GradientOnly>);
static_assert(CanEstimate<MonteCarlo<>, GaussianFull, DenseOnly>);
static_assert(CanEstimate<ReparamHessian, GaussianDiag, GradientOnly>);
static_assert(CanEstimate<ReparamHessian, GaussianFull, GradientOnly>);

// GaussNewton needs per-example gradients; ExactQuadratic a quadratic loss.
static_assert(CanEstimate<GaussNewton, GaussianFull, LogisticRegression>);
static_assert(!CanEstimate<GaussNewton, GaussianDiag, Himmelblau>);
static_assert(!CanEstimate<GaussNewton, GaussianDiag, Quadratic>);
static_assert(CanEstimate<ExactQuadratic, GaussianFull, LinearRegression>);
static_assert(CanEstimate<ExactQuadratic, GaussianDiag, Quadratic>);
static_assert(!CanEstimate<ExactQuadratic, GaussianDiag, LogisticRegression>);
static_assert(!CanEstimate<ExactQuadratic, GaussianDiag, Himmelblau>);

// Concrete needs a gradient.
static_assert(requires(const Concrete& c, const Vector& l, const GradientOnly& f, Rng& rng) {
  { c.estimate(l, f, rng) } -> std::same_as<ConcreteEstimate>;
});

using blr::testing::error_of;

TEST(EstimatorOptions, AreValidatedWithSentences) {
  EXPECT_EQ(error_of([] { MonteCarlo<>({.samples = 0}); }),
            "Option 'samples' must be at least 1; got 0.");
  EXPECT_EQ(error_of([] { ReparamHessian({.samples = 3, .antithetic = true}); }),
            "Option 'samples' must be even when 'antithetic' is on; got 3.");
  EXPECT_NE(error_of([] { GaussNewton({.sample = false, .samples = 4}); }).find("'samples'"),
            std::string::npos);
  EXPECT_NE(error_of([] { Concrete({.temperature = 0.0}); }).find("'temperature'"),
            std::string::npos);
  EXPECT_NE(error_of([] { Concrete({.samples = -2}); }).find("'samples'"), std::string::npos);
  EXPECT_EQ(error_of([] { MonteCarlo<>({.samples = 4, .antithetic = true}); }),
            blr::testing::kNoError);
}

TEST(EstimatorOptions, MismatchedDimensionsAndNoiseAreReported) {
  Rng rng(1);
  const Himmelblau f;
  const GaussianDiag q3(Vector::Zero(3), Vector::Ones(3));
  EXPECT_NE(error_of([&] { DeltaSecondOrder().estimate(q3, f, rng); }).find("dimension 3"),
            std::string::npos);
  const GaussianDiag q(Vector::Zero(2), Vector::Ones(2));
  EXPECT_NE(error_of([&] {
              ReparamHessian().estimate_with_noise(q, f, {});
            }).find("at least one noise vector"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              ReparamHessian().estimate_with_noise(q, f, {Vector::Zero(3)});
            }).find("noise vector 0 has length 3"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              Concrete().estimate_with_noise(Vector::Zero(2), f, {Vector{{0.5, 1.0}}});
            }).find("open interval"),
            std::string::npos);
}

}  // namespace
}  // namespace blr
