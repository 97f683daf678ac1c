// The Gaussian-mixture summary (inference/mixture_summary.hpp): EM's summary is its EmResult
// (bitwise: the same call), the parameter count is scikit-learn's _n_parameters ((K − 1) + K·D +
// K·D(D + 1)/2 full, K·D diagonal covariances), AIC and BIC are their definitions at the
// log-likelihood, new rows' responsibilities are π_k N(x | μ_k, Σ_k) normalised (checked against
// the densities written out), and VMP/SVI report the posterior means and the ELBO.
#include <gtest/gtest.h>

#include <Eigen/LU>
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <numbers>
#include <string>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/inference/mixture_summary.hpp"
#include "error_message.hpp"

namespace blr::inference::mixture_summary_testing {
namespace {

using blr::testing::expect_error;

Matrix two_clusters(Index n, std::uint64_t seed) {
  Rng rng(seed);
  Matrix x(n, 2);
  for (Index i = 0; i < n; ++i) {
    const double centre = i % 3 == 0 ? 4.0 : -3.0;
    x(i, 0) = centre + rng.normal();
    x(i, 1) = 0.5 * centre + 0.8 * rng.normal();
  }
  return x;
}

TEST(MixtureSummary, EmIsItsResultWithSklearnsStatistics) {
  const Matrix x = two_clusters(150, 1);
  MixtureRequest r;
  r.em.components = 2;
  const auto s = fit_mixture(x, r);
  const EmResult e = em(x, r.em);
  EXPECT_EQ(s.log_likelihood(), e.log_likelihood);
  EXPECT_EQ(s.mixture().means, e.mixture.means);
  EXPECT_EQ(s.iterations(), e.iterations);
  EXPECT_TRUE(s.converged());
  EXPECT_EQ(s.parameters(), 1 + 4 + 6);
  EXPECT_DOUBLE_EQ(s.aic(), 2.0 * 11 - 2 * e.log_likelihood);
  EXPECT_DOUBLE_EQ(s.bic(), 11 * std::log(150.0) - 2 * e.log_likelihood);
  r.em.covariance = CovarianceType::diagonal;
  EXPECT_EQ(fit_mixture(x, r).parameters(), 1 + 4 + 4);
  const auto j = s.to_json();
  EXPECT_EQ(j["fit_statistics"]["parameters"], 11);
  EXPECT_TRUE(j.contains("initial") && j.contains("stopping") && !j.contains("elbo"));
}

TEST(MixtureSummary, NewRowsGetTheirResponsibilitiesAndDensity) {
  const Matrix x = two_clusters(120, 2);
  MixtureRequest r;
  const auto s = fit_mixture(x, r);
  const Matrix rows = (Matrix(3, 2) << 4, 2, -3, -1.5, 0.5, 0.2).finished();
  const Matrix p = s.predict_proba(rows);
  const Vector log_p = s.log_density(rows);
  const auto& g = s.mixture();
  for (Index i = 0; i < rows.rows(); ++i) {
    Vector dens(2);
    for (Index k = 0; k < 2; ++k) {
      const Matrix& cov = g.covariances[static_cast<std::size_t>(k)];
      const Vector d = rows.row(i).transpose() - g.means.row(k).transpose();
      dens[k] = g.weights[k] * std::exp(-0.5 * d.dot(cov.inverse() * d)) /
                (2 * std::numbers::pi * std::sqrt(cov.determinant()));
    }
    EXPECT_NEAR(log_p[i], std::log(dens.sum()), 1e-12 * std::abs(std::log(dens.sum())));
    for (Index k = 0; k < 2; ++k) EXPECT_NEAR(p(i, k), dens[k] / dens.sum(), 1e-12);
  }
  const auto labels = s.predict(rows);
  EXPECT_NE(labels[0], labels[1]);  // the two centres fall in different components
  EXPECT_EQ(s.responsibilities().rows(), 120);
}

TEST(MixtureSummary, VmpAndSviReportTheirPosteriorMeansAndElbo) {
  const Matrix x = two_clusters(90, 3);
  MixtureRequest r;
  r.method = "vmp";
  const auto v = fit_mixture(x, r);
  EXPECT_TRUE(v.converged());
  ASSERT_TRUE(v.elbo().has_value());
  EXPECT_TRUE(std::isnan(v.bic()));
  EXPECT_NEAR(v.mixture().weights.sum(), 1.0, 1e-12);
  EXPECT_EQ(v.log_likelihood(), v.mixture().log_likelihood(x));
  const auto j = v.to_json();
  EXPECT_TRUE(j.contains("elbo") && !j.contains("initial") && !j["fit_statistics"].contains("bic"));
  r.method = "svi";
  r.svi.iterations = 40;
  const auto s = fit_mixture(x, r);
  EXPECT_FALSE(s.converged());
  EXPECT_EQ(s.iterations(), 40);
  EXPECT_TRUE(s.to_json().contains("note"));
}

TEST(MixtureSummary, BadRequestsAreSentences) {
  const Matrix x = two_clusters(10, 4);
  MixtureRequest r;
  r.method = "kmeans";
  expect_error([&] { fit_mixture(x, r); }, "em, vmp or svi");
  r = {};
  r.em.components = 11;
  expect_error([&] { fit_mixture(x, r); }, "exceeds the number of data rows (10)");
  r = {};
  r.method = "vmp";
  r.em.covariance = CovarianceType::diagonal;
  expect_error([&] { fit_mixture(x, r); }, "Normal–Wishart");
  r = {};
  const auto s = fit_mixture(x, r);
  expect_error([&] { s.predict(Matrix::Zero(2, 3)); }, "3 columns but the mixture was fitted on 2");
  expect_error([&] { s.table({"only one"}); }, "given 1 column names but the mixture has 2");
}

}  // namespace
}  // namespace blr::inference::mixture_summary_testing
