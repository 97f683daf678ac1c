// EM as coordinate-wise BLR with ρ = 1: Old Faithful oracles D1 (step by step) and D2
// (research/peers.md §4(d)), and equality with textbook EM written plainly, iterate by iterate.
#include "blr/inference/gmm.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <cmath>
#include <limits>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/io/csv.hpp"

namespace blr::inference {
namespace {

Matrix faithful(const std::vector<std::string>& cols) {
  return io::CsvTable::read(std::string(BLR_DATA_DIR) + "/faithful.csv").numeric_columns(cols);
}

GaussianMixture one_d(std::vector<double> w, std::vector<double> mu, std::vector<double> sd) {
  GaussianMixture g;
  const Index k = static_cast<Index>(w.size());
  g.weights = Eigen::Map<Vector>(w.data(), k);
  g.means = Eigen::Map<Vector>(mu.data(), k);
  for (Index j = 0; j < k; ++j) g.covariances.push_back(Matrix::Constant(1, 1, sd[j] * sd[j]));
  return g;
}

TEST(Em, D1FaithfulWaitingStepByStep) {
  const Matrix x = faithful({"waiting"});
  ASSERT_EQ(x.rows(), 272);
  EXPECT_NEAR(x.sum(), 19284, 1e-9);
  EmOptions opt;
  opt.reg_covar = 0;
  opt.tolerance = 1e-14;
  const EmResult r = em(x, one_d({0.5, 0.5}, {55, 80}, {5, 5}), opt);
  ASSERT_GE(r.log_likelihoods.size(), 3u);
  EXPECT_NEAR(r.log_likelihoods[0], -1051.0896414, 5e-8);
  EXPECT_NEAR(r.log_likelihoods[1], -1034.1786395, 5e-8);
  EXPECT_NEAR(r.log_likelihoods[2], -1034.0541285, 5e-8);
  EXPECT_TRUE(r.converged);
  EXPECT_NEAR(r.log_likelihood, -1034.0017498, 5e-8);
  const auto& m = r.mixture;
  EXPECT_NEAR(m.weights[0], 0.36088608, 5e-8);
  EXPECT_NEAR(m.weights[1], 0.63911392, 5e-8);
  EXPECT_NEAR(m.means(0, 0), 54.61485624, 5e-7);
  EXPECT_NEAR(m.means(1, 0), 80.09106946, 5e-7);
  EXPECT_NEAR(std::sqrt(m.covariances[0](0, 0)), 5.87121949, 5e-7);
  EXPECT_NEAR(std::sqrt(m.covariances[1](0, 0)), 5.86773436, 5e-7);
  // EM never lowers the likelihood.
  for (std::size_t t = 1; t < r.log_likelihoods.size(); ++t)
    EXPECT_GE(r.log_likelihoods[t], r.log_likelihoods[t - 1] - 1e-9);
}

TEST(Em, D2FaithfulEruptionsFromKMeansPlusPlus) {
  const Matrix x = faithful({"eruptions"});
  EmOptions opt;
  opt.reg_covar = 0;
  opt.tolerance = 1e-14;
  opt.seed = 1;
  const EmResult r = em(x, opt);
  ASSERT_TRUE(r.converged);
  const Index lo = r.mixture.means(0, 0) < r.mixture.means(1, 0) ? 0 : 1, hi = 1 - lo;
  EXPECT_NEAR(r.log_likelihood, -276.3600405, 5e-7);
  EXPECT_NEAR(r.mixture.weights[lo], 0.34840463, 5e-7);
  EXPECT_NEAR(r.mixture.means(lo, 0), 2.01860782, 5e-7);
  EXPECT_NEAR(r.mixture.means(hi, 0), 4.27334342, 5e-7);
  EXPECT_NEAR(std::sqrt(r.mixture.covariances[lo](0, 0)), 0.23562177, 5e-7);
  EXPECT_NEAR(std::sqrt(r.mixture.covariances[hi](0, 0)), 0.43706314, 5e-7);
}

/// Textbook EM (Bishop, PRML §9.2.2), written plainly with loops.
GaussianMixture textbook_em_step(const Matrix& x, const GaussianMixture& g, bool diagonal) {
  const Index n = x.rows(), k = g.components(), d = x.cols();
  Matrix r(n, k);
  for (Index i = 0; i < n; ++i) {
    double total = 0;
    for (Index j = 0; j < k; ++j) {
      const Vector diff = x.row(i).transpose() - g.means.row(j).transpose();
      const Matrix& c = g.covariances[j];
      const double dens = std::exp(-0.5 * diff.dot(c.inverse() * diff)) /
                          std::sqrt(std::pow(2 * std::numbers::pi, d) * c.determinant());
      r(i, j) = g.weights[j] * dens;
      total += r(i, j);
    }
    r.row(i) /= total;
  }
  GaussianMixture out = g;
  for (Index j = 0; j < k; ++j) {
    double nk = 0;
    Vector mu = Vector::Zero(d);
    for (Index i = 0; i < n; ++i) {
      nk += r(i, j);
      mu += r(i, j) * x.row(i).transpose();
    }
    mu /= nk;
    Matrix cov = Matrix::Zero(d, d);
    for (Index i = 0; i < n; ++i) {
      const Vector diff = x.row(i).transpose() - mu;
      cov += r(i, j) * diff * diff.transpose();
    }
    cov /= nk;
    if (diagonal) cov = Matrix(cov.diagonal().asDiagonal());
    out.weights[j] = nk / n;
    out.means.row(j) = mu.transpose();
    out.covariances[j] = cov;
  }
  return out;
}

void expect_equal_to_textbook(CovarianceType type, int k) {
  const Matrix x = faithful({"eruptions", "waiting"});
  Rng rng(4);
  GaussianMixture g = kmeans_plus_plus_init(x, k, type, rng);
  GaussianMixture plain = g;
  double dev = 0;
  for (int t = 0; t < 25; ++t) {
    g = em_step(x, g, 0.0);
    plain = textbook_em_step(x, plain, type == CovarianceType::diagonal);
    dev = std::max(dev, (g.weights - plain.weights).cwiseAbs().maxCoeff());
    dev = std::max(dev, (g.means - plain.means).cwiseAbs().maxCoeff() / 100);
    for (int j = 0; j < k; ++j)
      dev = std::max(dev, (g.covariances[j] - plain.covariances[j]).cwiseAbs().maxCoeff() /
                              plain.covariances[j].cwiseAbs().maxCoeff());
  }
  EXPECT_LT(dev, 1e-9);
}

TEST(Em, FullCovarianceEqualsTextbookEmIterateByIterate) {
  expect_equal_to_textbook(CovarianceType::full, 3);
}

TEST(Em, DiagonalCovarianceEqualsTextbookEmIterateByIterate) {
  expect_equal_to_textbook(CovarianceType::diagonal, 2);
}

// Σ_i log Σ_k π_k N(x_i | μ_k, Σ_k), written plainly.
double textbook_log_likelihood(const Matrix& x, const GaussianMixture& g) {
  const Index d = x.cols();
  double ll = 0;
  for (Index i = 0; i < x.rows(); ++i) {
    double total = 0;
    for (Index j = 0; j < g.components(); ++j) {
      const Vector diff = x.row(i).transpose() - g.means.row(j).transpose();
      const Matrix& c = g.covariances[j];
      total += g.weights[j] * std::exp(-0.5 * diff.dot(c.inverse() * diff)) /
               std::sqrt(std::pow(2 * std::numbers::pi, d) * c.determinant());
    }
    ll += std::log(total);
  }
  return ll;
}

// scikit-learn's GaussianMixture.fit loop (sklearn/mixture/_base.py, 1.2), written plainly: each
// iteration's E-step gives the lower bound (the mean log-likelihood per point at the current θ),
// the M-step moves θ, and the loop stops when the bound changed by less than tol.
int sklearn_rule_iterations(const Matrix& x, GaussianMixture g, bool diagonal, double tol) {
  double lower_bound = -std::numeric_limits<double>::infinity();
  for (int n_iter = 1; n_iter <= 1000; ++n_iter) {
    const double prev = lower_bound;
    lower_bound = textbook_log_likelihood(x, g) / static_cast<double>(x.rows());
    g = textbook_em_step(x, g, diagonal);
    if (std::abs(lower_bound - prev) < tol) return n_iter;
  }
  return 1001;
}

// Issue 14: at the same tolerance on the mean log-likelihood and from the same θ_0, blr's rule
// (tested after each step, parameter condition off) stops exactly one step before scikit-learn's
// (which tests the bound of the θ before its last M-step).
TEST(Em, StopsOneStepBeforeScikitLearnsRuleAtTheSameTolerance) {
  const Matrix x = faithful({"eruptions", "waiting"});
  for (auto type : {CovarianceType::full, CovarianceType::diagonal}) {
    Rng rng(4);
    const GaussianMixture init = kmeans_plus_plus_init(x, 3, type, rng, 20, 0.0);
    for (double tol : {1e-2, 1e-4, 1e-6, 1e-8}) {
      EmOptions opt;
      opt.reg_covar = 0;
      opt.tolerance = tol;
      opt.parameter_tolerance = 0;
      const EmResult r = em(x, init, opt);
      const int sklearn = sklearn_rule_iterations(x, init, type == CovarianceType::diagonal, tol);
      ASSERT_TRUE(r.converged);
      ASSERT_LE(sklearn, 1000);
      EXPECT_EQ(r.iterations, sklearn - 1) << "tolerance " << tol;
      // The default's parameter condition can only add steps.
      opt.parameter_tolerance = 1e-9;
      EXPECT_GE(em(x, init, opt).iterations, r.iterations);
    }
  }
}

TEST(Em, FixedIterationsRunExactlyThatManySteps) {
  const Matrix x = faithful({"eruptions", "waiting"});
  Rng rng(4);
  const GaussianMixture init = kmeans_plus_plus_init(x, 2, CovarianceType::full, rng);
  EmOptions opt;
  opt.fixed_iterations = 7;
  opt.tolerance = 1e-1;  // met long before: the count still holds
  const EmResult r = em(x, init, opt);
  EXPECT_EQ(r.iterations, 7);
  EXPECT_EQ(r.log_likelihoods.size(), 8u);
  GaussianMixture g = init;
  for (int t = 0; t < 7; ++t) g = em_step(x, g, opt.reg_covar);
  EXPECT_EQ(r.mixture.means, g.means);  // the same steps, bit for bit
  EXPECT_EQ(r.log_likelihood, g.log_likelihood(x));
  opt.fixed_iterations = -1;
  EXPECT_THROW(em(x, init, opt), Error);
  opt.fixed_iterations = 0;
  opt.parameter_tolerance = -1e-9;
  EXPECT_THROW(em(x, init, opt), Error);
}

TEST(Em, MultivariateRunsAreMonotoneAndSeeded) {
  const Matrix x = faithful({"eruptions", "waiting"});
  for (auto type : {CovarianceType::full, CovarianceType::diagonal}) {
    EmOptions opt;
    opt.components = 3;
    opt.covariance = type;
    opt.seed = 9;
    const EmResult a = em(x, opt), b = em(x, opt);
    EXPECT_TRUE(a.converged);
    EXPECT_EQ(a.log_likelihood, b.log_likelihood);  // same seed, same run
    for (std::size_t t = 1; t < a.log_likelihoods.size(); ++t)
      EXPECT_GE(a.log_likelihoods[t], a.log_likelihoods[t - 1] - 1e-8);
    EXPECT_NEAR(a.responsibilities.rowwise().sum().maxCoeff(), 1.0, 1e-12);
  }
}

TEST(Em, BadOptionsAreErrors) {
  const Matrix x = faithful({"waiting"});
  EmOptions opt;
  opt.components = 0;
  EXPECT_THROW(em(x, opt), Error);
  opt.components = 300;
  EXPECT_THROW(em(x, opt), Error);
  opt.components = 2;
  opt.reg_covar = -1;
  EXPECT_THROW(em(x, opt), Error);
}

}  // namespace
}  // namespace blr::inference
