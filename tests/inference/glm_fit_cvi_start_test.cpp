// CVI's start in fit_glm (inference/glm_fit.hpp, GlmFitRequest::cvi_start): from the Laplace
// posterior (the default) and from the prior it reaches the same fixed point, and the default
// converges on 10⁵ rows with the intercept's weak prior, where from the prior the first steps'
// expected sites, taken under a variance of 10⁶, gave no step that kept the ELBO from falling
// (bench/inference_vs_python.py's logistic case failed so at step 4).
//
// Tolerance: CVI stops at max|Δλ| ≤ tolerance·max(1, max|λ|); with tolerance 1e-11 the two runs'
// means and standard deviations agree to ~1e-10 on O(1) values, and 1e-8 is required.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/family/special.hpp"
#include "blr/inference/glm_fit.hpp"

namespace blr::inference::glm_fit_cvi_start_testing {
namespace {

/// Logistic data with an intercept column and d − 1 standard-normal features.
void logistic_data(Index n, Index d, Matrix& x, Vector& y) {
  Rng rng(5);
  x = Matrix::Ones(n, d);
  y.resize(n);
  const Vector w = rng.normal_vector(d - 1) / std::sqrt(static_cast<double>(d - 1));
  for (Index i = 0; i < n; ++i) {
    for (Index j = 1; j < d; ++j) x(i, j) = rng.normal();
    const double a = 0.3 + x.row(i).tail(d - 1).dot(w);
    y[i] = rng.uniform() < sigmoid(a) ? 1.0 : 0.0;
  }
}

GlmFitRequest request(Index d, const std::string& start) {
  GlmFitRequest r;
  r.likelihood = "logistic";
  r.method = "cvi";
  r.prior_precision = Vector::Ones(d);
  r.prior_precision[0] = 1e-6;  // the intercept's weak prior, as blr infer's default
  r.options.give("tolerance", 1e-11);  // the method's option by key, as blr.infer.glm takes it
  r.cvi_start = start;
  return r;
}

TEST(GlmFitCvi, BothStartsReachTheSameFixedPoint) {
  Matrix x;
  Vector y;
  logistic_data(600, 6, x, y);
  EXPECT_EQ(GlmFitRequest{}.cvi_start, "laplace");
  const GlmFit a = fit_glm(x, y, request(6, "laplace")), b = fit_glm(x, y, request(6, "prior"));
  ASSERT_TRUE(a.converged && b.converged);
  EXPECT_LT((a.mean - b.mean).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT((a.covariance.diagonal().cwiseSqrt() - b.covariance.diagonal().cwiseSqrt())
                .cwiseAbs()
                .maxCoeff(),
            1e-8);
  EXPECT_NEAR(*a.elbo, *b.elbo, 1e-9 * std::abs(*b.elbo));
  EXPECT_LT(a.iterations, b.iterations);  // the Laplace posterior is closer
}

TEST(GlmFitCvi, DefaultStartConvergesOnALargeDesignWithAWeakInterceptPrior) {
  Matrix x;
  Vector y;
  logistic_data(100000, 51, x, y);
  GlmFitRequest r = request(51, "laplace");
  r.options = GivenOptions{};  // the table's defaults
  const GlmFit f = fit_glm(x, y, r);
  EXPECT_TRUE(f.converged);
  EXPECT_LE(f.iterations, 20);
  EXPECT_TRUE(std::isfinite(*f.elbo));
}

TEST(GlmFitCvi, AnUnknownStartIsOneSentence) {
  Matrix x;
  Vector y;
  logistic_data(50, 3, x, y);
  try {
    fit_glm(x, y, request(3, "mode"));
    ADD_FAILURE() << "accepted the start 'mode'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("laplace or prior"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace blr::inference::glm_fit_cvi_start_testing
