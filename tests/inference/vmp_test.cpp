// VMP (ρ = 1 on every node; the ELBO never decreases) and SVI (local ρ = 1, global ρ < 1 on
// minibatches) for the Normal–Gamma model and a Bayesian Gaussian mixture.
#include "blr/inference/vmp.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/gmm.hpp"
#include "blr/io/csv.hpp"

namespace blr::inference {
namespace {

void expect_non_decreasing(const std::vector<double>& e, double slack = 1e-9) {
  ASSERT_GE(e.size(), 2u);
  for (std::size_t t = 1; t < e.size(); ++t)
    EXPECT_GE(e[t], e[t - 1] - slack * std::max(1.0, std::abs(e[t]))) << "update " << t;
}

TEST(Vmp, NormalGammaFixedPointAndMonotoneElbo) {
  const NormalGammaPrior prior{0.0, 1.0, 1.0, 1.0};
  const Vector x = (Vector(5) << 1.2, 0.8, 2.1, 1.5, 0.4).finished();
  const NormalGammaResult r = normal_gamma_vmp(prior, x);
  ASSERT_TRUE(r.converged);
  expect_non_decreasing(r.elbos, 1e-14);
  // Bishop §10.1.3: m = (κ₀μ₀ + Σx)/(κ₀ + N) and a = a₀ + (N + 1)/2 at any sweep.
  EXPECT_NEAR(r.q.mean(), 1.0, 1e-14);
  EXPECT_NEAR(r.q.shape(), 4.0, 1e-14);
  // The remaining scalar fixed point, solved here by bisection on E[τ]:
  //   b(e) = b₀ + ½[κ₀((m−μ₀)² + v) + Σ(x−m)² + N v],  v = 1/((κ₀ + N) e),  e = a/b(e).
  auto f = [&](double e) {
    const double v = 1.0 / ((1.0 + 5.0) * e);
    const double b = 1.0 + 0.5 * ((1.0 + v) + (x.array() - 1.0).square().sum() + 5.0 * v);
    return 4.0 / b - e;
  };
  double lo = 1e-6, hi = 100;
  for (int i = 0; i < 200; ++i) (f(0.5 * (lo + hi)) > 0 ? lo : hi) = 0.5 * (lo + hi);
  EXPECT_NEAR(r.q.shape() / r.q.rate(), 0.5 * (lo + hi), 1e-10);
  // The ELBO is below the exact log evidence of the conjugate model (oracle §4(b):
  // −7.425906884239).
  EXPECT_LT(r.elbo, -7.425906884239);
  EXPECT_GT(r.elbo, -7.425906884239 - 0.5);
  // And the exact Normal–Gamma posterior (one ρ = 1 step) has the same E[μ].
  const NormalGamma ng{0.0, 1.0, 1.0, 1.0};
  const auto post = NormalGamma::params(
      conjugate_posterior(ng, std::vector<double>(x.data(), x.data() + 5), ng.prior_natural()));
  EXPECT_NEAR(post.mu, r.q.mean(), 1e-14);
}

TEST(Svi, NormalGammaMinibatchesApproachTheVmpFixedPoint) {
  Rng rng(2);
  Vector x(2000);
  for (Index i = 0; i < x.size(); ++i) x[i] = 2.0 + 0.5 * rng.normal();
  const NormalGammaPrior prior{0.0, 1.0, 1.0, 1.0};
  const NormalGammaResult vmp = normal_gamma_vmp(prior, x);
  SviOptions opt;
  opt.batch_size = 50;
  opt.iterations = 3000;
  opt.seed = 4;
  const NormalGammaResult svi = normal_gamma_svi(prior, x, opt);
  // Posterior sd of μ ≈ 0.5/√2000 ≈ 0.011; SVI's iterate sits within a fraction of it.
  EXPECT_NEAR(svi.q.mean(), vmp.q.mean(), 0.005);
  const double et_vmp = vmp.q.shape() / vmp.q.rate(), et_svi = svi.q.shape() / svi.q.rate();
  EXPECT_NEAR(et_svi / et_vmp, 1.0, 0.02);
  EXPECT_NEAR(svi.elbo, vmp.elbo, 0.5);
  EXPECT_LE(svi.elbo, vmp.elbo + 1e-9);
}

TEST(Svi, FullBatchWithUnitStepsIsVmp) {
  // M = N and ρ_t = 1 (κ = 1, τ = 1: ρ_t = 1/(t+1) — so use one iteration) equals one VMP sweep.
  const NormalGammaPrior prior{0.0, 1.0, 1.0, 1.0};
  const Vector x = (Vector(5) << 1.2, 0.8, 2.1, 1.5, 0.4).finished();
  SviOptions opt;
  opt.batch_size = 5;
  opt.iterations = 1;
  opt.delay = 1.0;
  opt.forget = 1.0;  // ρ_0 = 1
  const NormalGammaResult svi = normal_gamma_svi(prior, x, opt);
  VmpOptions one;
  one.max_iterations = 1;
  const NormalGammaResult vmp = normal_gamma_vmp(prior, x, one);
  EXPECT_NEAR(svi.q.mean(), vmp.q.mean(), 1e-14);
  EXPECT_NEAR(svi.q.rate(), vmp.q.rate(), 1e-12);
}

Matrix faithful() {
  return io::CsvTable::read(std::string(BLR_DATA_DIR) + "/faithful.csv")
      .numeric_columns({"eruptions", "waiting"});
}

TEST(Vmp, BayesianMixtureElboNeverDecreases) {
  const Matrix x = faithful();
  const BayesGmmResult r = bayes_gmm_vmp(x, 4, BayesGmmPrior{}, VmpOptions{}, 3);
  ASSERT_TRUE(r.converged);
  expect_non_decreasing(r.elbos);
  EXPECT_GT(r.elbos.back(), r.elbos.front());
  // Responsibilities are the ρ = 1 local step of the final q.
  EXPECT_LT((r.responsibilities - bayes_gmm_responsibilities(x, r.q)).cwiseAbs().maxCoeff(), 1e-6);
}

TEST(Vmp, BayesianMixtureAgreesWithEmAndPrunes) {
  const Matrix x = faithful();
  EmOptions eo;
  eo.components = 2;
  eo.seed = 1;
  const EmResult em_fit = em(x, eo);
  // Two components: the VB posterior means are close to the EM estimates.
  const BayesGmmResult two = bayes_gmm_vmp(x, 2, BayesGmmPrior{}, VmpOptions{}, 1);
  ASSERT_TRUE(two.converged);
  for (Index k = 0; k < 2; ++k) {
    double best = 1e300;
    for (Index j = 0; j < 2; ++j)
      best = std::min(best, (two.q.mean(k) - em_fit.mixture.means.row(j).transpose()).norm());
    EXPECT_LT(best, 0.5);  // waiting is in minutes (sd ≈ 13.6)
  }
  // Six components with a small Dirichlet concentration: the spare ones are emptied.
  BayesGmmPrior sparse;
  sparse.alpha0 = 1e-3;
  const BayesGmmResult six = bayes_gmm_vmp(x, 6, sparse, VmpOptions{}, 1);
  ASSERT_TRUE(six.converged);
  const Vector w = six.q.expected_weights();
  int used = 0;
  for (Index k = 0; k < 6; ++k) used += w[k] > 0.01;
  EXPECT_LE(used, 4);
  EXPECT_GE(used, 2);
}

TEST(Svi, BayesianMixtureMinibatchesReachTheVmpSolution) {
  const Matrix x = faithful();
  const BayesGmmResult vmp = bayes_gmm_vmp(x, 2, BayesGmmPrior{}, VmpOptions{}, 1);
  SviOptions opt;
  opt.batch_size = 20;
  opt.iterations = 3000;
  opt.seed = 1;
  const BayesGmmResult svi = bayes_gmm_svi(x, 2, BayesGmmPrior{}, opt, 500);
  EXPECT_EQ(svi.elbos.size(), 6u);
  EXPECT_GT(svi.elbo, vmp.elbo - 1.0);
  EXPECT_LE(svi.elbo, vmp.elbo + 1e-6);
  const Vector wv = vmp.q.expected_weights(), ws = svi.q.expected_weights();
  EXPECT_NEAR(std::min(ws[0], ws[1]), std::min(wv[0], wv[1]), 0.02);
}

TEST(Vmp, BadOptionsAreErrors) {
  const Vector x = Vector::Ones(3);
  EXPECT_THROW(normal_gamma_vmp({0.0, -1.0, 1.0, 1.0}, x), Error);
  SviOptions opt;
  opt.forget = 0.4;
  EXPECT_THROW(normal_gamma_svi({}, x, opt), Error);
  EXPECT_THROW(bayes_gmm_vmp(faithful(), 0, {}, {}, 0), Error);
}

}  // namespace
}  // namespace blr::inference
