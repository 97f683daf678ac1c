#include "blr/family/special.hpp"
#include "blr/inference/cvi.hpp"

#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>
#include <numbers>

#include "blr/core/blas.hpp"
#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/inference/gaussian_natural.hpp"
#include "blr/inference/kernels.hpp"
#include "blr/rule/natural_step.hpp"

namespace blr::inference {
namespace {


/// Everything evaluated at one q: moments, site expectations, ELBO.
struct Point {
  Vector lambda;
  Vector mean;
  Matrix covariance;
  double log_det_cov = 0;
  Vector g, h;  ///< ḡ_i, h̄_i
  double expected_loglik = 0;
  double elbo = 0;
};

/// Moments of λ; false when the precision is not positive definite.
bool moments(const Vector& lambda, Index d, bool full, Point& p) {
  p.lambda = lambda;
  if (full) {
    const Matrix s = full_precision(lambda, d);
    const Eigen::LLT<Matrix> llt(s);
    if (llt.info() != Eigen::Success) return false;
    p.mean = llt.solve(full_sm(lambda, d));
    p.covariance = llt.solve(Matrix(Matrix::Identity(d, d)));
    const Matrix l = llt.matrixL();
    p.log_det_cov = -2.0 * l.diagonal().array().log().sum();
  } else {
    const Vector s = lambda.tail(d);
    if (!((s.array() > 0).all() && s.allFinite())) return false;
    p.mean = lambda.head(d).cwiseQuotient(s);
    p.covariance = s.cwiseInverse().asDiagonal();
    p.log_det_cov = -s.array().log().sum();
  }
  return p.mean.allFinite();
}

double expected_log_prior(const Glm& model, const Vector& m, const Vector& var) {
  const Vector r = m - model.prior_mean;
  return 0.5 * model.prior_precision.array().log().sum() -
         0.5 * static_cast<double>(m.size()) * kLog2Pi -
         0.5 * (model.prior_precision.array() * (r.array().square() + var.array())).sum();
}

/// Site expectations and the ELBO at p (moments already set).
/// ḡ = E[∂ℓ/∂a], h̄ = E[∂²ℓ/∂a²] of one site under a ~ N(mean, var): the Gauss–Hermite values
/// `quadrature`, or, when `rng` is given, Monte Carlo with `samples` draws (Bonnet and Price with
/// sampled a).
void site_estimate(Likelihood lik, double y, double mean, double var, const SiteTerms& quadrature,
                   Rng* rng, int samples, double noise_precision, double& g, double& h) {
  if (!rng) {
    g = quadrature.gradient;
    h = quadrature.hessian;
    return;
  }
  double g_sum = 0, h_sum = 0;
  for (int s = 0; s < samples; ++s) {
    const SiteTerms t = site_terms(lik, y, mean + std::sqrt(var) * rng->normal(), noise_precision);
    g_sum += t.gradient;
    h_sum += t.hessian;
  }
  g = g_sum / samples;
  h = h_sum / samples;
}

/// v_i = x_iᵀ Σ x_i for every row, in blocks of rows so that the N×d product X·Σ is never held
/// whole (one block of it stays in cache): 512 rows for Eigen's product, 8192 for the system BLAS
/// (whose threads each call wakes: fewer, larger calls).
Vector site_variances(const Matrix& x, const Matrix& covariance, bool full) {
  if (!full) return x.array().square().matrix() * covariance.diagonal();
  const Index n = x.rows();
  const bool large = blas_worthwhile(n, x.cols(), x.cols());  // the whole X·Σ, block by block
  const Index block_rows = large ? 8192 : 512;
  Vector v(n);
  Matrix t(std::min(block_rows, n), x.cols());
  for (Index b = 0; b < n; b += block_rows) {
    const Index r = std::min(block_rows, n - b);
    if (large)
      blas_multiply(x.middleRows(b, r), covariance, t.topRows(r));
    else
      t.topRows(r).noalias() = x.middleRows(b, r) * covariance;
    v.segment(b, r) = t.topRows(r).cwiseProduct(x.middleRows(b, r)).rowwise().sum();
  }
  return v;
}

void evaluate(const Glm& model, bool full, const GaussHermite& gh, Rng* rng, int samples,
              Point& p) {
  const Index n = model.x.rows(), d = model.dimension();
  const Vector am = model.x * p.mean;
  const Vector v = site_variances(model.x, p.covariance, full).cwiseMax(0.0);
  p.g.resize(n);
  p.h.resize(n);
  p.expected_loglik = 0;
  if (model.likelihood == Likelihood::logistic && !rng) {
    // The quadrature for all sites at once (vectorised); the same values site by site below.
    Vector value(n);
    expected_logistic_sites(n, model.y.data(), am.data(), v.data(), gh, value.data(),
                            p.g.data(), p.h.data());
    p.expected_loglik = value.sum();
  } else {
    for (Index i = 0; i < n; ++i) {
      const SiteTerms e =
          expected_site_terms(model.likelihood, model.y[i], am[i], v[i], gh, model.noise_precision);
      p.expected_loglik += e.value;
      site_estimate(model.likelihood, model.y[i], am[i], v[i], e, rng, samples,
                    model.noise_precision, p.g[i], p.h[i]);
    }
  }
  const double entropy = 0.5 * static_cast<double>(d) * (1.0 + kLog2Pi) + 0.5 * p.log_det_cov;
  p.elbo = p.expected_loglik + expected_log_prior(model, p.mean, p.covariance.diagonal()) + entropy;
}

/// λ₀ + Σ_i λ̃_i = (Ĥm − ĝ, Ĥ) at p, in the family's coordinates.
Vector target(const Glm& model, bool full, const Point& p) {
  const Vector ghat =
      model.prior_precision.cwiseProduct(p.mean - model.prior_mean) - model.x.transpose() * p.g;
  if (full) {
    Matrix hhat = weighted_gram(model.x, -p.h);
    hhat.diagonal() += model.prior_precision;
    return pack_full(hhat * p.mean - ghat, hhat);
  }
  const Vector hdiag =
      model.x.array().square().matrix().transpose() * (-p.h) + model.prior_precision;
  return pack_diag(hdiag.cwiseProduct(p.mean) - ghat, hdiag);
}

double max_abs(const Vector& v) {
  return v.size() ? v.cwiseAbs().maxCoeff() : 0.0;
}

/// Step-size policy of the deterministic runs: ρ starts at the option's value; a step that would
/// lower the ELBO is retried with ρ/2 (backtracking), and when an accepted step points back against
/// the previous one (cosine < −½) without being clearly shorter (> 0.9 of its length) — the
/// iteration oscillates instead of contracting, as the Jacobi-like mean-field mean update at ρ = 1
/// does on correlated data — ρ is halved for the steps that follow.
struct Damping {
  double rho;
  Vector last_step;
  void after(const Vector& step) {
    if (last_step.size() == step.size()) {
      const double denom = last_step.norm() * step.norm();
      if (denom > 0 && last_step.dot(step) < -0.5 * denom && step.norm() > 0.9 * last_step.norm() &&
          rho > 1e-3)
        rho *= 0.5;
    }
    last_step = step;
  }
};

}  // namespace

const OptionTable<CviOptions>& CviOptions::table() {
  using O = CviOptions;
  static const OptionTable<O> t =
      OptionTable<O>("CVI")
          .choice("family", &O::family,
                  {{"gaussian-full", GaussianFamilyKind::full},
                   {"gaussian-diag", GaussianFamilyKind::diagonal}},
                  "the Gaussian family: full covariance or mean field")
          .number("rho", &O::rho, Range::between(0, 1, true),
                  "BLR step size ρ (halved while the ELBO would fall)")
          .integer("max_iterations", &O::max_iterations, Range::between(1, 1e9),
                   "iterations at most; a fit that stops there unconverged is refused")
          .number("tolerance", &O::tolerance, Range::positive(),
                  "stop when max|Δλ| ≤ tolerance·max(1, max|λ|)")
          .integer("quadrature_nodes", &O::quadrature_nodes, Range::between(2, 200),
                   "Gauss–Hermite nodes per site")
          .flag("monte_carlo", &O::monte_carlo,
                "estimate the expected gradients by sampling instead of quadrature")
          .integer("mc_samples", &O::samples, Range::between(1, 1e9),
                   "Monte Carlo draws per site and iteration (monte_carlo)")
          .integer("seed", &O::seed, Range::between(0, 9.2e18), "seed of the Monte Carlo draws")
          .flag("backtrack", &O::backtrack, "halve ρ while the ELBO would fall (quadrature only)");
  return t;
}

void CviOptions::validate() const {
  table().validate(*this);
}

double glm_elbo(const Glm& model, const Vector& mean, const Matrix& covariance,
                const GaussHermite& quadrature) {
  Point p;
  p.mean = mean;
  p.covariance = covariance;
  const Eigen::LLT<Matrix> llt(covariance);
  check(llt.info() == Eigen::Success, "The covariance is not positive definite.");
  const Matrix l = llt.matrixL();
  p.log_det_cov = 2.0 * l.diagonal().array().log().sum();
  evaluate(model, true, quadrature, nullptr, 0, p);
  return p.elbo;
}

CviResult cvi(const Glm& model, const CviOptions& options, const Vector* start) {
  model.validate();
  options.validate();
  const Index d = model.dimension();
  const bool full = options.family == GaussianFamilyKind::full;
  const GaussHermite gh(options.quadrature_nodes);
  Rng rng(options.seed);
  Rng* mc = options.monte_carlo ? &rng : nullptr;
  Vector lambda0 =
      full ? pack_full(model.prior_precision.cwiseProduct(model.prior_mean),
                       Matrix(model.prior_precision.asDiagonal()))
           : pack_diag(model.prior_precision.cwiseProduct(model.prior_mean), model.prior_precision);
  if (start) {
    check(start->size() == lambda0.size(), "The starting natural parameter has the wrong length.");
    lambda0 = *start;
  }
  Point cur;
  check(moments(lambda0, d, full, cur), "The starting precision is not positive definite.");
  evaluate(model, full, gh, mc, options.samples, cur);
  CviResult r;
  r.elbos.push_back(cur.elbo);
  Damping damping{options.rho, Vector()};
  for (int it = 1; it <= options.max_iterations; ++it) {
    const Vector tgt = target(model, full, cur);
    double rho =
        options.monte_carlo ? options.rho / std::pow(1.0 + (it - 1) / 10.0, 0.6) : damping.rho;
    Point next;
    bool accepted = false;
    while (rho >= 1e-8) {
      const Vector cand = natural_step_towards(cur.lambda, tgt, rho);
      if (moments(cand, d, full, next)) {
        evaluate(model, full, gh, mc, options.samples, next);
        const bool better = next.elbo >= cur.elbo - 1e-12 * std::abs(cur.elbo);
        if (std::isfinite(next.elbo) && (better || !options.backtrack || options.monte_carlo)) {
          accepted = true;
          break;
        }
      }
      rho *= 0.5;
    }
    check(accepted, fmt::format("CVI step {}: no step size kept the precision positive definite "
                                "and the ELBO from falling.",
                                it));
    const double change = max_abs(next.lambda - cur.lambda);
    const double scale = std::max(1.0, max_abs(cur.lambda));
    if (options.backtrack) damping.after(next.lambda - cur.lambda);
    cur = std::move(next);
    r.iterations = it;
    r.elbos.push_back(cur.elbo);
    if (!options.monte_carlo && change <= options.tolerance * scale) {
      r.converged = true;
      break;
    }
  }
  r.natural = cur.lambda;
  r.mean = cur.mean;
  r.covariance = cur.covariance;
  r.elbo = cur.elbo;
  return r;
}

CviLaplaceStart cvi_laplace_start(const Glm& model, GaussianFamilyKind family) {
  const LaplaceResult l = laplace(model);
  check(l.converged, "The Laplace start for CVI did not converge; start from the prior instead.");
  const Matrix s = l.posterior.precision_matrix();
  CviLaplaceStart out;
  out.laplace_iterations = l.iterations;
  if (family == GaussianFamilyKind::full) {
    out.natural = pack_full(s * l.mean, s);
  } else {
    const Vector sd = s.diagonal();
    out.natural = pack_diag(sd.cwiseProduct(l.mean), sd);
  }
  return out;
}

// ---- Gaussian-process classification -----------------------------------------------------------

Matrix rbf_kernel(const Matrix& a, const Matrix& b, double lengthscale, double variance) {
  return Kernel{KernelKind::rbf, lengthscale, variance}.matrix(a, b);
}

namespace {

struct GpPoint {
  Vector sites;  ///< (ν, τ), length 2n
  Vector mean, variance;
  Eigen::LLT<Matrix> b_llt;
  Vector sqrt_tau;
  Vector g, h;
  double elbo = 0;
};

/// Moments of q(f) ∝ N(f | 0, K)·exp(νᵀf − ½ fᵀ diag(τ) f) without inverting K.
bool gp_moments(const Matrix& k, GpPoint& p) {
  const Index n = k.rows();
  const Vector nu = p.sites.head(n), tau = p.sites.tail(n);
  if (!((tau.array() >= 0).all() && p.sites.allFinite())) return false;
  p.sqrt_tau = tau.cwiseSqrt();
  Matrix b = p.sqrt_tau.asDiagonal() * k * p.sqrt_tau.asDiagonal();
  b.diagonal().array() += 1.0;
  p.b_llt.compute(b);
  if (p.b_llt.info() != Eigen::Success) return false;
  const Vector k_nu = k * nu;
  p.mean = k_nu - k * (p.sqrt_tau.cwiseProduct(p.b_llt.solve(p.sqrt_tau.cwiseProduct(k_nu))));
  const Matrix v = p.b_llt.matrixL().solve(Matrix(p.sqrt_tau.asDiagonal() * k));
  p.variance = k.diagonal() - v.colwise().squaredNorm().transpose();
  return p.mean.allFinite();
}

void gp_evaluate(const Matrix& k, const Vector& y, Likelihood lik, const GaussHermite& gh, Rng* rng,
                 int samples, GpPoint& p) {
  const Index n = k.rows();
  p.g.resize(n);
  p.h.resize(n);
  double eloglik = 0;
  for (Index i = 0; i < n; ++i) {
    const double vi = std::max(p.variance[i], 0.0);
    const SiteTerms e = expected_site_terms(lik, y[i], p.mean[i], vi, gh);
    eloglik += e.value;
    site_estimate(lik, y[i], p.mean[i], vi, e, rng, samples, 1.0, p.g[i], p.h[i]);
  }
  // KL(q ‖ N(0, K)) = ½[tr(B⁻¹) + mᵀK⁻¹m − n + log|B|], K⁻¹m = ν − diag(τ)m.
  const Vector nu = p.sites.head(n), tau = p.sites.tail(n);
  const Matrix l = p.b_llt.matrixL();
  const Matrix linv = l.triangularView<Eigen::Lower>().solve(Matrix(Matrix::Identity(n, n)));
  const double kl = 0.5 * (linv.squaredNorm() + p.mean.dot(nu - tau.cwiseProduct(p.mean)) -
                           static_cast<double>(n) + 2.0 * l.diagonal().array().log().sum());
  p.elbo = eloglik - kl;
}

}  // namespace

GpcResult gp_cvi(const Matrix& kernel, const Vector& y, Likelihood likelihood,
                 const CviOptions& options) {
  options.validate();
  const Index n = kernel.rows();
  check(n >= 1 && kernel.cols() == n && y.size() == n,
        "GP inference needs a square kernel matrix with one row per response.");
  if (likelihood == Likelihood::logistic)
    for (Index i = 0; i < n; ++i)
      check(y[i] == 0.0 || y[i] == 1.0, "GP classification needs 0/1 responses.");
  const GaussHermite gh(options.quadrature_nodes);
  Rng rng(options.seed);
  Rng* mc = options.monte_carlo ? &rng : nullptr;
  GpPoint cur;
  cur.sites = Vector::Zero(2 * n);  // λ = λ₀: q starts at the prior
  check(gp_moments(kernel, cur), "The kernel matrix is not positive semi-definite.");
  gp_evaluate(kernel, y, likelihood, gh, mc, options.samples, cur);
  GpcResult r;
  r.elbos.push_back(cur.elbo);
  Damping damping{options.rho, Vector()};
  for (int it = 1; it <= options.max_iterations; ++it) {
    // Site targets λ̃_i(μ): (ḡ_i − h̄_i m_i, −h̄_i).
    Vector tgt(2 * n);
    tgt.head(n) = cur.g - cur.h.cwiseProduct(cur.mean);
    tgt.tail(n) = -cur.h;
    double rho =
        options.monte_carlo ? options.rho / std::pow(1.0 + (it - 1) / 10.0, 0.6) : damping.rho;
    GpPoint next;
    bool accepted = false;
    while (rho >= 1e-8) {
      next.sites = natural_step_towards(cur.sites, tgt, rho);
      if (gp_moments(kernel, next)) {
        gp_evaluate(kernel, y, likelihood, gh, mc, options.samples, next);
        const bool better = next.elbo >= cur.elbo - 1e-12 * std::abs(cur.elbo);
        if (std::isfinite(next.elbo) && (better || !options.backtrack || options.monte_carlo)) {
          accepted = true;
          break;
        }
      }
      rho *= 0.5;
    }
    check(accepted, fmt::format("GP CVI step {}: no step size kept the ELBO from falling.", it));
    const double change = (next.sites - cur.sites).cwiseAbs().maxCoeff();
    const double scale = std::max(1.0, cur.sites.cwiseAbs().maxCoeff());
    if (options.backtrack) damping.after(next.sites - cur.sites);
    cur = std::move(next);
    r.iterations = it;
    r.elbos.push_back(cur.elbo);
    if (!options.monte_carlo && change <= options.tolerance * scale) {
      r.converged = true;
      break;
    }
  }
  r.site_nu = cur.sites.head(n);
  r.site_tau = cur.sites.tail(n);
  r.mean = cur.mean;
  r.variance = cur.variance;
  r.elbo = cur.elbo;
  return r;
}

void gp_predict_latent(const Matrix& kernel, const GpcResult& fit, const Matrix& cross,
                       const Vector& self_diag, Vector& mean, Vector& variance) {
  const Index n = kernel.rows();
  check(cross.rows() == n && self_diag.size() == cross.cols(),
        "GP prediction: the cross-kernel must have one row per training input.");
  GpPoint p;
  p.sites.resize(2 * n);
  p.sites << fit.site_nu, fit.site_tau;
  check(gp_moments(kernel, p), "GP prediction: the fitted sites are invalid.");
  mean = cross.transpose() * (fit.site_nu - fit.site_tau.cwiseProduct(p.mean));
  const Matrix v = p.b_llt.matrixL().solve(Matrix(p.sqrt_tau.asDiagonal() * cross));
  variance = (self_diag - v.colwise().squaredNorm().transpose()).cwiseMax(0.0);
}

}  // namespace blr::inference
