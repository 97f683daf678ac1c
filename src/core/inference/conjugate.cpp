#include "blr/family/special.hpp"
#include "blr/inference/conjugate.hpp"

#include <fmt/format.h>

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
  return pack_full(Vector::Zero(d), prior_precision * Matrix::Identity(d, d));
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

void EvidenceOptions::validate() const {
  check_positive("alpha", alpha);
  check_positive("beta", beta);
  check(max_iterations >= 1, "Option 'max-iterations' must be at least 1.");
  check_positive("tolerance", tolerance);
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
  BayesianLinearRegression model{options.alpha, options.beta};
  for (r.iterations = 1; r.iterations <= options.max_iterations; ++r.iterations) {
    r.posterior = model.posterior(phi, y);
    const Vector mean = GaussianFull::from_natural(r.posterior).mean;
    const Vector lam = model.noise_precision * gram_eigen;
    r.gamma = (lam.array() / (lam.array() + model.prior_precision)).sum();
    const double alpha = r.gamma / mean.squaredNorm();
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
  const Vector lam = r.beta * gram_eigen;
  r.gamma = (lam.array() / (lam.array() + r.alpha)).sum();
  r.log_evidence = model.log_evidence(phi, y, r.posterior);
  return r;
}

}  // namespace blr::inference
