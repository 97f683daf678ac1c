#include "blr/inference/vmp.hpp"

#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <numbers>

#include "blr/core/error.hpp"
#include "blr/core/minibatch.hpp"
#include "blr/family/special.hpp"
#include "blr/inference/gmm.hpp"
#include "blr/rule/natural_step.hpp"

namespace blr::inference {
namespace {

const double kLogPi = std::log(std::numbers::pi);

/// max|a − b| relative to max(1, max|b|).
double rel_change(const Vector& a, const Vector& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

double gamma_entropy(double a, double b) {
  return a - std::log(b) + std::lgamma(a) + (1 - a) * digamma(a);
}

}  // namespace

// ---- options -----------------------------------------------------------------------------------

const OptionTable<VmpOptions>& VmpOptions::table() {
  using O = VmpOptions;
  static const OptionTable<O> t =
      OptionTable<O>("VMP")
          .integer("max_iterations", &O::max_iterations, Range::between(1, 1e9),
                   "sweeps at most; a fit that stops there unconverged is refused")
          .number("tolerance", &O::tolerance, Range::positive(),
                  "stop when no natural parameter moves by more than this, relative");
  return t;
}

void VmpOptions::validate() const {
  table().validate(*this);
}

const OptionTable<SviOptions>& SviOptions::table() {
  using O = SviOptions;
  static const OptionTable<O> t =
      OptionTable<O>("SVI")
          .integer("batch_size", &O::batch_size, Range::between(1, 1e9), "rows per minibatch")
          .integer("iterations", &O::iterations, Range::between(1, 1e9), "minibatch steps")
          .number("delay", &O::delay, Range::at_least(0), "τ in ρ_t = (t + τ)^(−κ)")
          .number("forget", &O::forget, Range::between(0.5, 1, true), "κ in ρ_t = (t + τ)^(−κ)")
          .integer("seed", &O::seed, Range::between(0, 9.2e18), "seed of the minibatch draws");
  return t;
}

void SviOptions::validate() const {
  table().validate(*this);
}

double SviOptions::rho(long t) const {
  return std::min(1.0, std::pow(static_cast<double>(t) + delay, -forget));
}

// ---- Normal–Gamma ------------------------------------------------------------------------------

void NormalGammaPrior::validate() const {
  check_positive("kappa0", kappa0);
  check_positive("a0", a0);
  check_positive("b0", b0);
  check(std::isfinite(mu0), "Option 'mu0' must be finite.");
}

namespace {

/// E[(μ − c)²] under q(μ).
double sq_dev(const NormalGammaMeanField& q, double c) {
  return (q.mean() - c) * (q.mean() - c) + q.mean_variance();
}

/// Target of q(μ) given q(τ): E[τ]·(κ₀μ₀ + scale·Σx, κ₀ + scale·n).
Vector mu_target(const NormalGammaPrior& p, const NormalGammaMeanField& q, double sum_x,
                 double count) {
  const double et = q.shape() / q.rate();
  return (Vector(2) << et * (p.kappa0 * p.mu0 + sum_x), et * (p.kappa0 + count)).finished();
}

/// Target of q(τ) given q(μ); `sum_sq` = Σ E[(x_n − μ)²] (scaled), `count` = N.
Vector tau_target(const NormalGammaPrior& p, const NormalGammaMeanField& q, double sum_sq,
                  double count) {
  return (Vector(2) << p.a0 - 1 + 0.5 * (count + 1),
          -(p.b0 + 0.5 * p.kappa0 * sq_dev(q, p.mu0) + 0.5 * sum_sq))
      .finished();
}

double sum_sq_dev(const NormalGammaMeanField& q, const Vector& x) {
  return (x.array() - q.mean()).square().sum() + static_cast<double>(x.size()) * q.mean_variance();
}

NormalGammaMeanField normal_gamma_start(const NormalGammaPrior& p) {
  NormalGammaMeanField q;
  q.tau_natural = (Vector(2) << p.a0 - 1, -p.b0).finished();
  const double s = p.kappa0 * p.a0 / p.b0;
  q.mu_natural = (Vector(2) << s * p.mu0, s).finished();
  return q;
}

}  // namespace

double normal_gamma_elbo(const NormalGammaPrior& p, const Vector& x,
                         const NormalGammaMeanField& q) {
  const double n = static_cast<double>(x.size());
  const double a = q.shape(), b = q.rate();
  const double elog_tau = digamma(a) - std::log(b), etau = a / b;
  const double lik = 0.5 * n * (elog_tau - kLog2Pi) - 0.5 * etau * sum_sq_dev(q, x);
  const double prior_mu =
      0.5 * (std::log(p.kappa0) + elog_tau - kLog2Pi) - 0.5 * p.kappa0 * etau * sq_dev(q, p.mu0);
  const double prior_tau =
      p.a0 * std::log(p.b0) - std::lgamma(p.a0) + (p.a0 - 1) * elog_tau - p.b0 * etau;
  const double h_mu = 0.5 * (1 + kLog2Pi + std::log(q.mean_variance()));
  return lik + prior_mu + prior_tau + h_mu + gamma_entropy(a, b);
}

NormalGammaResult normal_gamma_vmp(const NormalGammaPrior& p, const Vector& x,
                                   const VmpOptions& options) {
  p.validate();
  options.validate();
  check(x.size() >= 1 && x.allFinite(), "The Normal–Gamma model needs finite data.");
  const double n = static_cast<double>(x.size()), sx = x.sum();
  NormalGammaResult r;
  r.q = normal_gamma_start(p);
  r.elbos.push_back(normal_gamma_elbo(p, x, r.q));
  for (int it = 1; it <= options.max_iterations; ++it) {
    const NormalGammaMeanField before = r.q;
    r.q.mu_natural = natural_step_towards(r.q.mu_natural, mu_target(p, r.q, sx, n), 1.0);
    r.elbos.push_back(normal_gamma_elbo(p, x, r.q));
    r.q.tau_natural =
        natural_step_towards(r.q.tau_natural, tau_target(p, r.q, sum_sq_dev(r.q, x), n), 1.0);
    r.elbos.push_back(normal_gamma_elbo(p, x, r.q));
    r.iterations = it;
    if (std::max(rel_change(r.q.mu_natural, before.mu_natural),
                 rel_change(r.q.tau_natural, before.tau_natural)) <= options.tolerance) {
      r.converged = true;
      break;
    }
  }
  r.elbo = r.elbos.back();
  return r;
}

NormalGammaResult normal_gamma_svi(const NormalGammaPrior& p, const Vector& x,
                                   const SviOptions& options) {
  p.validate();
  options.validate();
  const Index n = x.size();
  check(n >= 1 && x.allFinite(), "The Normal–Gamma model needs finite data.");
  const Index m = std::min<Index>(options.batch_size, n);
  const double scale = static_cast<double>(n) / static_cast<double>(m);
  Rng rng(options.seed);
  MinibatchSampler batches(n, m);
  NormalGammaResult r;
  r.q = normal_gamma_start(p);
  r.elbos.push_back(normal_gamma_elbo(p, x, r.q));
  for (int t = 0; t < options.iterations; ++t) {
    const auto rows = batches.draw(rng);
    Vector xb(m);
    for (Index i = 0; i < m; ++i) xb[i] = x[rows[i]];
    const double rho = options.rho(t);
    r.q.mu_natural = natural_step_towards(
        r.q.mu_natural, mu_target(p, r.q, scale * xb.sum(), static_cast<double>(n)), rho);
    r.q.tau_natural = natural_step_towards(
        r.q.tau_natural, tau_target(p, r.q, scale * sum_sq_dev(r.q, xb), static_cast<double>(n)),
        rho);
    r.iterations = t + 1;
  }
  r.elbo = normal_gamma_elbo(p, x, r.q);
  r.elbos.push_back(r.elbo);
  return r;
}

// ---- Bayesian Gaussian mixture -----------------------------------------------------------------

BayesGmmPrior BayesGmmPrior::resolved(const Matrix& x, int components) const {
  check(x.rows() >= 2, "A Bayesian Gaussian mixture needs at least two data points.");
  check(components >= 1, "Option 'components' must be at least 1.");
  BayesGmmPrior p = *this;
  const Index d = x.cols();
  if (p.alpha0 <= 0) p.alpha0 = 1.0 / components;
  if (p.m0.size() == 0) p.m0 = x.colwise().mean().transpose();
  if (p.nu0 <= 0) p.nu0 = static_cast<double>(d);
  if (p.w0.size() == 0) {
    const Matrix xc = x.rowwise() - x.colwise().mean();
    const Matrix cov = xc.transpose() * xc / static_cast<double>(x.rows());
    // W0 = (ν0 · covariance)⁻¹ exists only for a non-singular covariance; duplicated points, a
    // constant column or collinear columns would turn it into NaN several steps later.
    const Eigen::SelfAdjointEigenSolver<Matrix> eigen(cov);
    const double largest = eigen.eigenvalues().maxCoeff();
    check(std::isfinite(largest) && largest > 0 &&
              eigen.eigenvalues().minCoeff() > 1e-12 * largest,
          fmt::format("The data covariance is singular (all points equal, a constant column or "
                      "linearly dependent columns among {} rows), so the default prior scale "
                      "W0 = (nu0 * covariance)^-1 does not exist; drop such columns or points.",
                      x.rows()));
    p.w0 = (p.nu0 * cov).inverse();
  }
  return p;
}

void BayesGmmPrior::validate(Index d) const {
  check_positive("alpha0", alpha0);
  check_positive("beta0", beta0);
  check(m0.size() == d, fmt::format("The prior mean m0 must have {} entries.", d));
  check(nu0 > static_cast<double>(d) - 1.0,
        fmt::format("Option 'nu0' must exceed D − 1 = {}; got {}.", d - 1, nu0));
  check(w0.rows() == d && w0.cols() == d, fmt::format("The prior scale W0 must be {}×{}.", d, d));
  const Eigen::LLT<Matrix> llt(w0);
  check(llt.info() == Eigen::Success, "The prior scale W0 must be positive definite.");
}

Index BayesGmmPosterior::dimension() const {
  const Index len = eta.front().size();  // 2 + D + D²
  const Index d = static_cast<Index>(std::llround((-1.0 + std::sqrt(1.0 + 4.0 * (len - 2))) / 2.0));
  return d;
}
double BayesGmmPosterior::beta(Index k) const {
  return eta[k][0];
}
double BayesGmmPosterior::nu(Index k) const {
  return eta[k][eta[k].size() - 1];
}
Vector BayesGmmPosterior::mean(Index k) const {
  return eta[k].segment(1, dimension()) / beta(k);
}
Matrix BayesGmmPosterior::w(Index k) const {
  const Index d = dimension();
  const Vector m = mean(k);
  Matrix winv = Eigen::Map<const Matrix>(eta[k].data() + 1 + d, d, d) - beta(k) * m * m.transpose();
  winv = 0.5 * (winv + winv.transpose());
  return winv.inverse();
}
Vector BayesGmmPosterior::expected_weights() const {
  return alpha / alpha.sum();
}
Matrix BayesGmmPosterior::expected_covariance(Index k) const {
  return (nu(k) * w(k)).inverse();
}

namespace {

Vector pack_eta(double beta, const Vector& bm, const Matrix& second, double nu) {
  const Index d = bm.size();
  Vector e(2 + d + d * d);
  e[0] = beta;
  e.segment(1, d) = bm;
  e.segment(1 + d, d * d) = Eigen::Map<const Vector>(second.data(), d * d);
  e[1 + d + d * d] = nu;
  return e;
}

Vector prior_eta(const BayesGmmPrior& p) {
  return pack_eta(p.beta0, p.beta0 * p.m0, p.w0.inverse() + p.beta0 * p.m0 * p.m0.transpose(),
                  p.nu0);
}

/// E log|Λ| = Σ_d ψ((ν + 1 − d)/2) + D log 2 + log|W|.
double expected_log_det(double nu, const Matrix& w) {
  const Index d = w.rows();
  double s = static_cast<double>(d) * std::log(2.0);
  for (Index i = 1; i <= d; ++i) s += digamma(0.5 * (nu + 1.0 - static_cast<double>(i)));
  const Eigen::LLT<Matrix> llt(w);
  const Matrix l = llt.matrixL();
  return s + 2.0 * l.diagonal().array().log().sum();
}

/// ln B(W, ν) of the Wishart normaliser.
double log_wishart_b(const Matrix& w, double nu) {
  const Index d = w.rows();
  const Eigen::LLT<Matrix> llt(w);
  const Matrix l = llt.matrixL();
  double out = -0.5 * nu * 2.0 * l.diagonal().array().log().sum() -
               0.5 * nu * static_cast<double>(d) * std::log(2.0) -
               0.25 * static_cast<double>(d * (d - 1)) * kLogPi;
  for (Index i = 1; i <= d; ++i) out -= std::lgamma(0.5 * (nu + 1.0 - static_cast<double>(i)));
  return out;
}

double log_dirichlet_c(const Vector& a) {
  double s = std::lgamma(a.sum());
  for (Index k = 0; k < a.size(); ++k) s -= std::lgamma(a[k]);
  return s;
}

/// The local target: N×K matrix of E log π_k + ½E log|Λ_k| − (D/2)log 2π − ½E[quadratic].
Matrix local_target(const Matrix& x, const BayesGmmPosterior& q) {
  const Index n = x.rows(), k = q.components(), d = x.cols();
  Matrix out(n, k);
  const double dig_sum = digamma(q.alpha.sum());
  for (Index j = 0; j < k; ++j) {
    const Matrix w = q.w(j);
    const Vector m = q.mean(j);
    const double elog_pi = digamma(q.alpha[j]) - dig_sum;
    const double elog_det = expected_log_det(q.nu(j), w);
    const Matrix centred = x.rowwise() - m.transpose();
    const Vector quad = ((centred * w).cwiseProduct(centred)).rowwise().sum();
    out.col(j) = (elog_pi + 0.5 * elog_det - 0.5 * static_cast<double>(d) * kLog2Pi -
                  0.5 * static_cast<double>(d) / q.beta(j)) -
                 0.5 * q.nu(j) * quad.array();
  }
  return out;
}

/// Global targets from (scaled) weighted statistics of the rows in `rows` (all when empty).
void global_step(const Matrix& x, const Matrix& r, const BayesGmmPrior& p, double scale, double rho,
                 BayesGmmPosterior& q, bool weights, bool components) {
  const Index k = q.components();
  if (weights) {
    const Vector target = (p.alpha0 + scale * r.colwise().sum().array()).matrix().transpose();
    q.alpha = natural_step_towards(q.alpha, target, rho);
  }
  if (components) {
    const Vector eta0 = prior_eta(p);
    for (Index j = 0; j < k; ++j) {
      const Vector rj = r.col(j);
      const double nk = rj.sum();
      const Matrix xx = x.transpose() * rj.asDiagonal() * x;
      const Vector stats = pack_eta(nk, x.transpose() * rj, xx, nk);
      q.eta[j] = natural_step_towards(q.eta[j], eta0 + scale * stats, rho);
    }
  }
}

Matrix softmax_rows(const Matrix& logits) {
  return (logits.colwise() - log_sum_exp_rows(logits)).array().exp();
}

BayesGmmPosterior initial_posterior(const Matrix& x, int components, const BayesGmmPrior& p,
                                    std::uint64_t seed, Matrix& r) {
  Rng rng(seed);
  const GaussianMixture init = kmeans_plus_plus_init(x, components, CovarianceType::full, rng);
  // Hard assignments to the nearest k-means centre.
  r = Matrix::Zero(x.rows(), components);
  for (Index i = 0; i < x.rows(); ++i) {
    Index best = 0;
    (init.means.rowwise() - x.row(i)).rowwise().squaredNorm().minCoeff(&best);
    r(i, best) = 1.0;
  }
  BayesGmmPosterior q;
  q.alpha = Vector::Constant(components, p.alpha0);
  q.eta.assign(components, prior_eta(p));
  global_step(x, r, p, 1.0, 1.0, q, true, true);
  return q;
}

}  // namespace

Matrix bayes_gmm_responsibilities(const Matrix& x, const BayesGmmPosterior& q) {
  const Index n = x.rows(), k = q.components();
  Vector lambda = Vector::Zero(n * k);
  const Matrix tgt = local_target(x, q);
  lambda = natural_step_towards(lambda, Eigen::Map<const Vector>(tgt.data(), n * k), 1.0);
  return softmax_rows(Eigen::Map<const Matrix>(lambda.data(), n, k));
}

double bayes_gmm_elbo(const Matrix& x, const BayesGmmPrior& p, const BayesGmmPosterior& q,
                      const Matrix& r) {
  const Index k = q.components(), d = x.cols();
  const double dd = static_cast<double>(d);
  const Vector elog_pi =
      (q.alpha.array().unaryExpr([](double a) { return digamma(a); }) - digamma(q.alpha.sum()))
          .matrix();
  const Matrix w0inv = p.w0.inverse();
  const double log_b0 = log_wishart_b(p.w0, p.nu0);
  double elbo = 0;
  // E[log p(X | Z, μ, Λ)] + E[log p(Z | π)] − E[log q(Z)]: the local target plus entropy.
  const Matrix tgt = local_target(x, q);
  const Matrix logr = r.array().max(1e-300).log();
  elbo += (r.array() * (tgt.array() - logr.array())).sum();
  // The E log π_k part of `tgt` is E[log p(Z | π)], already counted.
  // E[log p(π)] − E[log q(π)].
  elbo += log_dirichlet_c(Vector::Constant(k, p.alpha0)) + (p.alpha0 - 1.0) * elog_pi.sum();
  elbo -= log_dirichlet_c(q.alpha) + ((q.alpha.array() - 1.0) * elog_pi.array()).sum();
  for (Index j = 0; j < k; ++j) {
    const Matrix w = q.w(j);
    const Vector m = q.mean(j);
    const double beta = q.beta(j), nu = q.nu(j);
    const double eld = expected_log_det(nu, w);
    const Vector dm = m - p.m0;
    // E[log p(μ_k, Λ_k)] (PRML 10.74).
    elbo += 0.5 * (dd * std::log(p.beta0 / (2 * std::numbers::pi)) + eld - dd * p.beta0 / beta -
                   p.beta0 * nu * dm.dot(w * dm));
    elbo += log_b0 + 0.5 * (p.nu0 - dd - 1.0) * eld - 0.5 * nu * (w0inv * w).trace();
    // − E[log q(μ_k, Λ_k)] (PRML 10.77 with the Wishart entropy).
    const double h_wishart = -log_wishart_b(w, nu) - 0.5 * (nu - dd - 1.0) * eld + 0.5 * nu * dd;
    elbo -= 0.5 * eld + 0.5 * dd * std::log(beta / (2 * std::numbers::pi)) - 0.5 * dd - h_wishart;
  }
  return elbo;
}

BayesGmmResult bayes_gmm_vmp(const Matrix& x, int components, const BayesGmmPrior& prior,
                             const VmpOptions& options, std::uint64_t seed) {
  options.validate();
  check(x.allFinite(), "The mixture data hold a non-finite number.");
  const BayesGmmPrior p = prior.resolved(x, components);
  p.validate(x.cols());
  check(x.rows() >= components,
        fmt::format("A mixture of {} components needs at least {} data points.", components,
                    components));
  BayesGmmResult res;
  res.q = initial_posterior(x, components, p, seed, res.responsibilities);
  res.elbos.push_back(bayes_gmm_elbo(x, p, res.q, res.responsibilities));
  for (int it = 1; it <= options.max_iterations; ++it) {
    const BayesGmmPosterior before = res.q;
    res.responsibilities = bayes_gmm_responsibilities(x, res.q);  // local nodes, ρ = 1
    res.elbos.push_back(bayes_gmm_elbo(x, p, res.q, res.responsibilities));
    global_step(x, res.responsibilities, p, 1.0, 1.0, res.q, true, false);  // q(π), ρ = 1
    res.elbos.push_back(bayes_gmm_elbo(x, p, res.q, res.responsibilities));
    global_step(x, res.responsibilities, p, 1.0, 1.0, res.q, false, true);  // q(μ, Λ), ρ = 1
    res.elbos.push_back(bayes_gmm_elbo(x, p, res.q, res.responsibilities));
    check(std::isfinite(res.elbos.back()),
          fmt::format("VMP sweep {} produced a non-finite ELBO.", it));
    res.iterations = it;
    double change = rel_change(res.q.alpha, before.alpha);
    for (Index k = 0; k < res.q.components(); ++k)
      change = std::max(change, rel_change(res.q.eta[k], before.eta[k]));
    if (change <= options.tolerance) {
      res.converged = true;
      break;
    }
  }
  res.elbo = res.elbos.back();
  return res;
}

BayesGmmResult bayes_gmm_svi(const Matrix& x, int components, const BayesGmmPrior& prior,
                             const SviOptions& options, int elbo_every) {
  options.validate();
  check(x.allFinite(), "The mixture data hold a non-finite number.");
  const BayesGmmPrior p = prior.resolved(x, components);
  p.validate(x.cols());
  const Index n = x.rows();
  check(n >= components, fmt::format("A mixture of {} components needs at least {} data points.",
                                     components, components));
  const Index m = std::min<Index>(options.batch_size, n);
  const double scale = static_cast<double>(n) / static_cast<double>(m);
  BayesGmmResult res;
  Matrix r0;
  res.q = initial_posterior(x, components, p, options.seed, r0);
  Rng rng(options.seed + 1);
  MinibatchSampler batches(n, m);
  for (int t = 0; t < options.iterations; ++t) {
    const auto rows = batches.draw(rng);
    Matrix xb(m, x.cols());
    for (Index i = 0; i < m; ++i) xb.row(i) = x.row(rows[i]);
    const Matrix rb = bayes_gmm_responsibilities(xb, res.q);           // local, ρ = 1
    global_step(xb, rb, p, scale, options.rho(t), res.q, true, true);  // global, ρ_t < 1
    res.iterations = t + 1;
    if (elbo_every > 0 && (t + 1) % elbo_every == 0) {
      res.elbos.push_back(bayes_gmm_elbo(x, p, res.q, bayes_gmm_responsibilities(x, res.q)));
    }
  }
  res.responsibilities = bayes_gmm_responsibilities(x, res.q);
  res.elbo = bayes_gmm_elbo(x, p, res.q, res.responsibilities);
  return res;
}

}  // namespace blr::inference
