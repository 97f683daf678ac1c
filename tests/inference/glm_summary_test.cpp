// The GLM posterior summary (inference/glm_summary.hpp) against the pieces it is made of, each
// tested on its own: Gaussian and Student-t intervals (intervals_test), the Normal–Gamma
// predictive (conjugate_test), the GLM predictive (glm.hpp), fit statistics (= statsmodels,
// tests/cli/infer_fit_statistics.sh) and WAIC (waic_test). Equalities are to 1e-12 relative: the
// summary recomputes the same formulas in another order, a few roundings apart.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/family/special.hpp"
#include "blr/inference/glm_fit.hpp"
#include "blr/inference/glm_summary.hpp"
#include "blr/inference/intervals.hpp"

namespace blr::inference::glm_summary_testing {
namespace {

constexpr double kRel = 1e-12;

void expect_rel(double got, double want) {
  EXPECT_NEAR(got, want, kRel * std::max(1.0, std::abs(want))) << "want " << want;
}

struct Data {
  Matrix x;
  Vector y;
};

Data data(const std::string& likelihood, Index n) {
  Rng rng(11);
  Data d{Matrix::Ones(n, 3), Vector(n)};
  for (Index i = 0; i < n; ++i) {
    d.x.row(i).tail(2) = rng.normal_vector(2).transpose();
    const double a = 0.4 + 0.9 * d.x(i, 1) - 0.6 * d.x(i, 2);
    d.y[i] = likelihood == "logistic" ? (rng.uniform() < sigmoid(a) ? 1.0 : 0.0)
                                      : a + 0.5 * rng.normal();
  }
  return d;
}

GlmFit fit(const Data& d, const std::string& likelihood, bool noise_known = false) {
  GlmFitRequest r;
  r.likelihood = likelihood;
  r.prior_precision = (Vector(3) << 1e-6, 1, 1).finished();
  if (noise_known) r.noise_precision = 4.0;
  return fit_glm(d.x, d.y, r);
}

TEST(GlmSummary, GaussianMarginalsAndPredictiveOfALogisticFit) {
  const Data d = data("logistic", 80);
  const GlmFit f = fit(d, "logistic");
  const GlmSummary s(d.x, d.y, f, {"const", "a", "b"});
  EXPECT_FALSE(s.student_t());
  const auto c = s.coefficients(0.9);
  EXPECT_EQ(c.distribution, "normal");
  for (Index j = 0; j < 3; ++j) {
    const double sd = std::sqrt(f.covariance(j, j));
    expect_rel(c.sd[j], sd);
    expect_rel(c.lower[j], f.mean[j] - gaussian_z(0.9) * sd);
    expect_rel(c.upper[j], f.mean[j] + gaussian_z(0.9) * sd);
  }
  const Matrix xn = d.x.topRows(5);
  const auto t = s.predict(xn, 0.8);
  ASSERT_EQ(t.columns, (std::vector<std::string>{"probability", "lower", "upper"}));
  const Predictive p = predict(Likelihood::logistic, f.mean, f.covariance, xn, Vector());
  for (Index i = 0; i < 5; ++i) {
    expect_rel(t.values(i, 0), p.mean[i]);
    const double z = gaussian_z(0.8), s2 = std::sqrt(p.latent_variance[i]);
    expect_rel(t.values(i, 1), sigmoid(p.latent_mean[i] - z * s2));
    expect_rel(t.values(i, 2), sigmoid(p.latent_mean[i] + z * s2));
  }
  // The statistics and WAIC are those of the library functions on the same fit.
  expect_rel(s.statistics().aic, fit_statistics(Likelihood::logistic, d.x, d.y, f.mean).aic);
  expect_rel(s.waic().waic,
             waic_gaussian_posterior(Likelihood::logistic, d.x, d.y, f.mean, f.covariance).waic);
}

TEST(GlmSummary, StudentTMarginalsAndPredictiveWithTheNoiseUnknown) {
  const Data d = data("gaussian", 50);
  const GlmFit f = fit(d, "gaussian");
  ASSERT_TRUE(f.dof);
  const GlmSummary s(d.x, d.y, f);
  EXPECT_TRUE(s.student_t());
  EXPECT_EQ(s.names(), (std::vector<std::string>{"x0", "x1", "x2"}));
  // The Normal–Gamma fit the request made, rebuilt for its own intervals and predictive.
  NormalGammaRegression ng;
  ng.prior_precision = (Vector(3) << 1e-6, 1, 1).finished();
  const NormalGammaFit g = fit_normal_gamma(ng, d.x, d.y);
  const auto c = s.coefficients(0.95);
  const auto ci = g.intervals(0.95);
  EXPECT_EQ(c.distribution, "student-t");
  for (Index j = 0; j < 3; ++j) {
    expect_rel(c.lower[j], ci[static_cast<std::size_t>(j)].lower);
    expect_rel(c.upper[j], ci[static_cast<std::size_t>(j)].upper);
    expect_rel(c.sd[j], g.sd()[j]);
  }
  const Matrix xn = d.x.bottomRows(4);
  const auto t = s.predict(xn, 0.95);
  const auto gp = g.predict(xn, Vector(), 0.95);
  for (Index i = 0; i < 4; ++i) {
    expect_rel(t.values(i, 0), gp.mean[i]);
    expect_rel(t.values(i, 1), gp.sd[i]);
    expect_rel(t.values(i, 2), gp.lower[i]);
    expect_rel(t.values(i, 3), gp.upper[i]);
  }
}

TEST(GlmSummary, KnownNoiseAddsItToThePredictiveVariance) {
  const Data d = data("gaussian", 40);
  const GlmFit f = fit(d, "gaussian", true);
  ASSERT_TRUE(f.noise_precision);
  EXPECT_EQ(*f.noise_precision, 4.0);
  const GlmSummary s(d.x, d.y, f);
  const auto t = s.predict(d.x.topRows(3), 0.95);
  for (Index i = 0; i < 3; ++i) {
    const Vector xi = d.x.row(i).transpose();
    expect_rel(t.values(i, 1), std::sqrt(xi.dot(f.covariance * xi) + 0.25));
  }
}

TEST(GlmSummary, JsonAndTableCarryTheSameNumbers) {
  const Data d = data("logistic", 60);
  const GlmSummary s(d.x, d.y, fit(d, "logistic"), {"(intercept)", "age", "dose"});
  const auto j = s.to_json(0.9);
  EXPECT_EQ(j.at("features").get<std::vector<std::string>>(), s.names());
  EXPECT_EQ(j.at("level").get<double>(), 0.9);
  EXPECT_EQ(j.at("fit_statistics").at("waic").get<double>(), s.waic().waic);
  EXPECT_EQ(j.at("fit_statistics").at("aic").get<double>(), s.statistics().aic);
  EXPECT_EQ(j.at("lower").at(2).get<double>(), s.coefficients(0.9).lower[2]);
  EXPECT_FALSE(j.contains("r_squared"));
  const std::string table = s.table(0.9);
  for (const char* want : {"Bayesian logistic regression, Laplace posterior", "age", "dose", "5%",
                           "95%", "WAIC (p_waic):"})
    EXPECT_NE(table.find(want), std::string::npos) << want << " not in\n" << table;
  char waic[32];
  std::snprintf(waic, sizeof waic, "%.3f", s.waic().waic);
  EXPECT_NE(table.find(waic), std::string::npos) << table;
}

TEST(GlmSummary, RefusesNamesThatDoNotFitAndALevelOutsideZeroOne) {
  const Data d = data("logistic", 30);
  const GlmFit f = fit(d, "logistic");
  EXPECT_THROW(GlmSummary(d.x, d.y, f, {"a", "b"}), Error);
  try {
    GlmSummary(d.x, d.y, f, {"a", "b", "a"});
    FAIL() << "accepted a repeated name";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("names repeat"), std::string::npos) << e.what();
  }
  const GlmSummary s(d.x, d.y, f);
  EXPECT_THROW(s.coefficients(1.0), Error);
  EXPECT_THROW(s.predict(Matrix::Ones(2, 2)), Error);
}

}  // namespace
}  // namespace blr::inference::glm_summary_testing
