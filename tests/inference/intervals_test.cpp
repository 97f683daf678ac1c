// Credible intervals against closed forms that do not go through Boost.Math: Beta(a, 1) has
// F(x) = x^a, Gamma(1, rate) is exponential, Student t with 1 and 2 degrees of freedom has
// t = tan(π(p − ½)) and t = (2p − 1)/√(2p(1 − p)); a Gaussian's 95% z is 1.959963984540054
// (Abramowitz & Stegun 26.2, to 16 digits). Tolerances: each closed form is a few roundings, and
// Boost's quantiles are accurate to a few ulps, so 1e-14 relative is ~50 ulps of margin.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/inference/intervals.hpp"

namespace blr::inference {
namespace {

constexpr double kIntervalRel = 1e-14;

void expect_rel(double got, double want) {
  EXPECT_NEAR(got, want, kIntervalRel * std::max(1.0, std::abs(want))) << "want " << want;
}

TEST(Intervals, GaussianZ) {
  expect_rel(gaussian_z(0.95), 1.959963984540054);
  const auto i = gaussian_interval(3.0, 2.0, 0.95);
  expect_rel(i.lower, 3.0 - 2.0 * 1.959963984540054);
  expect_rel(i.upper, 3.0 + 2.0 * 1.959963984540054);
  expect_rel(gaussian_z(0.5), 0.6744897501960817);  // the quartile
}

TEST(Intervals, BetaWithUnitSecondParameter) {
  for (double a : {0.5, 1.0, 3.0, 70.0}) {
    const auto i = beta_interval(a, 1.0, 0.9);
    expect_rel(i.lower, std::pow(0.05, 1.0 / a));
    expect_rel(i.upper, std::pow(0.95, 1.0 / a));
  }
}

TEST(Intervals, GammaWithUnitShapeIsExponential) {
  for (double rate : {0.01, 1.0, 250.0}) {
    const auto i = gamma_interval(1.0, rate, 0.95);
    expect_rel(i.lower, -std::log1p(-0.025) / rate);
    expect_rel(i.upper, -std::log1p(-0.975) / rate);
  }
}

TEST(Intervals, StudentTClosedForms) {
  const double p = 0.975;
  const auto c = student_t_interval(1.0, 10.0, 2.0, 0.95);
  expect_rel(c.upper, 10.0 + 2.0 * std::tan(std::numbers::pi * (p - 0.5)));
  expect_rel(c.lower, 10.0 - 2.0 * std::tan(std::numbers::pi * (p - 0.5)));
  const auto t2 = student_t_interval(2.0, 0.0, 1.0, 0.95);
  expect_rel(t2.upper, (2 * p - 1) / std::sqrt(2 * p * (1 - p)));
}

TEST(Intervals, MixtureQuantiles) {
  // One component: exactly the Gaussian interval.
  GaussianMixture1d one{Vector::Ones(1), Vector::Constant(1, 3.0), Vector::Constant(1, 4.0)};
  const auto g = one.interval(0.95);
  EXPECT_EQ(g.lower, gaussian_interval(3.0, 2.0, 0.95).lower);
  EXPECT_EQ(g.upper, gaussian_interval(3.0, 2.0, 0.95).upper);
  // Two components: the quantile solves F(q) = p to the last bit, and a symmetric mixture has
  // median 0 and symmetric quantiles.
  GaussianMixture1d two{(Vector(2) << 0.5, 0.5).finished(), (Vector(2) << -2.0, 2.0).finished(),
                        (Vector(2) << 1.0, 1.0).finished()};
  EXPECT_NEAR(two.quantile(0.5), 0.0, 1e-15);
  const auto i = two.interval(0.9);
  EXPECT_NEAR(i.lower, -i.upper, 1e-14);
  // F written out with erfc here; its slope at q is ≥ 0.01, so |ΔF| ≤ 1e-15 means |Δq| ≤ 1e-13.
  auto f = [](double x) {
    return 0.25 * std::erfc(-(x + 2.0) / std::sqrt(2.0)) + 0.25 * std::erfc(-(x - 2.0) / std::sqrt(2.0));
  };
  EXPECT_NEAR(f(i.upper), 0.95, 1e-15);
  EXPECT_NEAR(two.mean(), 0.0, 0.0);
  EXPECT_DOUBLE_EQ(two.variance(), 5.0);  // 1 + 4
  // Unequal weights: the quantile still solves F(q) = p.
  GaussianMixture1d skew{(Vector(2) << 0.2, 0.8).finished(), (Vector(2) << -5.0, 1.0).finished(),
                         (Vector(2) << 0.25, 9.0).finished()};
  const double q = skew.quantile(0.1);
  EXPECT_NEAR(skew.cdf(q), 0.1, 1e-15);
  EXPECT_GT(skew.cdf(std::nextafter(q, 1e9)), 0.1 - 1e-16);
}

TEST(Intervals, Correlation) {
  const Matrix cov = (Matrix(2, 2) << 4.0, 1.0, 1.0, 9.0).finished();
  const Matrix r = correlation(cov);
  EXPECT_DOUBLE_EQ(r(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(r(0, 1), 1.0 / 6.0);
  EXPECT_DOUBLE_EQ(r(1, 0), 1.0 / 6.0);
}

TEST(Intervals, BadLevelIsAnErrorNamingTheOption) {
  for (double level : {0.0, 1.0, -0.5, 95.0, std::nan("")}) {
    try {
      gaussian_z(level);
      ADD_FAILURE() << "level " << level << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--level"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(beta_interval(0.0, 1.0, 0.95), Error);
  EXPECT_THROW(gamma_interval(1.0, -1.0, 0.95), Error);
  EXPECT_TRUE(std::isnan(gamma_interval(3.0, std::nan(""), 0.95).lower));
  EXPECT_TRUE(std::isnan(beta_interval(INFINITY, 1.0, 0.95).upper));
}

}  // namespace
}  // namespace blr::inference
