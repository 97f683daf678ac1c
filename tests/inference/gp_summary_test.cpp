// The GP summary (inference/gp_summary.hpp) against the fit it holds (gp_fit.hpp): the latent
// bands are the fitted marginals m ± z·√v, the regression predictive adds σₙ² to the latent
// variance, the classification predictive is E[σ(f*)] with σ of f*'s interval, the JSON carries
// the kernel's hyperparameters by name and the search's start, and misuse is a sentence. Equal to
// 1e-12 relative: the same quantities through the same calls.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/inference/gp_summary.hpp"
#include "blr/inference/intervals.hpp"
#include "gp_testing.hpp"

namespace blr::inference::gp_summary_testing {
namespace {

void expect_rel(double got, double want) {
  EXPECT_NEAR(got, want, 1e-12 * std::max(1.0, std::abs(want))) << "want " << want;
}

TEST(GpSummary, RegressionBandsAndPredictiveAreTheFits) {
  Rng rng(3);
  const Index n = 40;
  Matrix x(n, 1);
  Vector y(n);
  for (Index i = 0; i < n; ++i) {
    x(i, 0) = -3 + 6.0 * static_cast<double>(i) / static_cast<double>(n - 1);
    y[i] = std::sin(x(i, 0)) + 0.2 * rng.normal();
  }
  const Kernel start(KernelKind::rbf, 1.0, 1.0);
  const GpSummary s(fit_gp_regression(x, y, start, 0.1, false), start, 0.1);
  ASSERT_FALSE(s.classification());
  const auto f = s.regression()->fitted();
  const auto b = s.latent(0.8);
  const double z = gaussian_z(0.8);
  for (Index i = 0; i < n; ++i) {
    expect_rel(b.mean[i], f.mean[i]);
    expect_rel(b.lower[i], f.mean[i] - z * std::sqrt(f.variance[i]));
  }
  const Matrix x_new = (Matrix(2, 1) << 0.25, 4.0).finished();
  const auto at = s.regression()->predict(x_new);
  const auto t = s.predict(x_new, 0.8);
  ASSERT_EQ(t.columns, (std::vector<std::string>{"mean", "sd", "lower", "upper"}));
  for (Index i = 0; i < 2; ++i) {
    expect_rel(t.values(i, 0), at.mean[i]);
    expect_rel(t.values(i, 1), std::sqrt(at.variance[i] + 0.1));
  }
  const auto j = s.to_json(0.8);
  EXPECT_EQ(j["method"], "exact");
  EXPECT_EQ(j["kernel_parameters"]["rbf.lengthscale"].get<double>(), 1.0);
  EXPECT_EQ(j["lengthscale"].get<double>(), 1.0);
  EXPECT_FALSE(j.contains("hyperparameter_search"));
  expect_rel(j["log_marginal_likelihood"].get<double>(), s.objective());
  const auto m = s.score(x, y);
  EXPECT_EQ(m.n, n);
  EXPECT_LT(m.rmse, 0.35);  // noise sd 0.2 around a smooth function
}

TEST(GpSummary, ClassificationPredictsProbabilitiesAndRecordsTheSearch) {
  const auto d = testing::load_synth(5);
  const Kernel start(KernelKind::rbf, 0.5, 1.0);
  const GpSummary s(fit_gp_classification(d.x_train, d.y_train, start, GpcMethod::laplace, true),
                    start);
  ASSERT_TRUE(s.classification());
  const auto t = s.predict(d.x_test.topRows(20), 0.9);
  ASSERT_EQ(t.columns, (std::vector<std::string>{"probability", "lower", "upper"}));
  const auto at = s.latent_at(d.x_test.topRows(20));
  for (Index i = 0; i < 20; ++i) {
    EXPECT_LE(t.values(i, 1), t.values(i, 0));
    EXPECT_LE(t.values(i, 0), t.values(i, 2));
    const double lower = at.mean[i] - gaussian_z(0.9) * std::sqrt(at.variance[i]);
    expect_rel(t.values(i, 1), 1 / (1 + std::exp(-lower)));
  }
  const auto j = s.to_json();
  ASSERT_TRUE(j.contains("hyperparameter_search"));
  EXPECT_EQ(j["hyperparameter_search"]["initial_lengthscale"].get<double>(), 0.5);
  EXPECT_FALSE(j["hyperparameter_search"].contains("initial_noise_variance"));
  EXPECT_EQ(j["method"], "laplace");
  EXPECT_GT(s.score(d.x_test, d.y_test).accuracy, 0.85);
  EXPECT_NE(s.table().find("Hyperparameters learned by L-BFGS"), std::string::npos);
  try {
    s.predict(Matrix::Zero(2, 3));
    ADD_FAILURE() << "three columns accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("3 columns but the GP was fitted on 2"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace blr::inference::gp_summary_testing
