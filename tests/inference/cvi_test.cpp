// CVI (eqs. 58–60): the fixed point equals an independent direct maximisation of the ELBO (BFGS on
// (m, L) written plainly here), full ≥ mean-field ELBO, ELBO = log-evidence for a conjugate
// Gaussian model, Monte Carlo estimates, and GP classification (site form, eq. 60).
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <functional>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/glm.hpp"
#include "blr/io/csv.hpp"
#include "inference/pima.hpp"

namespace blr::inference {
namespace {

// ---- A plain BFGS with Armijo backtracking -----------------------------------------------------
Vector bfgs(const std::function<double(const Vector&, Vector&)>& f, Vector x, double gtol,
            int max_iter = 5000) {
  const Index n = x.size();
  Matrix hinv = Matrix::Identity(n, n);
  Vector g;
  double fx = f(x, g);
  for (int it = 0; it < max_iter && g.cwiseAbs().maxCoeff() > gtol; ++it) {
    Vector p = -hinv * g;
    if (p.dot(g) >= 0) {
      hinv.setIdentity();
      p = -g;
    }
    double step = 1.0, fn = 0;
    Vector xn, gn;
    for (int ls = 0; ls < 60; ++ls) {
      xn = x + step * p;
      fn = f(xn, gn);
      if (std::isfinite(fn) && fn <= fx + 1e-4 * step * g.dot(p)) break;
      // Near the optimum the Armijo decrease (~|g|²) falls below the rounding of f (~1e-16|f|):
      // there a step that keeps f within its rounding and shrinks |g| is progress.
      if (std::isfinite(fn) && std::abs(fn - fx) <= 1e-13 * std::abs(fx) && gn.norm() < g.norm())
        break;
      step *= 0.5;
    }
    const Vector s = xn - x, yv = gn - g;
    const double sy = s.dot(yv);
    if (sy > 1e-300) {
      const double r = 1.0 / sy;
      const Matrix eye = Matrix::Identity(n, n);
      hinv = (eye - r * s * yv.transpose()) * hinv * (eye - r * yv * s.transpose()) +
             r * s * s.transpose();
    }
    x = xn;
    g = gn;
    fx = fn;
  }
  EXPECT_LE(g.cwiseAbs().maxCoeff(), gtol) << "BFGS did not converge";
  return x;
}

/// E_i, ∂E_i/∂m_a, ∂E_i/∂v of the ELBO's expected log-likelihood, differentiating the same
/// quadrature rule the library uses (logistic) or the closed form (Poisson, Gaussian).
void site_and_derivatives(const Glm& model, const GaussHermite& gh, double y, double m, double v,
                          double& e, double& dm, double& dv) {
  if (model.likelihood != Likelihood::logistic) {
    const SiteTerms t = expected_site_terms(model.likelihood, y, m, v, gh, model.noise_precision);
    e = t.value;
    dm = t.gradient;
    dv = 0.5 * t.hessian;  // exact for these closed forms
    return;
  }
  e = dm = dv = 0;
  const double s = std::sqrt(v);
  for (Index k = 0; k < gh.size(); ++k) {
    const double a = m + s * gh.nodes()[k];
    const double sig = 1 / (1 + std::exp(-a));
    const double sp = a > 0 ? a + std::log1p(std::exp(-a)) : std::log1p(std::exp(a));
    e += gh.weights()[k] * (y * a - sp);
    dm += gh.weights()[k] * (y - sig);
    dv += gh.weights()[k] * (y - sig) * gh.nodes()[k] / (2 * s);
  }
}

/// Direct maximisation of the full-Gaussian ELBO over (m, L), Σ = LLᵀ, log-diagonal L.
struct DirectFit {
  Vector mean;
  Matrix covariance;
  double elbo;
};

DirectFit direct_full(const Glm& model, const GaussHermite& gh) {
  const Index d = model.dimension();
  const Index np = d + d * (d + 1) / 2;
  auto unpack = [d](const Vector& t, Vector& m, Matrix& l) {
    m = t.head(d);
    l = Matrix::Zero(d, d);
    Index k = d;
    for (Index j = 0; j < d; ++j)
      for (Index i = j; i < d; ++i) l(i, j) = (i == j) ? std::exp(t[k++]) : t[k++];
  };
  auto negelbo = [&](const Vector& t, Vector& grad) {
    Vector m;
    Matrix l;
    unpack(t, m, l);
    const Matrix cov = l * l.transpose();
    double elbo = 0;
    Vector gm = Vector::Zero(d);
    Matrix gcov = Matrix::Zero(d, d);  // ∂ELBO/∂Σ
    for (Index i = 0; i < model.x.rows(); ++i) {
      const Vector xi = model.x.row(i).transpose();
      double e, dm, dv;
      site_and_derivatives(model, gh, model.y[i], xi.dot(m), xi.dot(cov * xi), e, dm, dv);
      elbo += e;
      gm += dm * xi;
      gcov += dv * xi * xi.transpose();
    }
    const Vector r = m - model.prior_mean;
    elbo +=
        -0.5 *
            (model.prior_precision.array() * (r.array().square() + cov.diagonal().array())).sum() +
        0.5 * model.prior_precision.array().log().sum() - 0.5 * d * std::log(2 * std::numbers::pi);
    elbo += 0.5 * d * (1 + std::log(2 * std::numbers::pi)) + l.diagonal().array().log().sum();
    gm -= model.prior_precision.cwiseProduct(r);
    gcov.diagonal() -= 0.5 * model.prior_precision;
    const Matrix gl = 2 * gcov * l;  // ∂/∂L of the Σ-dependent terms
    grad.resize(np);
    grad.head(d) = -gm;
    Index k = d;
    for (Index j = 0; j < d; ++j)
      for (Index i = j; i < d; ++i) grad[k++] = (i == j) ? -(gl(i, i) * l(i, i) + 1.0) : -gl(i, j);
    return -elbo;
  };
  // Start at the Laplace approximation (independent of CVI).
  const LaplaceResult lap = laplace(model);
  const Eigen::LLT<Matrix> llt(lap.covariance);
  const Matrix l0 = llt.matrixL();
  Vector t(np);
  t.head(d) = lap.mean;
  Index k = d;
  for (Index j = 0; j < d; ++j)
    for (Index i = j; i < d; ++i) t[k++] = (i == j) ? std::log(l0(i, i)) : l0(i, j);
  t = bfgs(negelbo, t, 1e-9);
  DirectFit out;
  Matrix l;
  unpack(t, out.mean, l);
  out.covariance = l * l.transpose();
  Vector g;
  out.elbo = -negelbo(t, g);
  return out;
}

/// Direct maximisation of the mean-field ELBO over (m, log σ).
DirectFit direct_diag(const Glm& model, const GaussHermite& gh) {
  const Index d = model.dimension();
  auto negelbo = [&](const Vector& t, Vector& grad) {
    const Vector m = t.head(d), var = (2 * t.tail(d)).array().exp();
    double elbo = 0;
    Vector gm = Vector::Zero(d), gvar = Vector::Zero(d);
    for (Index i = 0; i < model.x.rows(); ++i) {
      const Vector xi = model.x.row(i).transpose();
      double e, dm, dv;
      site_and_derivatives(model, gh, model.y[i], xi.dot(m), xi.cwiseAbs2().dot(var), e, dm, dv);
      elbo += e;
      gm += dm * xi;
      gvar += dv * xi.cwiseAbs2();
    }
    const Vector r = m - model.prior_mean;
    elbo += -0.5 * (model.prior_precision.array() * (r.array().square() + var.array())).sum() +
            t.tail(d).sum();
    gm -= model.prior_precision.cwiseProduct(r);
    gvar -= 0.5 * model.prior_precision;
    grad.resize(2 * d);
    grad.head(d) = -gm;
    grad.tail(d) = -(2 * var.cwiseProduct(gvar)).array() - 1.0;
    return -elbo;
  };
  const LaplaceResult lap = laplace(model);
  Vector t(2 * d);
  t << lap.mean, 0.5 * lap.covariance.diagonal().array().log().matrix();
  t = bfgs(negelbo, t, 1e-9);
  DirectFit out;
  out.mean = t.head(d);
  out.covariance = (2 * t.tail(d)).array().exp().matrix().asDiagonal();
  Vector g;
  out.elbo = -negelbo(t, g);  // up to the constants common to both (not compared)
  return out;
}

Glm pima_logistic() {
  const auto p = testing::load_pima();
  return Glm::with_isotropic_prior(p.x_train, p.y_train, Likelihood::logistic, 1.0);
}

Glm pima_poisson() {
  const auto p = testing::load_pima();
  Matrix x(p.x_train.rows(), 7);
  x << p.x_train.col(0), p.x_train.rightCols(6);
  return Glm::with_isotropic_prior(x, p.npreg_train, Likelihood::poisson, 1.0);
}

void expect_monotone(const std::vector<double>& e) {
  for (std::size_t t = 1; t < e.size(); ++t) EXPECT_GE(e[t], e[t - 1] - 1e-9 * std::abs(e[t]));
}

// From the prior and from the Laplace posterior (cvi_laplace_start): the same fixed point, the
// direct maximiser's. (On Pima the warm start takes more iterations — logistic 37 instead of 20,
// Poisson 30 instead of 25 — so it is not the default; on 10⁵ rows it halves them.)
void expect_full_fixed_point(const Glm& model) {
  const DirectFit d = direct_full(model, GaussHermite(32));
  const CviLaplaceStart warm = cvi_laplace_start(model, GaussianFamilyKind::full);
  const CviResult cold = cvi(model), r = cvi(model, {}, &warm.natural);
  EXPECT_GT(warm.laplace_iterations, 0);
  for (const CviResult* f : {&cold, &r}) {
    ASSERT_TRUE(f->converged);
    expect_monotone(f->elbos);
    EXPECT_LT((f->mean - d.mean).cwiseAbs().maxCoeff(), 1e-6);
    EXPECT_LT((f->covariance - d.covariance).cwiseAbs().maxCoeff(), 1e-6);
    EXPECT_NEAR(f->elbo, d.elbo, 1e-8);
  }
}

TEST(Cvi, FullFixedPointEqualsDirectElboMaximisationLogistic) {
  expect_full_fixed_point(pima_logistic());
}

TEST(Cvi, FullFixedPointEqualsDirectElboMaximisationPoisson) {
  expect_full_fixed_point(pima_poisson());
}

TEST(Cvi, DiagonalFixedPointEqualsDirectMeanFieldMaximisation) {
  const Glm model = pima_logistic();
  CviOptions opt;
  opt.family = GaussianFamilyKind::diagonal;
  const CviLaplaceStart warm = cvi_laplace_start(model, GaussianFamilyKind::diagonal);
  const CviResult cold = cvi(model, opt), r = cvi(model, opt, &warm.natural);
  const DirectFit d = direct_diag(model, GaussHermite(32));
  for (const CviResult* f : {&cold, &r}) {
    ASSERT_TRUE(f->converged);
    expect_monotone(f->elbos);
    EXPECT_LT((f->mean - d.mean).cwiseAbs().maxCoeff(), 1e-6);
    EXPECT_LT((f->covariance.diagonal() - d.covariance.diagonal()).cwiseAbs().maxCoeff(), 1e-6);
  }
}

TEST(Cvi, FullElboIsAtLeastMeanFieldElbo) {
  for (const Glm& model : {pima_logistic(), pima_poisson()}) {
    CviOptions diag;
    diag.family = GaussianFamilyKind::diagonal;
    const CviResult f = cvi(model), m = cvi(model, diag);
    EXPECT_GT(f.elbo, m.elbo);
    // Both are ELBOs of the same model, so the mean-field one is also computable by glm_elbo.
    EXPECT_NEAR(glm_elbo(model, m.mean, m.covariance, GaussHermite(32)), m.elbo, 1e-9);
  }
}

TEST(Cvi, ElboIsBelowAnImportanceSampledLogEvidence) {
  // log p(y) = log E_q[p(y, w)/q(w)] ≥ E_q[log p(y, w)/q(w)] = ELBO; estimate the left side with
  // 10⁵ draws from the CVI posterior itself (its log-weights vary by little, so the estimate's
  // standard error is far below the gap).
  const Glm model = pima_logistic();
  const CviResult f = cvi(model);
  const Eigen::LLT<Matrix> llt(f.covariance);
  const Matrix l = llt.matrixL();
  const double half_logdet = l.diagonal().array().log().sum();
  const Index d = model.dimension();
  Rng rng(1);
  const int n = 100000;
  Vector lw(n);
  for (int s = 0; s < n; ++s) {
    const Vector z = rng.normal_vector(d);
    const double log_q =
        -0.5 * z.squaredNorm() - half_logdet - 0.5 * d * std::log(2 * std::numbers::pi);
    lw[s] = -model.value(f.mean + l * z) - log_q;
  }
  const double mx = lw.maxCoeff();
  const Vector w = (lw.array() - mx).exp();
  const double log_z = mx + std::log(w.mean());
  const double se =
      std::sqrt((w.array() - w.mean()).square().mean() / n) / w.mean();  // delta method
  EXPECT_LT(se, 1e-3);
  EXPECT_LT(f.elbo, log_z - 10 * se);
  EXPECT_LT(log_z - f.elbo, 0.1);  // and q is a good approximation
}

TEST(Cvi, ElboEqualsLogEvidenceForBayesianLinearRegression) {
  // Oracle A1: conjugate, so full-Gaussian CVI is exact in one ρ = 1 step; mean-field is below.
  Matrix x(5, 2);
  for (int i = 0; i < 5; ++i) x.row(i) << 1.0, i;
  Vector y(5);
  y << 1.0, 2.9, 5.2, 6.8, 9.1;
  Glm model = Glm::with_isotropic_prior(x, y, Likelihood::gaussian, 1.0);
  model.noise_precision = 4.0;
  const double log_evidence = -7.227582424408;
  const CviResult f = cvi(model);
  EXPECT_TRUE(f.converged);
  EXPECT_LE(f.iterations, 2);
  EXPECT_NEAR(f.elbo, log_evidence, 1e-10);
  EXPECT_NEAR(f.mean[0], 0.9394261424, 1e-10);
  EXPECT_NEAR(f.covariance(0, 1), -0.04250797, 1e-8);
  CviOptions diag;
  diag.family = GaussianFamilyKind::diagonal;
  const CviResult m = cvi(model, diag);
  EXPECT_TRUE(m.converged);
  EXPECT_LT(m.elbo, log_evidence - 0.1);
  // Mean-field variances are the inverse diagonal of the posterior precision (21, 121).
  EXPECT_NEAR(m.covariance(0, 0), 1.0 / 21, 1e-10);
  EXPECT_NEAR(m.covariance(1, 1), 1.0 / 121, 1e-10);
}

TEST(Cvi, MonteCarloEstimatesApproachTheQuadratureFixedPoint) {
  const Glm model = pima_logistic();
  const CviResult exact = cvi(model);
  CviOptions mc;
  mc.monte_carlo = true;
  mc.samples = 64;
  mc.max_iterations = 300;
  mc.seed = 5;
  const CviResult r = cvi(model, mc);
  // Posterior sds are ≈ 0.2; the noisy iterate sits within a fraction of one.
  EXPECT_LT((r.mean - exact.mean).cwiseAbs().maxCoeff(), 0.02);
  EXPECT_LT((r.covariance.diagonal() - exact.covariance.diagonal()).cwiseAbs().maxCoeff() /
                exact.covariance.diagonal().minCoeff(),
            0.1);
}

TEST(Cvi, GaussHermiteIsExactForPolynomials) {
  const GaussHermite gh(10);
  EXPECT_NEAR(gh.weights().sum(), 1.0, 1e-14);
  // E[a⁴] for a ~ N(1, 2): m⁴ + 6m²v + 3v² = 1 + 12 + 12 = 25.
  EXPECT_NEAR(gh.expect(1.0, 2.0, [](double a) { return a * a * a * a; }), 25.0, 1e-12);
  EXPECT_THROW(GaussHermite(0), Error);
}

// ---- GP classification
// ---------------------------------------------------------------------------

TEST(GpCvi, LinearKernelEqualsWeightSpaceCvi) {
  // K = X diag(p₀)⁻¹ Xᵀ makes f = Xw; function-space and weight-space CVI must agree.
  const Glm model = pima_logistic();
  const Matrix k = model.x * model.x.transpose();  // p₀ = 1
  const GpcResult g = gp_cvi(k, model.y, Likelihood::logistic);
  ASSERT_TRUE(g.converged);
  expect_monotone(g.elbos);
  const CviResult w = cvi(model);
  const Vector f_mean = model.x * w.mean;
  const Vector f_var = (model.x * w.covariance).cwiseProduct(model.x).rowwise().sum();
  EXPECT_LT((g.mean - f_mean).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_LT((g.variance - f_var).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_NEAR(g.elbo, w.elbo, 1e-6);
  // Predictions at the test inputs agree too.
  const auto p = testing::load_pima();
  Vector mean, var;
  gp_predict_latent(k, g, model.x * p.x_test.transpose(), p.x_test.rowwise().squaredNorm(), mean,
                    var);
  EXPECT_LT((mean - p.x_test * w.mean).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_LT((var - (p.x_test * w.covariance).cwiseProduct(p.x_test).rowwise().sum())
                .cwiseAbs()
                .maxCoeff(),
            1e-6);
}

TEST(GpCvi, RipleySynthWithRbfKernel) {
  const auto train = io::CsvTable::read(std::string(BLR_DATA_DIR) + "/synth_train.csv");
  const auto test = io::CsvTable::read(std::string(BLR_DATA_DIR) + "/synth_test.csv");
  const Matrix x = train.numeric_columns({"xs", "ys"}), xt = test.numeric_columns({"xs", "ys"});
  const Vector y = train.binary_labels("yc", "1", {"0", "1"});
  const Vector yt = test.binary_labels("yc", "1", {"0", "1"});
  const Matrix k = rbf_kernel(x, x, 0.5, 4.0);
  const GpcResult g = gp_cvi(k, y, Likelihood::logistic);
  ASSERT_TRUE(g.converged);
  expect_monotone(g.elbos);
  // At the fixed point each site equals its target: τ_i = −E[h_i] ∈ (0, ¼].
  EXPECT_GT(g.site_tau.minCoeff(), 0.0);
  EXPECT_LE(g.site_tau.maxCoeff(), 0.25);
  Vector mean, var;
  gp_predict_latent(k, g, rbf_kernel(x, xt, 0.5, 4.0), Vector::Constant(xt.rows(), 4.0), mean, var);
  const Predictive pred = predict_latent(Likelihood::logistic, mean, var, yt);
  const TestMetrics t = test_metrics(Likelihood::logistic, pred, yt);
  EXPECT_GT(t.accuracy, 0.88);  // Bayes error is about 8%
  EXPECT_LT(t.nll, 0.3);
}

}  // namespace
}  // namespace blr::inference
