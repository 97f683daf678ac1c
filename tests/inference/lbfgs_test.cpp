// L-BFGS with a strong-Wolfe line search (lbfgs.hpp): the Rosenbrock minimum, a quadratic, the
// evaluation count, a region where f is not finite, and bad options.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>

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
