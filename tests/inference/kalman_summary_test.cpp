// The state-space summary and the structural models (inference/kalman_summary.hpp): the models
// are the matrices of Durbin & Koopman (2012, §2.1 and §3.2); the bands are the filter's and the
// smoother's marginals m ± z·√P_ii; the forecasts are the prediction recursion, in closed form for
// the local level (mean m_T, variance P_T + kW + V after k steps) and the trend (level + k·slope).
// Equalities to 1e-12 relative: the same formulas, a few roundings apart.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <string>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/inference/intervals.hpp"
#include "blr/inference/kalman_summary.hpp"
#include "error_message.hpp"

namespace blr::inference::kalman_summary_testing {
namespace {

using blr::testing::expect_error;

constexpr double kRel = 1e-12;

void expect_rel(double got, double want) {
  EXPECT_NEAR(got, want, kRel * std::max(1.0, std::abs(want))) << "want " << want;
}

Matrix series(Index steps, std::uint64_t seed) {
  Rng rng(seed);
  Matrix y(steps, 1);
  double level = 10;
  for (Index t = 0; t < steps; ++t) {
    level += 0.7 * rng.normal();
    y(t, 0) = level + 1.5 * rng.normal();
  }
  return y;
}

TEST(KalmanSummary, LocalLevelIsItsMatricesAndSaysWhatItAssumed) {
  const Matrix y = series(40, 1);
  StructuralModelRequest r;
  r.obs_var = 2.25;
  r.state_var = 0.49;
  const auto s = structural_model(r, y);
  const auto want = StateSpaceModel::local_level(2.25, 0.49, y(0, 0), 1e7);
  EXPECT_EQ(s.model.transition, want.transition);
  EXPECT_EQ(s.model.state_noise, want.state_noise);
  EXPECT_EQ(s.model.obs_noise, want.obs_noise);
  EXPECT_EQ(s.model.init_mean, want.init_mean);
  EXPECT_EQ(s.model.init_cov, want.init_cov);
  EXPECT_EQ(s.states, std::vector<std::string>{"level"});
  EXPECT_EQ(s.assumptions.size(), 2u);
  EXPECT_FALSE(s.fit.has_value());
}

TEST(KalmanSummary, FitIsTheMaximumLikelihoodSearchFromTheDocumentedStart) {
  const Matrix y = series(60, 2);
  StructuralModelRequest r;
  r.fit = true;
  const auto s = structural_model(r, y);
  ASSERT_TRUE(s.fit.has_value());
  EXPECT_TRUE(s.fit->converged);
  const double var_y = (y.array() - y.mean()).square().mean();
  const auto direct = fit_variances(
      [&](const Vector& p) { return StateSpaceModel::local_level(p[0], p[1], y(0, 0), 1e7); }, y,
      (Vector(2) << var_y / 2, var_y / 10).finished());
  EXPECT_EQ(s.obs_var, direct.variances[0]);
  EXPECT_EQ(s.state_var, direct.variances[1]);
  // The maximum: each variance moved by 10 % lowers the likelihood.
  const double best = kalman_log_likelihood(s.model, y);
  for (const double f : {0.9, 1.1}) {
    EXPECT_LT(kalman_log_likelihood(
                  StateSpaceModel::local_level(f * s.obs_var, s.state_var, y(0, 0), 1e7), y),
              best);
    EXPECT_LT(kalman_log_likelihood(
                  StateSpaceModel::local_level(s.obs_var, f * s.state_var, y(0, 0), 1e7), y),
              best);
  }
}

TEST(KalmanSummary, BandsAreTheMarginalsAndForecastsTheRecursion) {
  const Matrix y = series(30, 3);
  const double v = 2.25, w = 0.49;
  const KalmanSummary s(StateSpaceModel::local_level(v, w, y(0, 0), 1e7), y, {"level"});
  const auto& r = s.result();
  const auto f = s.filtered(0, 0.8), sm = s.smoothed(0, 0.8);
  const double z = gaussian_z(0.8);
  for (Index t = 0; t < y.rows(); ++t) {
    expect_rel(f.sd[t], std::sqrt(r.filtered_cov(t, 0)));
    expect_rel(sm.lower[t], r.smoothed_mean(t, 0) - z * std::sqrt(r.smoothed_cov(t, 0)));
  }
  const Forecast fc = s.forecast(4, 0.9);
  const double m = r.filtered_mean(29, 0), p = r.filtered_cov(29, 0);
  for (Index k = 1; k <= 4; ++k) {
    expect_rel(fc.mean(k - 1, 0), m);
    expect_rel(fc.sd(k - 1, 0), std::sqrt(p + k * w + v));
    expect_rel(fc.upper(k - 1, 0), m + gaussian_z(0.9) * std::sqrt(p + k * w + v));
  }
  EXPECT_EQ(s.observed_steps(), 30);
  const auto j = s.to_json(0.8);
  EXPECT_EQ(j["smoothed_lower"][3].get<double>(), sm.lower[3]);
  EXPECT_EQ(j["smoothed_states"].size(), 30u);
  EXPECT_NE(s.table(0.8).find("Log-likelihood"), std::string::npos);
}

TEST(KalmanSummary, TrendForecastFollowsTheSlope) {
  Matrix y(20, 1);
  for (Index t = 0; t < 20; ++t) y(t, 0) = 3.0 + 0.5 * t + (t % 2 == 0 ? 0.1 : -0.1);
  StructuralModelRequest r;
  r.kind = "local-linear-trend";
  r.obs_var = 0.01;
  r.state_var = 0.001;
  r.slope_var = 0.0001;
  const auto model = structural_model(r, y);
  const KalmanSummary s(model.model, y, model.states);
  const Vector last = s.result().filtered_mean.row(19).transpose();
  const Forecast fc = s.forecast(5);
  for (Index k = 1; k <= 5; ++k) expect_rel(fc.mean(k - 1, 0), last[0] + k * last[1]);
  EXPECT_NEAR(last[1], 0.5, 0.05);  // the slope the data were made with
}

TEST(KalmanSummary, MissingStepsAreCountedAndBadRequestsAreSentences) {
  Matrix y = series(10, 4);
  y(4, 0) = NAN;
  const KalmanSummary s(StateSpaceModel::local_level(1, 1, 0, 10), y);
  EXPECT_EQ(s.observed_steps(), 9);
  EXPECT_EQ(s.states(), std::vector<std::string>{"x0"});
  StructuralModelRequest r;
  expect_error([&] { structural_model(r, y); }, "needs obs_var V > 0 and state_var W ≥ 0");
  r.kind = "arima";
  expect_error([&] { structural_model(r, y); }, "local-level or local-linear-trend");
  r = {};
  r.obs_var = r.state_var = r.slope_var = 1.0;
  expect_error([&] { structural_model(r, y); }, "slope_var' applies only");
  r = {};
  r.fit = true;
  expect_error([&] { structural_model(r, Matrix::Constant(5, 1, 2.0)); }, "constant");
  r.state_var = 0.0;
  expect_error([&] { structural_model(r, y); }, "is where fit starts");
  Matrix first_missing = y;
  first_missing(0, 0) = NAN;
  expect_error([&] { structural_model(StructuralModelRequest{}, first_missing); }, "init_mean");
  expect_error([&] { KalmanSummary(StateSpaceModel::local_level(1, 1, 0, 10), y, {"a", "b"}); },
          "1 states but 2 names");
  expect_error([&] { s.forecast(0); }, "between 1 and");
  expect_error([&] { s.smoothed(1); }, "State 1 is not one of");
}

}  // namespace
}  // namespace blr::inference::kalman_summary_testing
