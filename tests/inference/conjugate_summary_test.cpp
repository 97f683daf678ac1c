// The conjugate posterior summary (inference/conjugate_summary.hpp) against closed forms: each
// model's posterior hyperparameters (prior plus sufficient statistics), its marginals' moments and
// exact intervals (the laws' own quantiles, intervals.hpp), the Dirichlet's correlations and the
// log evidence. Equalities are to 1e-12 relative: the summary computes the same quantities
// through the natural parameters (conjugate.hpp), a few roundings apart.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "blr/core/error.hpp"
#include "blr/inference/conjugate_summary.hpp"
#include "blr/inference/intervals.hpp"
#include "error_message.hpp"

namespace blr::inference::conjugate_summary_testing {
namespace {

constexpr double kRel = 1e-12;

void expect_rel(double got, double want) {
  EXPECT_NEAR(got, want, kRel * std::max(1.0, std::abs(want))) << "want " << want;
}

double log_beta(double a, double b) { return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b); }

ConjugateProblem problem(const std::string& likelihood, Vector y, std::vector<double> prior = {}) {
  ConjugateProblem p;
  p.likelihood = likelihood;
  p.y = std::move(y);
  p.prior = std::move(prior);
  return p;
}

TEST(ConjugateSummary, BetaBernoulliIsTheClosedForm) {
  const auto s = fit_conjugate(problem("bernoulli", (Vector(7) << 1, 0, 1, 1, 0, 1, 1).finished(),
                                       {2, 3}));
  const double a = 7, b = 5;  // 2 + 5 successes, 3 + 2 failures
  EXPECT_EQ(s.posterior()["a"].get<double>(), a);
  EXPECT_EQ(s.posterior()["b"].get<double>(), b);
  const auto t = s.parameters(0.9);
  expect_rel(t.mean[0], a / (a + b));
  expect_rel(t.sd[0], std::sqrt(a * b / ((a + b) * (a + b) * (a + b + 1))));
  const auto ci = beta_interval(a, b, 0.9);
  expect_rel(t.lower[0], ci.lower);
  expect_rel(t.upper[0], ci.upper);
  expect_rel(*s.log_evidence(), log_beta(a, b) - log_beta(2, 3));
  EXPECT_EQ(t.distribution, "beta");
  EXPECT_EQ(s.observations(), 7);
}

TEST(ConjugateSummary, GammaPoissonIsTheClosedForm) {
  const Vector y = (Vector(5) << 3, 0, 4, 2, 6).finished();
  const auto s = fit_conjugate(problem("poisson", y, {2, 0.5}));
  const double shape = 2 + 15, rate = 0.5 + 5;
  expect_rel(s.posterior()["shape"].get<double>(), shape);
  expect_rel(s.posterior()["rate"].get<double>(), rate);
  const auto t = s.parameters();
  expect_rel(t.mean[0], shape / rate);
  expect_rel(t.sd[0], std::sqrt(shape) / rate);
  const auto ci = gamma_interval(shape, rate, 0.95);
  expect_rel(t.lower[0], ci.lower);
  expect_rel(t.upper[0], ci.upper);
  // log p(y) = a₀ ln b₀ − lnΓ(a₀) + lnΓ(a_N) − a_N ln b_N − Σ ln y_i!
  double want = 2 * std::log(0.5) - std::lgamma(2) + std::lgamma(shape) - shape * std::log(rate);
  for (Index i = 0; i < y.size(); ++i) want -= std::lgamma(y[i] + 1);
  expect_rel(*s.log_evidence(), want);
}

TEST(ConjugateSummary, DirichletMarginalsAndCorrelations) {
  auto p = problem("categorical", (Vector(6) << 0, 1, 0, 2, 0, 1).finished(), {1, 2, 0.5});
  p.classes = {"red", "blue", "green"};
  const auto s = fit_conjugate(p);
  const Vector alpha = (Vector(3) << 4, 4, 1.5).finished();  // prior + counts (3, 2, 1)
  const double a0 = alpha.sum();
  EXPECT_EQ(s.names(), p.classes);
  const auto t = s.parameters(0.8);
  for (Index k = 0; k < 3; ++k) {
    const double a = alpha[k], b = a0 - a;
    expect_rel(t.mean[k], a / a0);
    expect_rel(t.sd[k], std::sqrt(a * b / (a0 * a0 * (a0 + 1))));
    const auto ci = beta_interval(a, b, 0.8);
    expect_rel(t.lower[k], ci.lower);
    expect_rel(t.upper[k], ci.upper);
  }
  // corr(p_i, p_j) = −√(α_i α_j / ((α₀ − α_i)(α₀ − α_j))).
  const Matrix& r = *s.correlation();
  expect_rel(r(0, 1), -std::sqrt(alpha[0] * alpha[1] / ((a0 - alpha[0]) * (a0 - alpha[1]))));
  expect_rel(r(2, 2), 1.0);
  // log p(y) = ln B(α_N) − ln B(α₀), B(α) = Π Γ(α_k) / Γ(Σ α_k).
  const auto log_b = [](const Vector& a) {
    double out = -std::lgamma(a.sum());
    for (Index k = 0; k < a.size(); ++k) out += std::lgamma(a[k]);
    return out;
  };
  expect_rel(*s.log_evidence(), log_b(alpha) - log_b((Vector(3) << 1, 2, 0.5).finished()));
}

TEST(ConjugateSummary, NormalGammaMarginalsAreStudentTAndGamma) {
  const Vector y = (Vector(6) << 1.2, 0.7, 2.1, 1.6, 0.9, 1.4).finished();
  const double mu0 = 0.5, k0 = 2, a0 = 3, b0 = 1.5;
  const auto s = fit_conjugate(problem("normal", y, {mu0, k0, a0, b0}));
  // Murphy (2007), eqs. 86–89.
  const double n = 6, ybar = y.mean();
  const double ss = (y.array() - ybar).square().sum();
  const double kn = k0 + n, mun = (k0 * mu0 + n * ybar) / kn, an = a0 + n / 2;
  const double bn = b0 + 0.5 * ss + k0 * n * (ybar - mu0) * (ybar - mu0) / (2 * kn);
  expect_rel(s.posterior()["mu"].get<double>(), mun);
  expect_rel(s.posterior()["kappa"].get<double>(), kn);
  expect_rel(s.posterior()["alpha"].get<double>(), an);
  expect_rel(s.posterior()["beta"].get<double>(), bn);
  const auto t = s.parameters(0.95);
  EXPECT_EQ(t.distribution, "gamma,student-t");
  const auto cm = student_t_interval(2 * an, mun, std::sqrt(bn / (an * kn)), 0.95);
  const auto ct = gamma_interval(an, bn, 0.95);
  expect_rel(t.lower[0], cm.lower);
  expect_rel(t.upper[0], cm.upper);
  expect_rel(t.lower[1], ct.lower);
  expect_rel(t.upper[1], ct.upper);
  expect_rel(t.sd[0], std::sqrt(bn / ((an - 1) * kn)));
  // log p(y) = lnΓ(α_N) − lnΓ(α₀) + α₀ ln β₀ − α_N ln β_N + ½ ln(κ₀/κ_N) − (n/2) ln 2π.
  expect_rel(*s.log_evidence(), std::lgamma(an) - std::lgamma(a0) + a0 * std::log(b0) -
                                    an * std::log(bn) + 0.5 * std::log(k0 / kn) -
                                    n / 2 * std::log(2 * M_PI));
}

TEST(ConjugateSummary, MeanFieldReportsItsElboAndGaussianMean) {
  const Vector y = (Vector(6) << 1.2, 0.7, 2.1, 1.6, 0.9, 1.4).finished();
  auto p = problem("normal", y, {0.5, 2, 3, 1.5});
  p.method = "vmp";
  const auto s = fit_conjugate(p);
  EXPECT_TRUE(s.converged());
  EXPECT_FALSE(s.log_evidence().has_value());
  ASSERT_TRUE(s.elbo().has_value());
  // The ELBO bounds the exact evidence from below.
  const auto exact = fit_conjugate(problem("normal", y, {0.5, 2, 3, 1.5}));
  EXPECT_LT(*s.elbo(), *exact.log_evidence());
  EXPECT_EQ(s.parameters().distribution, "gamma,normal");
  const auto j = s.to_json(0.9);
  EXPECT_EQ(j["method"], "vmp");
  EXPECT_TRUE(j.contains("elbo") && !j.contains("log_evidence") && !j.contains("note"));
  p.method = "svi";
  p.svi.iterations = 50;
  const auto svi = fit_conjugate(p);
  EXPECT_FALSE(svi.converged());
  EXPECT_EQ(svi.iterations(), 50);
  EXPECT_TRUE(svi.to_json().contains("note"));
}

TEST(ConjugateSummary, TableAndJsonAgree) {
  const auto s = fit_conjugate(problem("bernoulli", (Vector(4) << 1, 1, 0, 1).finished()));
  const auto j = s.to_json(0.9);
  const std::string text = s.table(0.9);
  EXPECT_NE(text.find("theta"), std::string::npos);
  EXPECT_NE(text.find("Beta(4, 2)"), std::string::npos);
  EXPECT_NE(text.find("95%"), std::string::npos);
  EXPECT_EQ(j["lower"][0].get<double>(), s.parameters(0.9).lower[0]);
  EXPECT_THROW(s.to_json(1.0), Error);
}

TEST(ConjugateSummary, BadProblemsAreSentences) {
  const auto refused = [](ConjugateProblem p, const char* words) {
    blr::testing::expect_error([&] { fit_conjugate(p); }, words);
  };
  refused(problem("bernoulli", (Vector(2) << 1, 2).finished()), "each must be 0 or 1");
  refused(problem("poisson", (Vector(2) << 1, -1).finished()), "non-negative whole count");
  refused(problem("normal", (Vector(2) << 1, NAN).finished()), "each must be finite");
  refused(problem("normal", (Vector(2) << 1, 2).finished(), {0, 1}), "needs 4 numbers");
  refused(problem("binomial", Vector::Ones(2)), "bernoulli, poisson, normal or categorical");
  auto vmp = problem("poisson", Vector::Ones(2));
  vmp.method = "vmp";
  refused(vmp, "takes exact");
  refused(problem("categorical", Vector::Zero(2)), "names of its classes");
  auto beyond = problem("categorical", (Vector(2) << 0, 2).finished());
  beyond.classes = {"a", "b"};
  refused(beyond, "class index below the number of classes");
}

}  // namespace
}  // namespace blr::inference::conjugate_summary_testing
