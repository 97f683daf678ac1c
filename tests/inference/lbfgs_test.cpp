// L-BFGS with a strong-Wolfe line search (lbfgs.hpp): the Rosenbrock minimum, a quadratic, the
// evaluation count, a region where f is not finite, and bad options.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>
#include <string>

#include "blr/core/error.hpp"
#include "blr/inference/lbfgs.hpp"

namespace blr::inference {
namespace {

double rosenbrock(const Vector& x, Vector& g) {
  double f = 0;
  g = Vector::Zero(x.size());
  for (Index i = 0; i + 1 < x.size(); ++i) {
    const double a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
    f += 100 * a * a + b * b;
    g[i] += -400 * a * x[i] - 2 * b;
    g[i + 1] += 200 * a;
  }
  return f;
}

TEST(Lbfgs, FindsTheRosenbrockMinimum) {
  for (Index n : {2, 10}) {
    Vector x0 = Vector::Constant(n, -1.2);
    x0[n - 1] = 1.0;
    LbfgsOptions o;
    o.gradient_tolerance = 1e-9;
    const LbfgsResult r = lbfgs(rosenbrock, x0, o);
    ASSERT_TRUE(r.converged) << r.stop;
    // Near the minimum f ≈ ½ δᵀHδ with H's smallest eigenvalue ~0.4 (n = 2) down to ~0.01:
    // |∇| ≤ 1e-9 puts x within ~1e-7 of the ones.
    EXPECT_LT((r.x - Vector::Ones(n)).cwiseAbs().maxCoeff(), 1e-6) << n;
    EXPECT_LT(r.value, 1e-14);
  }
}

TEST(Lbfgs, CountsEvaluationsAndLowersTheValue) {
  std::vector<double> values;
  const Objective f = [&](const Vector& x, Vector& g) {
    const double v = rosenbrock(x, g);
    values.push_back(v);
    return v;
  };
  Vector x0(2);
  x0 << -1.2, 1.0;
  const LbfgsResult r = lbfgs(f, x0);
  ASSERT_TRUE(r.converged) << r.stop;
  EXPECT_LE(r.value, values.front());
  EXPECT_LE(r.evaluations, 200);
  EXPECT_EQ(r.evaluations, static_cast<int>(values.size()));
}

TEST(Lbfgs, QuadraticInFewIterations) {
  Matrix a(3, 3);
  a << 4, 1, 0, 1, 3, 0.5, 0, 0.5, 2;
  Vector b(3);
  b << 1, -2, 3;
  const Objective f = [&](const Vector& x, Vector& g) {
    g = a * x - b;
    return 0.5 * x.dot(a * x) - b.dot(x);
  };
  const LbfgsResult r = lbfgs(f, Vector::Zero(3));
  ASSERT_TRUE(r.converged);
  const Vector exact = a.ldlt().solve(b);
  // |∇| ≤ 1e-6 and the smallest eigenvalue of A is > 1, so |x − x*| < 1e-6.
  EXPECT_LT((r.x - exact).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_LE(r.iterations, 10);
}

TEST(Lbfgs, StepsBackFromValuesThatAreNotFinite) {
  // f(x) = x − log x on x > 0 (minimum at 1), NaN for x ≤ 0; from x = 5 the first step overshoots.
  const Objective f = [](const Vector& x, Vector& g) {
    g = Vector::Constant(1, 1 - 1 / x[0]);
    return x[0] > 0 ? x[0] - std::log(x[0]) : std::numeric_limits<double>::quiet_NaN();
  };
  LbfgsOptions o;
  o.max_step = 100;
  const LbfgsResult r = lbfgs(f, Vector::Constant(1, 0.01), o);
  ASSERT_TRUE(r.converged) << r.stop;
  EXPECT_NEAR(r.x[0], 1.0, 1e-5);
}

// f = 1 + (x − 1)⁴ rounded to a grid of 1e-10 (a value computed to ten digits), with the exact
// gradient 4(x − 1)³: near the minimum the decrease left, (x − 1)⁴, falls below the grid (at
// |x − 1| ≈ 3e-3) while the gradient (≈ 1e-7 there) is far above a tight tolerance. The line
// search then finds no decrease; the step's predicted decrease is within the value tolerance
// (2.2e-9 · |f|), so the run has converged — and with the value tolerance off it has not.
TEST(Lbfgs, ADecreaseBelowTheValuesResolutionIsConvergence) {
  const Objective f = [](const Vector& x, Vector& g) {
    g = 4 * (x.array() - 1).cube().matrix();
    const double exact = 1 + (x.array() - 1).square().square().sum();
    return std::round(exact * 1e10) / 1e10;
  };
  LbfgsOptions o;
  o.gradient_tolerance = 1e-14;
  const auto r = lbfgs(f, Vector::Constant(1, 3.0), o);
  EXPECT_TRUE(r.converged) << r.stop;
  EXPECT_NE(r.stop.find("value tolerance"), std::string::npos) << r.stop;
  EXPECT_GT(r.gradient.cwiseAbs().maxCoeff(), o.gradient_tolerance);
  EXPECT_LT(std::abs(r.x[0] - 1), 0.01);  // within about the grid^(1/4) of the minimum
  o.value_tolerance = 0;
  const auto strict = lbfgs(f, Vector::Constant(1, 3.0), o);
  EXPECT_FALSE(strict.converged) << strict.stop;
  EXPECT_NE(strict.stop.find("Wolfe"), std::string::npos) << strict.stop;
}

TEST(Lbfgs, BadOptionsAndStartsAreErrors) {
  LbfgsOptions o;
  o.memory = 0;
  EXPECT_THROW(lbfgs(rosenbrock, Vector::Zero(2), o), Error);
  o = {};
  o.c2 = 1e-5;
  EXPECT_THROW(lbfgs(rosenbrock, Vector::Zero(2), o), Error);
  const Objective bad = [](const Vector&, Vector& g) {
    g = Vector::Zero(1);
    return std::numeric_limits<double>::infinity();
  };
  EXPECT_THROW(lbfgs(bad, Vector::Zero(1)), Error);
}

}  // namespace
}  // namespace blr::inference
