#include "blr/family/special.hpp"
#include "blr/inference/glm.hpp"

#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <numbers>

#include "blr/core/blas.hpp"
#include "blr/core/error.hpp"

namespace blr::inference {
namespace {

/// log p(y | a) alone (used inside expectations).
double site_log(Likelihood l, double y, double a, double beta) {
  switch (l) {
    case Likelihood::logistic:
      return y * a - log1p_exp(a);
    case Likelihood::poisson:
      return y * a - std::exp(a) - std::lgamma(y + 1.0);
    case Likelihood::gaussian:
      return 0.5 * std::log(beta) - 0.5 * kLog2Pi - 0.5 * beta * (y - a) * (y - a);
  }
  return 0;
}

/// ∂/∂a and ∂²/∂a² of log p(y | a) (no value: the gradient and Hessian need no logarithm).
SiteTerms site_derivatives(Likelihood l, double y, double a, double beta) {
  SiteTerms t;
  switch (l) {
    case Likelihood::logistic: {
      const double s = sigmoid(a);
      t.gradient = y - s;
      t.hessian = -s * (1 - s);
      break;
    }
    case Likelihood::poisson: {
      const double e = std::exp(a);
      t.gradient = y - e;
      t.hessian = -e;
      break;
    }
    case Likelihood::gaussian:
      t.gradient = beta * (y - a);
      t.hessian = -beta;
      break;
  }
  return t;
}

}  // namespace

std::string to_string(Likelihood l) {
  switch (l) {
    case Likelihood::logistic:
      return "logistic";
    case Likelihood::poisson:
      return "poisson";
    case Likelihood::gaussian:
      return "gaussian";
  }
  return "?";
}

const OptionTable<PredictiveOptions>& PredictiveOptions::table() {
  using O = PredictiveOptions;
  static const OptionTable<O> t =
      OptionTable<O>("the predictive")
          .choice("predictive", &O::method,
                  {{"quadrature", PredictiveMethod::quadrature},
                   {"monte-carlo", PredictiveMethod::monte_carlo},
                   {"probit", PredictiveMethod::probit}},
                  "how E[p(y* | a*)] is computed: Gauss–Hermite quadrature, Monte Carlo over w, "
                  "or (logistic) the probit approximation σ(μ/√(1 + πσ²/8))")
          .integer("samples", &O::samples, Range::between(1, 1e9), "Monte Carlo draws of w")
          .integer("seed", &O::seed, Range::between(0, 9.2e18), "seed of the Monte Carlo draws")
          .integer("quadrature_nodes", &O::quadrature_nodes, Range::between(1, 200),
                   "Gauss–Hermite nodes");
  return t;
}

void PredictiveOptions::validate() const { table().validate(*this); }

PredictiveMethod parse_predictive_method(const std::string& name) {
  PredictiveOptions o;  // the spellings are the table's
  PredictiveOptions::table().set(o, "predictive", OptionValue(name));
  return o.method;
}

SiteTerms site_terms(Likelihood l, double y, double a, double beta) {
  SiteTerms t = site_derivatives(l, y, a, beta);
  t.value = site_log(l, y, a, beta);
  return t;
}

Vector row_quadratic_forms(const Matrix& x, const Matrix& s) {
  check(s.rows() == x.cols() && s.cols() == x.cols(),
        "row_quadratic_forms: the matrix must be square with one row per column of x.");
  const Index n = x.rows(), d = x.cols();
  constexpr Index kBlock = 2048;  // 2048 × d doubles: a block that stays in cache for d ≤ 100
  Vector out(n);
  Matrix xs(std::min(n, kBlock), d);
  for (Index start = 0; start < n; start += kBlock) {
    const Index rows = std::min(kBlock, n - start);
    auto block = x.middleRows(start, rows);
    auto product = xs.topRows(rows);
    if (blas_worthwhile(rows, d, d)) {
      blas_multiply(block, s, product);
    } else {
      product.noalias() = block * s;
    }
    out.segment(start, rows) = product.cwiseProduct(block).rowwise().sum();
  }
  return out;
}

Matrix weighted_gram(const Matrix& x, const Vector& w) {
  check(w.size() == x.rows(), "weighted_gram: one weight per row of the design is needed.");
  const Index d = x.cols();
  // Large, with w ≥ 0 (every log-concave likelihood): (√W X)ᵀ(√W X) by the system BLAS's dsyrk,
  // 4096 rows at a time (a block of √W X stays in cache instead of an N×d copy).
  if (blas_worthwhile(d, d, x.rows()) && (w.array() >= 0.0).all()) {
    constexpr Index kRows = 4096;
    const Index n = x.rows();
    Matrix out = Matrix::Zero(d, d);
    Matrix block(std::min(kRows, n), d);
    for (Index b = 0; b < n; b += kRows) {
      const Index r = std::min(kRows, n - b);
      block.topRows(r) = w.segment(b, r).cwiseSqrt().asDiagonal() * x.middleRows(b, r);
      blas_gram_accumulate(block.topRows(r), out);
    }
    out.triangularView<Eigen::StrictlyUpper>() = out.transpose();
    return out;
  }
  // (WX)ᵀX, its products rounded as in Xᵀ·diag(w)·X, but only the lower triangle (Eigen's blocked
  // triangular GEMM: half the work of the full product), then mirrored.
  const Matrix wx = w.asDiagonal() * x;
  Matrix out(d, d);
  out.triangularView<Eigen::Lower>() = wx.transpose() * x;
  out.triangularView<Eigen::StrictlyUpper>() = out.transpose();
  return out;
}

void expected_logistic_sites(Index n, const double* y, const double* m, const double* v,
                             const GaussHermite& quadrature, double* value, double* gradient,
                             double* hessian) {
  constexpr Index kSites = 16;  // sites per block: a 16×K array of nodes stays in L1
  using Block = Eigen::Array<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, kSites, 200>;
  using Column = Eigen::Array<double, Eigen::Dynamic, 1, Eigen::ColMajor, kSites, 1>;
  const Vector& x = quadrature.nodes();
  const Vector& w = quadrature.weights();
  const Index k = x.size();
  for (Index b = 0; b < n; b += kSites) {
    const Index r = std::min(kSites, n - b);
    const Column mb = Eigen::Map<const Eigen::ArrayXd>(m + b, r);
    const Column sb = Eigen::Map<const Eigen::ArrayXd>(v + b, r).sqrt();
    const Column yb = Eigen::Map<const Eigen::ArrayXd>(y + b, r);
    Block a(r, k);
    for (Index j = 0; j < k; ++j) a.col(j) = mb + sb * x[j];
    const Block e = (-a.abs()).exp();
    const Block p = (1.0 + e).inverse();
    const Block sg = (a >= 0).select(p, e * p);  // σ(a)
    if (value) {
      // log(1 + e) = −log p: Eigen vectorises log but not log1p; for e below the rounding of 1 + e
      // the difference is below 2⁻⁵³ per node.
      const Block ll = a.colwise() * yb - a.max(0.0) + p.log();
      Eigen::Map<Vector>(value + b, r) = ll.matrix() * w;
    }
    if (gradient) Eigen::Map<Vector>(gradient + b, r) = yb.matrix() - sg.matrix() * w;
    if (hessian) Eigen::Map<Vector>(hessian + b, r) = -((sg * (1.0 - sg)).matrix() * w);
  }
}

SiteTerms expected_site_terms(Likelihood l, double y, double m, double v,
                              const GaussHermite& quadrature, double beta) {
  SiteTerms t;
  switch (l) {
    case Likelihood::poisson: {
      const double e = std::exp(m + 0.5 * v);  // E[e^a]
      t.value = y * m - e - std::lgamma(y + 1.0);
      t.gradient = y - e;
      t.hessian = -e;
      return t;
    }
    case Likelihood::gaussian:
      t.value = 0.5 * std::log(beta) - 0.5 * kLog2Pi - 0.5 * beta * ((y - m) * (y - m) + v);
      t.gradient = beta * (y - m);
      t.hessian = -beta;
      return t;
    case Likelihood::logistic:
      expected_logistic_sites(1, &y, &m, &v, quadrature, &t.value, &t.gradient, &t.hessian);
      return t;
  }
  return t;
}

Glm Glm::with_isotropic_prior(Matrix x, Vector y, Likelihood l, double delta) {
  check_positive("prior-precision", delta);
  const Index d = x.cols();
  return with_prior_precisions(std::move(x), std::move(y), l, Vector::Constant(d, delta));
}

Glm Glm::with_prior_precisions(Matrix x, Vector y, Likelihood l, Vector precisions) {
  check(precisions.size() == x.cols(),
        fmt::format("The prior must have {} precisions (one per column of the design); got {}.",
                    x.cols(), precisions.size()));
  Glm g;
  const Index d = x.cols();
  g.x = std::move(x);
  g.y = std::move(y);
  g.likelihood = l;
  g.prior_mean = Vector::Zero(d);
  g.prior_precision = std::move(precisions);
  return g;
}

Vector prior_precisions(Index d, double delta, std::optional<double> intercept_precision) {
  check(std::isfinite(delta) && delta > 0,
        fmt::format("Option '--prior-precision' must be a positive finite number; got {}.", delta));
  Vector p = Vector::Constant(d, delta);
  if (intercept_precision) {
    check(std::isfinite(*intercept_precision) && *intercept_precision > 0,
          fmt::format("Option '--intercept-prior-precision' must be a positive finite number; got "
                      "{}.",
                      *intercept_precision));
    check(d >= 1, "An intercept needs a design with at least one column.");
    p[0] = *intercept_precision;
  }
  return p;
}

void Glm::validate() const {
  check(x.rows() >= 1 && x.cols() >= 1, "The design matrix is empty.");
  check(x.rows() == y.size(),
        fmt::format("The design has {} rows but there are {} responses.", x.rows(), y.size()));
  check(prior_mean.size() == x.cols() && prior_precision.size() == x.cols(),
        fmt::format("The prior must have {} entries (one per column of the design).", x.cols()));
  check((prior_precision.array() > 0).all() && prior_precision.allFinite(),
        "The prior precision must be positive and finite.");
  check(x.allFinite() && y.allFinite(), "The data hold a non-finite number.");
  if (likelihood == Likelihood::logistic) {
    for (Index i = 0; i < y.size(); ++i)
      check(
          y[i] == 0.0 || y[i] == 1.0,
          fmt::format("Logistic regression needs 0/1 responses; response {} is {}.", i + 1, y[i]));
  }
  if (likelihood == Likelihood::poisson) {
    for (Index i = 0; i < y.size(); ++i)
      check(
          y[i] >= 0 && y[i] == std::floor(y[i]),
          fmt::format("Poisson regression needs non-negative integer responses; response {} is {}.",
                      i + 1, y[i]));
  }
  if (likelihood == Likelihood::gaussian) check_positive("noise-precision", noise_precision);
}

namespace {

/// At a = Xw: Σ_i log p(y_i | a_i) (when `value`; 0 otherwise), and (when asked) the sites'
/// ∂/∂a log p in g and −∂²/∂a² log p in h — the one pass over the data behind value, gradient and
/// Hessian.
double glm_sites(const Glm& m, const Vector& w, bool value, Vector* g, Vector* h) {
  const Vector a = m.x * w;
  if (g != nullptr) g->resize(a.size());
  if (h != nullptr) h->resize(a.size());
  double out = 0;
  for (Index i = 0; i < a.size(); ++i) {
    if (value) out += site_log(m.likelihood, m.y[i], a[i], m.noise_precision);
    if (g == nullptr && h == nullptr) continue;
    const SiteTerms t = site_derivatives(m.likelihood, m.y[i], a[i], m.noise_precision);
    if (g != nullptr) (*g)[i] = t.gradient;
    if (h != nullptr) (*h)[i] = -t.hessian;
  }
  return out;
}

Vector glm_gradient(const Glm& m, const Vector& w, const Vector& g) {
  return -(m.x.transpose() * g) + m.prior_precision.cwiseProduct(w - m.prior_mean);
}

Matrix glm_hessian(const Glm& m, const Vector& h) {
  // Large designs: weighted_gram (the system BLAS). Small ones: not weighted_gram, whose
  // triangle-only product rounds differently, because the Laplace mode seeds tests (cvi_test's
  // direct ELBO maximisation by BFGS to 1e-9) that do not survive last-bit changes.
  Matrix out = blas_worthwhile(m.x.cols(), m.x.cols(), m.x.rows())
                   ? weighted_gram(m.x, h)
                   : Matrix(m.x.transpose() * h.asDiagonal() * m.x);
  out.diagonal() += m.prior_precision;
  return out;
}

}  // namespace

double Glm::log_likelihood(const Vector& w) const {
  return glm_sites(*this, w, true, nullptr, nullptr);
}

double Glm::log_prior(const Vector& w) const {
  const Vector r = w - prior_mean;
  return 0.5 * prior_precision.array().log().sum() - 0.5 * static_cast<double>(w.size()) * kLog2Pi -
         0.5 * (prior_precision.array() * r.array().square()).sum();
}

Vector Glm::gradient(const Vector& w) const {
  Vector g;
  glm_sites(*this, w, false, &g, nullptr);
  return glm_gradient(*this, w, g);
}

Matrix Glm::hessian(const Vector& w) const {
  Vector h;
  glm_sites(*this, w, false, nullptr, &h);
  return glm_hessian(*this, h);
}

double Glm::value_and_gradient(const Vector& w, Vector& gradient) const {
  Vector g;
  const double log_lik = glm_sites(*this, w, true, &g, nullptr);
  gradient = glm_gradient(*this, w, g);
  return -log_lik - log_prior(w);
}

double Glm::value_gradient_and_hessian(const Vector& w, Vector& gradient, Matrix& hessian) const {
  Vector g, h;
  const double log_lik = glm_sites(*this, w, true, &g, &h);
  gradient = glm_gradient(*this, w, g);
  hessian = glm_hessian(*this, h);
  return -log_lik - log_prior(w);
}

const OptionTable<LaplaceOptions>& LaplaceOptions::table() {
  using O = LaplaceOptions;
  static const OptionTable<O> t =
      OptionTable<O>("Laplace")
          .number("rho", &O::rho, Range::between(0, 1, true), "BLR step size ρ (1: Newton's method)")
          .integer("max_iterations", &O::max_iterations, Range::between(1, 1e9),
                   "Newton steps at most; a fit that stops there unconverged is refused")
          .number("tolerance", &O::tolerance, Range::positive(),
                  "stop when max|∇ℓ̄| falls below this");
  return t;
}

void LaplaceOptions::validate() const {
  table().validate(*this);
}

LaplaceResult laplace(const Glm& model, const LaplaceOptions& options, const Vector* start) {
  model.validate();
  options.validate();
  const Index d = model.dimension();
  const Vector m0 = start ? *start : model.prior_mean;
  check(m0.size() == d, "The starting point has the wrong length.");
  blr::LaplaceOptions steps;  // the prior is in ℓ̄: δ = 0
  steps.newton.step_size = options.rho;
  steps.max_steps = options.max_iterations;
  steps.tolerance = options.tolerance;
  LaplaceResult r;
  const auto record = [&r](long, const GaussianFull& q, double loss) {
    r.iterates.push_back(q.mean);
    r.log_joints.push_back(-loss);
  };
  static_cast<blr::LaplaceResult&>(r) =
      blr::laplace(model, GaussianFull(m0, Matrix(model.prior_precision.asDiagonal())), steps, record);
  r.mean = r.posterior.mean;
  r.covariance = r.posterior.covariance();
  return r;
}

Predictive predict_latent(Likelihood l, const Vector& mu, const Vector& var, const Vector& y,
                          const PredictiveOptions& options, double beta) {
  options.validate();
  check(mu.size() == var.size() && (y.size() == 0 || y.size() == mu.size()),
        "Predictive: the latent moments and the responses differ in length.");
  Predictive p;
  p.latent_mean = mu;
  p.latent_variance = var;
  const Index n = mu.size();
  p.mean.resize(n);
  p.log_density.resize(y.size());
  const GaussHermite gh(options.quadrature_nodes);
  Rng rng(options.seed);
  for (Index i = 0; i < n; ++i) {
    const double m = mu[i], v = std::max(var[i], 0.0);
    if (l == Likelihood::logistic) {
      double prob = 0;
      switch (options.method) {
        case PredictiveMethod::probit:
          prob = sigmoid(m / std::sqrt(1.0 + std::numbers::pi * v / 8.0));
          break;
        case PredictiveMethod::quadrature:
          prob = gh.expect(m, v, sigmoid);
          break;
        case PredictiveMethod::monte_carlo: {
          double s = 0;
          for (int k = 0; k < options.samples; ++k) s += sigmoid(m + std::sqrt(v) * rng.normal());
          prob = s / options.samples;
          break;
        }
      }
      prob = std::clamp(prob, 1e-300, 1.0 - 1e-16);
      p.mean[i] = prob;
      if (y.size()) p.log_density[i] = y[i] > 0.5 ? std::log(prob) : std::log1p(-prob);
    } else if (l == Likelihood::poisson) {
      p.mean[i] = std::exp(m + 0.5 * v);
      if (y.size()) {
        // log E[Poisson(y | e^a)], by quadrature or Monte Carlo (log-sum-exp).
        auto logpmf = [&](double a) { return y[i] * a - std::exp(a) - std::lgamma(y[i] + 1.0); };
        double mx = -std::numeric_limits<double>::infinity(), s = 0;
        if (options.method == PredictiveMethod::monte_carlo) {
          std::vector<double> vals(options.samples);
          for (auto& val : vals) {
            val = logpmf(m + std::sqrt(v) * rng.normal());
            mx = std::max(mx, val);
          }
          for (double val : vals) s += std::exp(val - mx);
          p.log_density[i] = mx + std::log(s / options.samples);
        } else {
          const Vector& xk = gh.nodes();
          const Vector& wk = gh.weights();
          Vector vals(xk.size());
          for (Index k = 0; k < xk.size(); ++k) vals[k] = logpmf(m + std::sqrt(v) * xk[k]);
          mx = vals.maxCoeff();
          for (Index k = 0; k < xk.size(); ++k) s += wk[k] * std::exp(vals[k] - mx);
          p.log_density[i] = mx + std::log(s);
        }
      }
    } else {
      p.mean[i] = m;
      if (y.size()) {
        const double tv = v + 1.0 / beta;
        p.log_density[i] = -0.5 * (kLog2Pi + std::log(tv) + (y[i] - m) * (y[i] - m) / tv);
      }
    }
  }
  return p;
}

Predictive predict(Likelihood l, const Vector& mean, const Matrix& cov, const Matrix& x,
                   const Vector& y, const PredictiveOptions& options, double beta) {
  check(
      x.cols() == mean.size() && cov.rows() == mean.size() && cov.cols() == mean.size(),
      fmt::format("Predictive: the test design has {} columns but the posterior has dimension {}.",
                  x.cols(), mean.size()));
  const Vector mu = x * mean;
  const Vector var = row_quadratic_forms(x, cov);
  if (options.method != PredictiveMethod::monte_carlo)
    return predict_latent(l, mu, var, y, options, beta);
  // Monte Carlo over w ~ N(m, Σ): the same draws for every test point.
  Predictive p;
  p.latent_mean = mu;
  p.latent_variance = var;
  const Index n = x.rows(), d = mean.size();
  const Eigen::LLT<Matrix> llt(cov);
  check(llt.info() == Eigen::Success,
        "Predictive: the posterior covariance is not positive definite.");
  const Matrix lower = llt.matrixL();
  Rng rng(options.seed);
  Matrix draws(d, options.samples);
  for (int k = 0; k < options.samples; ++k) draws.col(k) = mean + lower * rng.normal_vector(d);
  const Matrix a = x * draws;  // n × S
  p.mean.resize(n);
  p.log_density.resize(y.size());
  for (Index i = 0; i < n; ++i) {
    double s_mean = 0, mx = -std::numeric_limits<double>::infinity();
    Vector lp(options.samples);
    for (int k = 0; k < options.samples; ++k) {
      const double ai = a(i, k);
      if (l == Likelihood::logistic) {
        s_mean += sigmoid(ai);
        if (y.size()) lp[k] = y[i] * ai - log1p_exp(ai);
      } else if (l == Likelihood::poisson) {
        s_mean += std::exp(ai);
        if (y.size()) lp[k] = y[i] * ai - std::exp(ai) - std::lgamma(y[i] + 1.0);
      } else {
        s_mean += ai;
        if (y.size()) lp[k] = site_log(l, y[i], ai, beta);
      }
      if (y.size()) mx = std::max(mx, lp[k]);
    }
    p.mean[i] = s_mean / options.samples;
    if (y.size()) p.log_density[i] = mx + std::log((lp.array() - mx).exp().sum() / options.samples);
  }
  return p;
}

TestMetrics test_metrics(Likelihood l, const Predictive& p, const Vector& y) {
  check(p.mean.size() == y.size() && p.log_density.size() == y.size(),
        "Test metrics need one prediction per test response.");
  TestMetrics t;
  t.n = y.size();
  if (t.n == 0) return t;
  Index correct = 0;
  for (Index i = 0; i < t.n; ++i) correct += ((p.mean[i] > 0.5) == (y[i] > 0.5));
  t.accuracy = l == Likelihood::logistic ? static_cast<double>(correct) / t.n : 0.0;
  t.nll = -p.log_density.mean();
  t.rmse = std::sqrt((p.mean - y).squaredNorm() / t.n);
  return t;
}

}  // namespace blr::inference
