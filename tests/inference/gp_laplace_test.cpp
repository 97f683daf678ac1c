// GP classification by Laplace (gp_laplace.hpp, GPML Algs. 3.1, 3.2, 5.1): the mode is the fixed
// point f = K∇log p(y | f); on 1–3 points the evidence and predictive equal Newton and dense
// determinants written plainly here; the evidence gradient (explicit + implicit term) equals
// central differences for three kernels and two likelihoods; with a Gaussian likelihood Laplace is
// exact GP regression; Laplace and CVI agree on Ripley's data and both beat the prior; the evidence
// and its gradient equal scikit-learn's.
#include <gtest/gtest.h>

#include <Eigen/LU>

#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/family/special.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/gp_hyperparameters.hpp"
#include "blr/inference/gp_laplace.hpp"
#include "blr/inference/gp_regression.hpp"
#include "blr/inference/kernels.hpp"
#include "inference/gp_testing.hpp"

namespace blr::inference {
namespace {

using testing::central_difference;
using testing::load_synth;

GpLaplaceOptions tight() {
  GpLaplaceOptions o;
  o.tolerance = 1e-13;
  return o;
}

TEST(GpLaplace, ModeIsTheFixedPointOfTheGradient) {
  const auto d = load_synth();
  for (KernelKind kind : {KernelKind::rbf, KernelKind::matern52}) {
    const Matrix k = Kernel{kind, 0.5, 4.0}.matrix(d.x_train, d.x_train);
    const GpLaplaceResult r = gp_laplace(k, d.y_train, Likelihood::logistic);
    ASSERT_TRUE(r.converged);
    EXPECT_LE(r.iterations, 10);  // Newton: quadratic convergence
    Vector grad(k.rows());
    for (Index i = 0; i < k.rows(); ++i)
      grad[i] = site_terms(Likelihood::logistic, d.y_train[i], r.mode[i]).gradient;
    // f̂ − K∇ = K(a − ∇) and the stopping rule max|a − ∇| ≤ 1e-10 bound it by ‖K‖∞·1e-10.
    const double bound = k.cwiseAbs().rowwise().sum().maxCoeff() * 1e-10;
    EXPECT_LE((r.mode - k * grad).cwiseAbs().maxCoeff(), bound);
    EXPECT_LE((r.mode - k * r.a).cwiseAbs().maxCoeff(), 1e-12 * r.mode.cwiseAbs().maxCoeff());
    // W of the logistic likelihood lies in (0, ¼].
    EXPECT_GT(r.w.minCoeff(), 0.0);
    EXPECT_LE(r.w.maxCoeff(), 0.25);
  }
}

/// The Laplace approximation written plainly: Newton on f with K⁻¹ formed explicitly, and eq. 3.32
/// in its first form, log q = log p(y | f̂) − ½ f̂ᵀK⁻¹f̂ − ½ log det(I + KW).
struct PlainLaplace {
  Vector f;
  double log_q = 0;
  Matrix k_inv;
  Vector w;
};
PlainLaplace plain_laplace(const Matrix& k, const Vector& y) {
  const Index n = k.rows();
  PlainLaplace p;
  p.k_inv = k.inverse();
  p.f = Vector::Zero(n);
  p.w.resize(n);
  Vector g(n);
  for (int it = 0; it < 100; ++it) {
    for (Index i = 0; i < n; ++i) {
      const double s = 1 / (1 + std::exp(-p.f[i]));
      g[i] = y[i] - s;
      p.w[i] = s * (1 - s);
    }
    const Matrix h = p.k_inv + Matrix(p.w.asDiagonal());
    p.f += h.inverse() * (g - p.k_inv * p.f);  // Newton on Ψ(f) = log p(y | f) − ½fᵀK⁻¹f
  }
  double loglik = 0;
  for (Index i = 0; i < n; ++i) {
    const double s = 1 / (1 + std::exp(-p.f[i]));
    p.w[i] = s * (1 - s);
    loglik += y[i] * std::log(s) + (1 - y[i]) * std::log(1 - s);
  }
  const Matrix ikw = Matrix::Identity(n, n) + k * Matrix(p.w.asDiagonal());
  p.log_q = loglik - 0.5 * p.f.dot(p.k_inv * p.f) - 0.5 * std::log(ikw.determinant());
  return p;
}

TEST(GpLaplace, EqualsPlainNewtonAndDeterminantsOnOneToThreePoints) {
  Matrix x(3, 1);
  x << 0.0, 0.7, -0.4;
  Vector y(3);
  y << 1, 0, 1;
  Vector xs(1);
  xs << 0.3;
  for (Index n = 1; n <= 3; ++n) {
    const Kernel kern{KernelKind::rbf, 0.8, 2.0};
    const Matrix xn = x.topRows(n), k = kern.matrix(xn, xn);
    const Vector yn = y.head(n);
    const GpLaplaceResult r = gp_laplace(k, yn, Likelihood::logistic, tight());
    ASSERT_TRUE(r.converged);
    const PlainLaplace p = plain_laplace(k, yn);
    // O(1) quantities from 2×2 and 3×3 inverses (condition number < 100): rounding ~1e-14.
    EXPECT_NEAR(r.log_marginal_likelihood, p.log_q, 1e-12) << n;
    EXPECT_LT((r.mode - p.f).cwiseAbs().maxCoeff(), 1e-12) << n;
    // Predictive at x* (Alg. 3.2 against its definition): mean k*ᵀK⁻¹f̂,
    // variance k** − k*ᵀ(K + W⁻¹)⁻¹k*.
    const Matrix xstar = xs.transpose();
    const Matrix ks = kern.matrix(xn, xstar);
    Vector mean, var;
    gp_laplace_predict_latent(r, ks, kern.diagonal(xstar), mean, var);
    const Matrix kw = k + Matrix(p.w.cwiseInverse().asDiagonal());
    EXPECT_NEAR(mean[0], (ks.transpose() * p.k_inv * p.f)(0), 1e-12);
    EXPECT_NEAR(var[0], kern.variance() - (ks.transpose() * kw.inverse() * ks)(0), 1e-12);
  }
  // One point in scalars: f = k(y − σ(f)), log q = log σ(f) − f²/2k − ½ log(1 + k σ(1 − σ)).
  const double k = 1.7;
  double f = 0;
  for (int it = 0; it < 100; ++it) {
    const double s = 1 / (1 + std::exp(-f)), g = 1 - s - f / k, h = -s * (1 - s) - 1 / k;
    f -= g / h;
  }
  const double s = 1 / (1 + std::exp(-f));
  const double log_q = std::log(s) - f * f / (2 * k) - 0.5 * std::log(1 + k * s * (1 - s));
  const GpLaplaceResult r =
      gp_laplace(Matrix::Constant(1, 1, k), Vector::Ones(1), Likelihood::logistic);
  EXPECT_NEAR(r.mode[0], f, 1e-12);
  EXPECT_NEAR(r.log_marginal_likelihood, log_q, 1e-12);
}

TEST(GpLaplace, EvidenceGradientEqualsCentralDifferences) {
  const auto d = load_synth(8);  // 32 points: quick, and both classes
  Vector counts(d.y_train.size());
  for (Index i = 0; i < counts.size(); ++i) counts[i] = std::floor(2 + 2 * d.x_train(i, 0));
  counts = counts.cwiseMax(0.0);
  struct Case {
    KernelKind kind;
    Likelihood lik;
    const Vector* y;
  };
  for (const Case& c : {Case{KernelKind::rbf, Likelihood::logistic, &d.y_train},
                        Case{KernelKind::matern32, Likelihood::logistic, &d.y_train},
                        Case{KernelKind::matern52, Likelihood::logistic, &d.y_train},
                        Case{KernelKind::rbf, Likelihood::poisson, &counts}}) {
    const Kernel kern{c.kind, 0.6, 1.5};
    const GpEvidence e = gp_laplace_evidence(kern, d.x_train, *c.y, c.lik, tight());
    for (Index p = 0; p < 2; ++p) {
      const auto value = [&](double t) {
        Vector theta = kern.log_parameters();
        theta[p] = t;
        return gp_laplace_evidence(Kernel::from_log_parameters(c.kind, theta), d.x_train, *c.y,
                                   c.lik, tight())
            .value;
      };
      // log q is a sum of ~30 O(1) terms and log|B| from a Cholesky: accurate to ~1e-13, plus the
      // mode's residual (≤ 1e-13) times |∂ log|B|/∂f̂| = O(n): 1e-11 covers both.
      const auto fd = central_difference(value, kern.log_parameters()[p], 1e-3, 1e-11);
      EXPECT_NEAR(e.gradient[p], fd.derivative, fd.error_bound)
          << to_string(c.kind) << " " << to_string(c.lik) << " parameter " << p;
    }
  }
}

TEST(GpLaplace, GaussianLikelihoodIsExactGpRegression) {
  const auto d = load_synth(5);
  const Vector y = d.x_train.col(1);  // a real response: the second coordinate
  const Matrix x = d.x_train.col(0);
  const Kernel kern{KernelKind::matern52, 0.4, 0.3};
  const double beta = 4.0;
  const Matrix k = kern.matrix(x, x);
  const GpLaplaceResult lap = gp_laplace(k, y, Likelihood::gaussian, tight(), nullptr, beta);
  const GprResult gpr = gp_regression(k, y, 1 / beta);
  ASSERT_TRUE(lap.converged);
  EXPECT_NEAR(lap.log_marginal_likelihood, gpr.log_marginal_likelihood,
              1e-10 * std::abs(gpr.log_marginal_likelihood));
  const auto dk = kern.gradients(x);
  const Vector gl = gp_laplace_gradient(k, lap, y, Likelihood::gaussian, {dk[0], dk[1]}, beta);
  const Vector gr = gp_regression_gradient(gpr, {dk[0], dk[1]});
  EXPECT_LT((gl - gr).cwiseAbs().maxCoeff(), 1e-8 * std::max(1.0, gr.cwiseAbs().maxCoeff()));
  Matrix xs(3, 1);
  xs << -0.5, 0.1, 0.8;
  Vector m1, v1, m2, v2;
  gp_laplace_predict_latent(lap, kern.matrix(x, xs), kern.diagonal(xs), m1, v1);
  gp_regression_predict(gpr, kern.matrix(x, xs), kern.diagonal(xs), m2, v2);
  EXPECT_LT((m1 - m2).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((v1 - v2).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(GpLaplace, AgreesWithCviOnRipleyAndBothBeatThePrior) {
  const auto d = load_synth();
  const Kernel kern{KernelKind::rbf, 0.5, 4.0};
  const Matrix k = kern.matrix(d.x_train, d.x_train), ks = kern.matrix(d.x_train, d.x_test);
  const GpLaplaceResult lap = gp_laplace(k, d.y_train, Likelihood::logistic);
  const GpcResult cvi = gp_cvi(k, d.y_train, Likelihood::logistic);
  ASSERT_TRUE(lap.converged && cvi.converged);
  Vector ml, vl, mc, vc;
  gp_laplace_predict_latent(lap, ks, kern.diagonal(d.x_test), ml, vl);
  gp_predict_latent(k, cvi, ks, kern.diagonal(d.x_test), mc, vc);
  const Predictive pl = predict_latent(Likelihood::logistic, ml, vl, d.y_test);
  const Predictive pc = predict_latent(Likelihood::logistic, mc, vc, d.y_test);
  const TestMetrics tl = test_metrics(Likelihood::logistic, pl, d.y_test);
  const TestMetrics tc = test_metrics(Likelihood::logistic, pc, d.y_test);
  // Laplace's latent means are smaller in magnitude than the variational ones (it fits the
  // curvature at the mode, not the mass), so the probabilities differ a little, not the classes.
  EXPECT_LT((pl.mean - pc.mean).cwiseAbs().maxCoeff(), 0.1);
  EXPECT_LT((pl.mean - pc.mean).cwiseAbs().mean(), 0.02);
  EXPECT_NEAR(tl.accuracy, tc.accuracy, 0.01);
  // The prior predicts ½ everywhere: NLL log 2 and evidence n·log ½.
  const double n = static_cast<double>(d.y_train.size());
  for (const TestMetrics& t : {tl, tc}) {
    EXPECT_LT(t.nll, std::log(2.0) - 0.3);
    EXPECT_GT(t.accuracy, 0.88);
  }
  EXPECT_GT(lap.log_marginal_likelihood, n * std::log(0.5) + 50);
  EXPECT_GT(cvi.elbo, n * std::log(0.5) + 50);
}

TEST(GpLaplace, EqualsScikitLearnOnRipley) {
  // Oracle: scikit-learn 1.2.1 (Debian python3-sklearn), GaussianProcessClassifier(kernel =
  // ConstantKernel(4) * RBF(0.5) or Matern(0.5, nu = 1.5 / 2.5), optimizer = None).fit(x, y) and
  // log_marginal_likelihood(theta, eval_gradient = True) on data/synth_train.csv: the same GPML
  // algorithms written independently. Its Newton loop stops when log q changes by < 1e-10, so its
  // values carry errors of about that size; 1e-8 (value) and 1e-6 (gradient) leave room for it.
  struct Oracle {
    KernelKind kind;
    double log_q, d_log_l, d_log_s2;
  };
  const auto d = load_synth();
  for (const Oracle& o :
       {Oracle{KernelKind::rbf, -88.31076343160973, -13.434025747327043, 7.374453500921535},
        Oracle{KernelKind::matern32, -86.94984198685572, -1.6994489995696944, 6.702336235045702},
        Oracle{KernelKind::matern52, -86.6949731846782, -4.571664174831307, 6.925733523817015}}) {
    const GpEvidence e =
        gp_laplace_evidence(Kernel{o.kind, 0.5, 4.0}, d.x_train, d.y_train, Likelihood::logistic);
    EXPECT_NEAR(e.value, o.log_q, 1e-8) << to_string(o.kind);
    EXPECT_NEAR(e.gradient[0], o.d_log_l, 1e-6) << to_string(o.kind);
    EXPECT_NEAR(e.gradient[1], o.d_log_s2, 1e-6) << to_string(o.kind);
  }
}

TEST(GpLaplace, BadInputIsOneSentence) {
  const Matrix k = Matrix::Identity(2, 2);
  Vector y(2);
  y << 1, 2;
  try {
    gp_laplace(k, y, Likelihood::logistic);
    ADD_FAILURE() << "no error for the label 2";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("row 2"), std::string::npos) << m;
    EXPECT_EQ(m.back(), '.');
  }
  GpLaplaceOptions o;
  o.tolerance = 0;
  EXPECT_THROW(gp_laplace(k, Vector::Ones(2), Likelihood::logistic, o), Error);
  EXPECT_THROW(gp_laplace(Matrix::Identity(2, 3), Vector::Ones(2), Likelihood::logistic), Error);
  EXPECT_THROW(gp_laplace(k, Vector::Ones(3), Likelihood::logistic), Error);
}

}  // namespace
}  // namespace blr::inference
