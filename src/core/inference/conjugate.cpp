#include "blr/family/special.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/glm.hpp"

#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <cmath>
#include <numbers>

#include "blr/inference/gaussian_natural.hpp"

namespace blr::inference {
namespace {
}

// ---- Beta–Bernoulli ----------------------------------------------------------------------------
Vector BetaBernoulli::prior_natural() const {
  check_positive("a0", a0);
  check_positive("b0", b0);
  return (Vector(2) << a0 - 1.0, b0 - 1.0).finished();
}
Vector BetaBernoulli::message(int y) const {
  check(y == 0 || y == 1, fmt::format("A Bernoulli observation must be 0 or 1; got {}.", y));
  return (Vector(2) << y, 1 - y).finished();
}
double BetaBernoulli::log_partition(const Vector& l) const {
  const double a = l[0] + 1, b = l[1] + 1;
  return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b);
}
double BetaBernoulli::mean(const Vector& l) {
  return a(l) / (a(l) + b(l));
}
double BetaBernoulli::variance(const Vector& l) {
  const double s = a(l) + b(l);
  return a(l) * b(l) / (s * s * (s + 1));
}
double BetaBernoulli::mode(const Vector& l) {
  return (a(l) - 1) / (a(l) + b(l) - 2);
}

// ---- Gamma–Poisson -----------------------------------------------------------------------------
Vector GammaPoisson::prior_natural() const {
  check_positive("a0", a0);
  check_positive("b0", b0);
  return (Vector(2) << a0 - 1.0, -b0).finished();
}
Vector GammaPoisson::message(double x) const {
  check(x >= 0 && x == std::floor(x),
        fmt::format("A Poisson observation must be a non-negative integer; got {}.", x));
  return (Vector(2) << x, -1.0).finished();
}
double GammaPoisson::log_partition(const Vector& l) const {
  const double a = l[0] + 1, b = -l[1];
  return std::lgamma(a) - a * std::log(b);
}
double GammaPoisson::log_base(double x) const {
  return -std::lgamma(x + 1.0);
}
double GammaPoisson::predictive_log_pmf(const Vector& l, double k) {
  const double r = a(l), p = 1.0 / (b(l) + 1.0);
  return std::lgamma(k + r) - std::lgamma(k + 1) - std::lgamma(r) + r * std::log1p(-p) +
         k * std::log(p);
}

// ---- Dirichlet–categorical ---------------------------------------------------------------------
Vector DirichletCategorical::prior_natural() const {
  check(alpha0.size() >= 2 && (alpha0.array() > 0).all(),
        "A Dirichlet prior needs at least two positive concentrations.");
  return alpha0.array() - 1.0;
}
Vector DirichletCategorical::message(int k) const {
  check(k >= 0 && k < alpha0.size(),
        fmt::format("A categorical observation must lie in 0..{}; got {}.", alpha0.size() - 1, k));
  Vector e = Vector::Zero(alpha0.size());
  e[k] = 1.0;
  return e;
}
double DirichletCategorical::log_partition(const Vector& l) const {
  double out = 0, total = 0;
  for (Index k = 0; k < l.size(); ++k) {
    out += std::lgamma(l[k] + 1);
    total += l[k] + 1;
  }
  return out - std::lgamma(total);
}
Vector DirichletCategorical::mean(const Vector& l) {
  const Vector a = alpha(l);
  return a / a.sum();
}

// ---- Normal–Gamma ------------------------------------------------------------------------------
Vector NormalGamma::natural(const Params& p) {
  return (Vector(4) << p.kappa * p.mu, p.kappa, p.beta + 0.5 * p.kappa * p.mu * p.mu, p.alpha - 0.5)
      .finished();
}
NormalGamma::Params NormalGamma::params(const Vector& l) {
  Params p;
  p.kappa = l[1];
  p.mu = l[0] / l[1];
  p.beta = l[2] - 0.5 * p.kappa * p.mu * p.mu;
  p.alpha = l[3] + 0.5;
  return p;
}
Vector NormalGamma::prior_natural() const {
  check_positive("kappa0", kappa0);
  check_positive("alpha0", alpha0);
  check_positive("beta0", beta0);
  return natural({mu0, kappa0, alpha0, beta0});
}
Vector NormalGamma::message(double y) const {
  return (Vector(4) << y, 1.0, 0.5 * y * y, 0.5).finished();
}
double NormalGamma::log_partition(const Vector& l) const {
  const Params p = params(l);
  check(p.kappa > 0 && p.alpha > 0 && p.beta > 0, "A Normal–Gamma natural parameter is invalid.");
  return std::lgamma(p.alpha) - p.alpha * std::log(p.beta) + 0.5 * kLog2Pi -
         0.5 * std::log(p.kappa);
}
double NormalGamma::log_base(double) const {
  return -0.5 * kLog2Pi;
}

// ---- Bayesian linear regression ----------------------------------------------------------------
Vector BayesianLinearRegression::prior_natural(Index d) const {
  check_positive("prior-precision", prior_precision);
  Matrix s = prior_precision * Matrix::Identity(d, d);
  if (intercept_precision) {
    check_positive("intercept-prior-precision", *intercept_precision);
    check(d >= 1, "An intercept needs a design with at least one column.");
    s(0, 0) = *intercept_precision;
  }
  return pack_full(Vector::Zero(d), s);
}
Vector BayesianLinearRegression::data_message(const Matrix& phi, const Vector& y) const {
  check_positive("noise-precision", noise_precision);
  check(phi.rows() == y.size(), "The design matrix and the responses differ in length.");
  return pack_full(noise_precision * phi.transpose() * y, noise_precision * phi.transpose() * phi);
}
Vector BayesianLinearRegression::message(const Vector& x, double y) const {
  return pack_full(noise_precision * y * x, noise_precision * x * x.transpose());
}
Vector BayesianLinearRegression::posterior(const Matrix& phi, const Vector& y) const {
  const Vector prior = prior_natural(phi.cols());
  return natural_step_towards(prior, prior + data_message(phi, y), 1.0);
}
Vector BayesianLinearRegression::posterior_sequential(const Matrix& phi, const Vector& y) const {
  Vector lambda = prior_natural(phi.cols());
  for (Index i = 0; i < phi.rows(); ++i) {
    lambda = natural_step_towards(lambda, lambda + message(phi.row(i).transpose(), y[i]), 1.0);
  }
  return lambda;
}
double BayesianLinearRegression::log_evidence(const Matrix& phi, const Vector& y,
                                              const Vector& posterior) const {
  const Index d = phi.cols();
  const double n = static_cast<double>(y.size());
  const double log_h = 0.5 * n * std::log(noise_precision / (2 * std::numbers::pi)) -
                       0.5 * noise_precision * y.squaredNorm();
  return GaussianFull::from_natural(posterior).log_partition() -
         GaussianFull::from_natural(prior_natural(d)).log_partition() + log_h;
}

// ---- Normal–Gamma linear regression (noise precision unknown) ----------------------------------
namespace {
/// ln Γ(a) − a ln b, the Gamma part of A(λ); 0 for Jeffreys' a = b = 0.
double gamma_log_partition(double a, double b) {
  return a == 0 && b == 0 ? 0.0 : std::lgamma(a) - a * std::log(b);
}
}  // namespace

void NormalGammaRegression::validate() const {
  check(prior_precision.size() > 0,
        "The Normal–Gamma regression needs at least one coefficient.");
  for (Index j = 0; j < prior_precision.size(); ++j)
    check(std::isfinite(prior_precision[j]) && prior_precision[j] > 0,
          fmt::format("Prior precision {} of coefficient {} must be a positive finite number.",
                      prior_precision[j], j + 1));
  const bool jeffreys = noise_shape == 0 && noise_rate == 0;
  check(jeffreys || (std::isfinite(noise_shape) && noise_shape > 0 && std::isfinite(noise_rate) &&
                     noise_rate > 0),
        fmt::format("The Gamma prior of the noise precision needs shape and rate both positive, "
                    "or both 0 (Jeffreys' prior); got {}, {}.",
                    noise_shape, noise_rate));
}
Vector NormalGammaRegression::prior_natural() const {
  validate();
  const Index d = dimension();
  Vector out(full_natural_size(d) + 2);
  out << pack_full(Vector::Zero(d), Matrix(prior_precision.asDiagonal())), 2 * noise_rate,
      2 * noise_shape - 2 + static_cast<double>(d);
  return out;
}
Vector NormalGammaRegression::message(const Vector& x, double y) const {
  check(x.size() == dimension(), "An observation's inputs differ in length from the prior.");
  Vector out(full_natural_size(dimension()) + 2);
  out << pack_full(y * x, x * x.transpose()), y * y, 1.0;
  return out;
}
Vector NormalGammaRegression::data_message(const Matrix& phi, const Vector& y) const {
  check(phi.rows() == y.size(), "The design matrix and the responses differ in length.");
  check(phi.cols() == dimension(), "The design matrix and the prior differ in dimension.");
  Vector out(full_natural_size(dimension()) + 2);
  out << pack_full(phi.transpose() * y, phi.transpose() * phi), y.squaredNorm(),
      static_cast<double>(y.size());
  return out;
}
Vector NormalGammaRegression::posterior(const Matrix& phi, const Vector& y) const {
  const Vector prior = prior_natural();
  return natural_step_towards(prior, prior + data_message(phi, y), 1.0);
}
Vector NormalGammaRegression::posterior_sequential(const Matrix& phi, const Vector& y) const {
  Vector lambda = prior_natural();
  for (Index i = 0; i < phi.rows(); ++i)
    lambda = natural_step_towards(lambda, lambda + message(phi.row(i).transpose(), y[i]), 1.0);
  return lambda;
}
NormalGammaRegression::Params NormalGammaRegression::params(const Vector& lambda, Index d) {
  const Index k = full_natural_size(d);
  check(lambda.size() == k + 2, "A Normal–Gamma regression natural parameter has the wrong length.");
  Params p;
  p.precision = full_precision(lambda.head(k), d);
  const Eigen::LLT<Matrix> llt(p.precision);
  check(llt.info() == Eigen::Success,
        "The Normal–Gamma posterior precision is not positive definite.");
  p.mean = llt.solve(full_sm(lambda, d));
  p.rate = 0.5 * (lambda[k] - p.mean.dot(p.precision * p.mean));
  p.shape = 0.5 * (lambda[k + 1] + 2 - static_cast<double>(d));
  return p;
}
double NormalGammaRegression::log_partition(const Vector& lambda, bool improper_gamma) const {
  const Index d = dimension();
  const Params p = params(lambda, d);
  const Eigen::LLT<Matrix> llt(p.precision);
  const double log_det = 2 * llt.matrixLLT().diagonal().array().log().sum();
  return (improper_gamma ? 0.0 : gamma_log_partition(p.shape, p.rate)) +
         0.5 * static_cast<double>(d) * std::log(2 * std::numbers::pi) - 0.5 * log_det;
}
double NormalGammaRegression::log_evidence(const Matrix& phi, const Vector& y,
                                           const Vector& posterior) const {
  check(phi.rows() == y.size(), "The design matrix and the responses differ in length.");
  const bool jeffreys = noise_shape == 0 && noise_rate == 0;
  return log_partition(posterior) - log_partition(prior_natural(), jeffreys) -
         0.5 * static_cast<double>(y.size()) * std::log(2 * std::numbers::pi);
}

NormalGammaFit fit_normal_gamma(const NormalGammaRegression& model, const Matrix& phi,
                                const Vector& y) {
  model.validate();
  check(phi.rows() == y.size(), "The design matrix and the responses differ in length.");
  const Index d = phi.cols();
  const Vector lambda = model.posterior(phi, y);  // one BLR step, ρ = 1
  NormalGammaRegression::Params p = NormalGammaRegression::params(lambda, d);
  // b_N from the residuals, b₀ + ½(‖y − Φm‖² + mᵀΛ₀m): equal to λ's ½(yᵀy − mᵀΛm) in exact
  // arithmetic, without its cancellation when the fit explains most of yᵀy (y far from 0).
  p.rate = model.noise_rate +
           0.5 * ((y - phi * p.mean).squaredNorm() +
                  p.mean.dot(model.prior_precision.asDiagonal() * p.mean));
  NormalGammaFit f;
  f.mean = p.mean;
  f.posterior_precision = p.precision;
  f.noise_shape = p.shape;
  f.noise_rate = p.rate;
  f.dof = 2 * p.shape;
  check(f.dof > 2,
        fmt::format("The Normal–Gamma posterior has {} degrees of freedom, so its coefficients "
                    "have no finite variance; it needs at least 3 rows (Jeffreys' prior) or a "
                    "larger noise shape.",
                    f.dof));
  check(p.rate > 0, "The Normal–Gamma posterior's noise rate is not positive: the fit leaves no "
                    "residual and the prior no spread (give a positive noise rate).");
  const Matrix inverse = Eigen::LLT<Matrix>(p.precision).solve(Matrix::Identity(d, d));
  f.scale = (p.rate / p.shape) * inverse;
  f.covariance = (f.dof / (f.dof - 2)) * f.scale;
  Vector lambda_stable = lambda;  // the log evidence with the stable b_N
  lambda_stable[full_natural_size(d)] = 2 * p.rate + p.mean.dot(p.precision * p.mean);
  f.log_evidence = model.log_evidence(phi, y, lambda_stable);
  return f;
}

Vector NormalGammaFit::sd() const { return covariance.diagonal().cwiseSqrt(); }

std::vector<Interval> NormalGammaFit::intervals(double level) const {
  std::vector<Interval> out;
  for (Index j = 0; j < mean.size(); ++j)
    out.push_back(student_t_interval(dof, mean[j], std::sqrt(scale(j, j)), level));
  return out;
}

NormalGammaFit::Predictive NormalGammaFit::predict(const Matrix& x, const Vector& y,
                                                   double level) const {
  check(x.cols() == mean.size(), "The inputs to predict differ in dimension from the posterior.");
  check(y.size() == 0 || y.size() == x.rows(), "Predictions need one response per input row.");
  const Index n = x.rows();
  const Matrix inverse =
      Eigen::LLT<Matrix>(posterior_precision).solve(Matrix::Identity(mean.size(), mean.size()));
  Predictive p;
  p.mean = x * mean;
  const Vector leverage = row_quadratic_forms(x, inverse);
  p.scale = ((noise_rate / noise_shape) * (1.0 + leverage.array())).sqrt();
  p.sd = p.scale * std::sqrt(dof / (dof - 2));
  p.lower.resize(n);
  p.upper.resize(n);
  for (Index i = 0; i < n; ++i) {
    const Interval ci = student_t_interval(dof, p.mean[i], p.scale[i], level);
    p.lower[i] = ci.lower;
    p.upper[i] = ci.upper;
  }
  if (y.size() > 0) {
    // log t_ν(y | μ, s) = lnΓ((ν+1)/2) − lnΓ(ν/2) − ½ ln(νπ) − ln s − (ν+1)/2 · ln(1 + z²/ν).
    const double c = std::lgamma((dof + 1) / 2) - std::lgamma(dof / 2) -
                     0.5 * std::log(dof * std::numbers::pi);
    p.log_density.resize(n);
    for (Index i = 0; i < n; ++i) {
      const double z = (y[i] - p.mean[i]) / p.scale[i];
      p.log_density[i] = c - std::log(p.scale[i]) - 0.5 * (dof + 1) * std::log1p(z * z / dof);
    }
  }
  return p;
}

LinearPredictive linear_predictive(const Vector& posterior, const Matrix& phi,
                                   double noise_precision) {
  check(posterior.size() == full_natural_size(phi.cols()),
        "The posterior and the design matrix differ in dimension.");
  const GaussianFull q = GaussianFull::from_natural(posterior);
  LinearPredictive out;
  out.mean = phi * q.mean;
  out.variance =
      ((phi * q.covariance()).cwiseProduct(phi)).rowwise().sum().array() + 1.0 / noise_precision;
  return out;
}

const OptionTable<EvidenceOptions>& EvidenceOptions::table() {
  using O = EvidenceOptions;
  static const OptionTable<O> t =
      OptionTable<O>("evidence maximisation")
          .number("alpha", &O::alpha, Range::positive(), "starting prior precision α")
          .number("beta", &O::beta, Range::positive(), "starting noise precision β")
          .integer("max_iterations", &O::max_iterations, Range::between(1, 1e9),
                   "MacKay fixed-point iterations at most")
          .number("tolerance", &O::tolerance, Range::positive(),
                  "stop when α and β change by less, relative");
  return t;
}

void EvidenceOptions::validate() const {
  table().validate(*this);
  if (intercept_precision)
    check(std::isfinite(*intercept_precision) && *intercept_precision > 0,
          "Option 'intercept_prior_precision' must be > 0.");
}

EvidenceResult maximize_evidence(const Matrix& phi, const Vector& y,
                                 const EvidenceOptions& options) {
  options.validate();
  const double n = static_cast<double>(y.size());
  check(phi.rows() == y.size() && y.size() > 0,
        "Evidence maximisation needs as many responses as design rows, and at least one.");
  const Matrix gram = phi.transpose() * phi;
  const Eigen::SelfAdjointEigenSolver<Matrix> eig(gram);
  const Vector gram_eigen = eig.eigenvalues().cwiseMax(0.0);
  EvidenceResult r;
  BayesianLinearRegression model{options.alpha, options.beta, options.intercept_precision};
  check(!options.intercept_precision || phi.cols() >= 2,
        "Evidence maximisation with an intercept needs at least one other column (α is learned "
        "from the slopes).");
  for (r.iterations = 1; r.iterations <= options.max_iterations; ++r.iterations) {
    r.posterior = model.posterior(phi, y);
    const GaussianFull q = GaussianFull::from_natural(r.posterior);
    const Vector& mean = q.mean;
    double alpha = 0;
    if (options.intercept_precision) {
      // γ_j = 1 − p₀_j Σ_jj per column; α learns from the slopes only (MacKay 1992, eq. 4.20).
      const Vector s = q.covariance().diagonal();
      const Index d = s.size();
      const double gamma_slopes =
          static_cast<double>(d - 1) - model.prior_precision * s.tail(d - 1).sum();
      r.gamma = gamma_slopes + 1.0 - *options.intercept_precision * s[0];
      alpha = gamma_slopes / mean.tail(d - 1).squaredNorm();
    } else {
      const Vector lam = model.noise_precision * gram_eigen;
      r.gamma = (lam.array() / (lam.array() + model.prior_precision)).sum();
      alpha = r.gamma / mean.squaredNorm();
    }
    const double beta = (n - r.gamma) / (y - phi * mean).squaredNorm();
    check(std::isfinite(alpha) && std::isfinite(beta) && alpha > 0 && beta > 0,
          fmt::format("Evidence maximisation broke down at iteration {} (alpha = {}, beta = {}).",
                      r.iterations, alpha, beta));
    const double change = std::max(std::abs(alpha - model.prior_precision) / alpha,
                                   std::abs(beta - model.noise_precision) / beta);
    model.prior_precision = alpha;
    model.noise_precision = beta;
    if (change < options.tolerance) {
      r.converged = true;
      break;
    }
  }
  r.iterations = std::min(r.iterations, options.max_iterations);
  r.alpha = model.prior_precision;
  r.beta = model.noise_precision;
  r.posterior = model.posterior(phi, y);
  const GaussianFull q = GaussianFull::from_natural(r.posterior);
  r.mean = q.mean;
  r.covariance = q.covariance();
  if (options.intercept_precision) {
    const Vector s = r.covariance.diagonal();
    r.gamma = static_cast<double>(s.size()) - r.alpha * s.tail(s.size() - 1).sum() -
              *options.intercept_precision * s[0];
  } else {
    const Vector lam = r.beta * gram_eigen;
    r.gamma = (lam.array() / (lam.array() + r.alpha)).sum();
  }
  r.log_evidence = model.log_evidence(phi, y, r.posterior);
  return r;
}

}  // namespace blr::inference
