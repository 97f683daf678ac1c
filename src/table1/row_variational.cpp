// Table 1, the variational-inference rows (§5.3–5.4). Each preset is run beside the classical
// algorithm written plainly here in its textbook parameters:
//   • VMP (Winn & Bishop 2005): the mean-field Normal–Gamma coordinate ascent of Bishop, PRML
//     §10.1.3 (eqs. 10.26–10.30), in (m, s) for q(μ) = N(m, s⁻¹) and (a, b) for q(τ) = Gamma(a, b);
//   • SVI (Hoffman et al. 2013, Alg. 1): the same nodes with minibatch targets scaled by N/M and
//     the convex combination (1 − ρ_t)·old + ρ_t·target of the natural parameters, which is linear
//     in (sm, s) and (a, b); and the Bayesian Gaussian mixture with local q(z_i) (PRML §10.2):
//     responsibilities by PRML eq. 10.46–10.49 (local ρ = 1), the intermediate global parameters by
//     the VB M-step eqs. 10.58–10.63 on N/M-scaled minibatch statistics, then the convex combination
//     of α and of the Normal–Wishart natural parameters (affine in β, βm, W⁻¹ + βmmᵀ, ν). The
//     minibatches come from the same MinibatchSampler and seed;
//   • non-conjugate VMP (Knowles & Minka 2011): for a fully factorised Gaussian q(w_j) = N(m_j, v_j)
//     and a non-conjugate factor S = Σ_i E_q[log p(y_i | x_iᵀw)], the message is the gradient of S
//     in the expectation parameters (m_j, m_j² + v_j):  precision −2∂S/∂v_j, precision-times-mean
//     ∂S/∂m_j − 2m_j ∂S/∂v_j, plus the prior; all nodes updated in parallel (ρ = 1);
//   • non-conjugate VI (eq. 58; Opper & Archambeau 2009): the fixed point of the full-Gaussian BLR
//     is the stationary point of the ELBO, ∂ELBO/∂m = Σ_i ḡ_i x_i − S₀(m − m₀) = 0 and
//     ∂ELBO/∂Σ = ½(Σ_i h̄_i x_i x_iᵀ − S₀ + Σ⁻¹) = 0.
// The Gaussian expectations ḡ_i = E[∂_a log p], h̄_i = E[∂²_a log p] (Bonnet and Price) come from
// the library's Gauss–Hermite integrals (expected_site_terms, the presets' too): what is checked is
// the algorithms around them, and the only differences left are rounding.
#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <numbers>

#include "blr/core/minibatch.hpp"
#include "blr/family/special.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/quadrature.hpp"
#include "blr/inference/vmp.hpp"
#include "blr/io/csv.hpp"
#include "problems.hpp"
#include "reductions.hpp"

namespace blr::detail {

namespace {

/// Old Faithful eruption durations (N = 272) and a weak Normal–Gamma prior.
Vector faithful_eruptions() {
  const io::CsvTable table = io::CsvTable::read(data_file("faithful.csv"));
  return table.numeric_column("eruptions");
}

inference::NormalGammaPrior eruption_prior() {
  inference::NormalGammaPrior p;
  p.mu0 = 3.0;
  p.kappa0 = 0.5;
  p.a0 = 2.0;
  p.b0 = 1.0;
  return p;
}

/// Textbook mean-field Normal–Gamma posterior: q(μ) = N(m, 1/s), q(τ) = Gamma(a, rate b).
struct NormalGammaPlain {
  double m, s, a, b;
};

/// Largest relative difference between the preset's q and the plain one.
double normal_gamma_deviation(const inference::NormalGammaMeanField& q, const NormalGammaPlain& p) {
  auto rel = [](double x, double y) { return std::abs(x - y) / std::max(1.0, std::abs(y)); };
  return std::max({rel(q.mean(), p.m), rel(q.mu_natural[1], p.s), rel(q.shape(), p.a),
                   rel(q.rate(), p.b)});
}

/// PRML eq. 10.26–10.27: q(μ) given E[τ] = a/b; batch sums scaled by N/M (M = N for VMP).
NormalGammaPlain mu_update(const inference::NormalGammaPrior& prior, const NormalGammaPlain& q,
                           double n, double scaled_sum) {
  const double expected_tau = q.a / q.b;
  NormalGammaPlain next = q;
  next.m = (prior.kappa0 * prior.mu0 + scaled_sum) / (prior.kappa0 + n);
  next.s = (prior.kappa0 + n) * expected_tau;
  return next;
}

/// PRML eqs. 10.29–10.30: q(τ) given q(μ); E[(x − μ)²] = (x − m)² + 1/s.
NormalGammaPlain tau_update(const inference::NormalGammaPrior& prior, const NormalGammaPlain& q,
                            double n, double scaled_square_sum) {
  NormalGammaPlain next = q;
  next.a = prior.a0 + 0.5 * (n + 1.0);
  const double prior_term = (q.m - prior.mu0) * (q.m - prior.mu0) + 1.0 / q.s;
  next.b = prior.b0 + 0.5 * (prior.kappa0 * prior_term + scaled_square_sum);
  return next;
}

double square_deviations(const Vector& x, const NormalGammaPlain& q) {
  double sum = 0.0;
  for (Index i = 0; i < x.size(); ++i) sum += (x[i] - q.m) * (x[i] - q.m) + 1.0 / q.s;
  return sum;
}

/// Where the presets start: q(τ) = prior, q(μ) = N(μ₀, (κ₀ E_prior[τ])⁻¹).
NormalGammaPlain normal_gamma_start(const inference::NormalGammaPrior& prior) {
  return {prior.mu0, prior.kappa0 * prior.a0 / prior.b0, prior.a0, prior.b0};
}

/// Pima logistic regression (research/peers.md §4(e)): standardised features and an intercept,
/// isotropic prior precision 1.
inference::Glm pima_logistic() {
  const auto train = io::CsvTable::read(data_file("pima_train.csv"));
  const auto names = train.columns_except({"type"});
  const auto standardizer = io::Standardizer::fit(train.numeric_columns(names), names);
  return inference::Glm::with_isotropic_prior(
      io::with_intercept(standardizer.transform(train.numeric_columns(names))),
      train.binary_labels("type", "Yes", {"Yes", "No"}), inference::Likelihood::logistic, 1.0);
}

/// Textbook q(π) q(μ, Λ) of PRML §10.2: Dir(α), NW(m_k, β_k, W_k, ν_k).
struct BayesGmmPlain {
  Vector alpha, beta, nu;
  std::vector<Vector> m;
  std::vector<Matrix> w;
};

BayesGmmPlain plain_from(const inference::BayesGmmPosterior& q) {
  BayesGmmPlain p{q.alpha, Vector(q.components()), Vector(q.components()), {}, {}};
  for (Index k = 0; k < q.components(); ++k) {
    p.beta[k] = q.beta(k);
    p.nu[k] = q.nu(k);
    p.m.push_back(q.mean(k));
    p.w.push_back(q.w(k));
  }
  return p;
}

double bayes_gmm_deviation(const inference::BayesGmmPosterior& q, const BayesGmmPlain& p) {
  auto rel = [](const auto& a, const auto& b) {
    return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
  };
  double deviation = rel(q.alpha, p.alpha);
  for (Index k = 0; k < q.components(); ++k) {
    deviation = std::max({deviation, rel(Vector::Constant(1, q.beta(k)), Vector::Constant(1, p.beta[k])),
                          rel(Vector::Constant(1, q.nu(k)), Vector::Constant(1, p.nu[k])),
                          rel(q.mean(k), p.m[k]), rel(q.w(k), p.w[k])});
  }
  return deviation;
}

/// PRML eqs. 10.46–10.49: responsibilities of the rows of x under q.
Matrix plain_responsibilities(const Matrix& x, const BayesGmmPlain& q) {
  const Index n = x.rows(), d = x.cols(), components = q.alpha.size();
  const double dd = static_cast<double>(d);
  Matrix log_rho(n, components);
  for (Index k = 0; k < components; ++k) {
    double expected_log_det = dd * std::log(2.0) + std::log(q.w[k].determinant());
    for (Index i = 1; i <= d; ++i) expected_log_det += digamma(0.5 * (q.nu[k] + 1.0 - i));
    const double expected_log_pi = digamma(q.alpha[k]) - digamma(q.alpha.sum());
    for (Index i = 0; i < n; ++i) {
      const Vector r = x.row(i).transpose() - q.m[k];
      log_rho(i, k) = expected_log_pi + 0.5 * expected_log_det - 0.5 * dd * std::log(2.0 * std::numbers::pi) -
                      0.5 * (dd / q.beta[k] + q.nu[k] * r.dot(q.w[k] * r));
    }
  }
  Matrix r(n, components);
  for (Index i = 0; i < n; ++i) {
    const double top = log_rho.row(i).maxCoeff();
    r.row(i) = (log_rho.row(i).array() - top).exp();
    r.row(i) /= r.row(i).sum();
  }
  return r;
}

/// One SVI step: local responsibilities, PRML's VB M-step (10.58–10.63) on N/M-scaled statistics,
/// and the convex combination of the natural parameters.
void plain_gmm_svi_step(const Matrix& batch, double scale, double rho,
                        const inference::BayesGmmPrior& prior, BayesGmmPlain& q) {
  const Matrix r = plain_responsibilities(batch, q);
  const Matrix w0_inverse = prior.w0.inverse();
  for (Index k = 0; k < q.alpha.size(); ++k) {
    const double nk = scale * r.col(k).sum();
    const Vector xbar = scale * (batch.transpose() * r.col(k)) / nk;
    Matrix sk = Matrix::Zero(batch.cols(), batch.cols());
    for (Index i = 0; i < batch.rows(); ++i) {
      const Vector c = batch.row(i).transpose() - xbar;
      sk += scale * r(i, k) * c * c.transpose() / nk;
    }
    const double beta_hat = prior.beta0 + nk, nu_hat = prior.nu0 + nk;
    const Vector m_hat = (prior.beta0 * prior.m0 + nk * xbar) / beta_hat;
    const Vector shift = xbar - prior.m0;
    const Matrix w_hat_inverse =
        w0_inverse + nk * sk + prior.beta0 * nk / (prior.beta0 + nk) * shift * shift.transpose();
    // Natural parameters up to an affine map: (β, βm, W⁻¹ + βmmᵀ, ν).
    const double beta = (1 - rho) * q.beta[k] + rho * beta_hat;
    const Vector beta_m = (1 - rho) * q.beta[k] * q.m[k] + rho * beta_hat * m_hat;
    const Matrix second = (1 - rho) * (q.w[k].inverse() + q.beta[k] * q.m[k] * q.m[k].transpose()) +
                          rho * (w_hat_inverse + beta_hat * m_hat * m_hat.transpose());
    q.alpha[k] = (1 - rho) * q.alpha[k] + rho * (prior.alpha0 + nk);
    q.nu[k] = (1 - rho) * q.nu[k] + rho * nu_hat;
    q.beta[k] = beta;
    q.m[k] = beta_m / beta;
    q.w[k] = (second - beta * q.m[k] * q.m[k].transpose()).inverse();
  }
}

/// SVI for the Bayesian mixture on Old Faithful (both columns), K = 2: the preset after T steps
/// against its state after one step continued by T − 1 plain steps on the same minibatches.
double bayes_gmm_svi_deviation() {
  const io::CsvTable table = io::CsvTable::read(data_file("faithful.csv"));
  const Matrix x = table.numeric_columns({"eruptions", "waiting"});
  const int components = 2;
  const auto prior = inference::BayesGmmPrior{}.resolved(x, components);
  inference::SviOptions options;
  options.batch_size = 16;
  options.delay = 1.0;
  options.forget = 0.7;
  options.seed = 5;
  options.iterations = 1;
  const BayesGmmPlain first = plain_from(inference::bayes_gmm_svi(x, components, prior, options).q);
  const double scale = static_cast<double>(x.rows()) / options.batch_size;
  double deviation = 0.0;
  for (int iterations : {2, 5, 30}) {
    options.iterations = iterations;
    const auto preset = inference::bayes_gmm_svi(x, components, prior, options);
    Rng rng(options.seed + 1);
    MinibatchSampler batches(x.rows(), options.batch_size);
    batches.draw(rng);  // step 0's minibatch, already in `first`
    BayesGmmPlain q = first;
    for (int t = 1; t < iterations; ++t) {
      const auto rows = batches.draw(rng);
      Matrix batch(options.batch_size, x.cols());
      for (Index i = 0; i < batch.rows(); ++i) batch.row(i) = x.row(rows[i]);
      const double rho = std::min(1.0, std::pow(t + options.delay, -options.forget));
      plain_gmm_svi_step(batch, scale, rho, prior, q);
    }
    deviation = std::max(deviation, bayes_gmm_deviation(preset.q, q));
  }
  return deviation;
}
}  // namespace

Table1Row row_svi() {
  Table1Row row{"svi", "exp. family, mean field", "minibatches ×N/M, ρ_t = (t+τ)^−κ",
                "stochastic VI (Hoffman et al. 2013)", "Old Faithful: Normal–Gamma; Bayesian GMM",
                "include/blr/inference/vmp.hpp", {}};
  row.check = [] {
    const Vector x = faithful_eruptions();
    const auto prior = eruption_prior();
    inference::SviOptions options;
    options.batch_size = 16;
    options.delay = 2.0;
    options.forget = 0.7;
    options.seed = 11;
    const double n = static_cast<double>(x.size()), scale = n / options.batch_size;
    double deviation = 0.0;
    for (int iterations : {1, 2, 5, 40}) {
      options.iterations = iterations;
      const auto preset = inference::normal_gamma_svi(prior, x, options);
      Rng rng(options.seed);
      MinibatchSampler batches(x.size(), options.batch_size);
      NormalGammaPlain q = normal_gamma_start(prior);
      for (int t = 0; t < iterations; ++t) {
        const auto rows = batches.draw(rng);
        Vector batch(options.batch_size);
        for (Index i = 0; i < batch.size(); ++i) batch[i] = x[rows[i]];
        const double rho = std::min(1.0, std::pow(t + options.delay, -options.forget));
        const NormalGammaPlain mu_target = mu_update(prior, q, n, scale * batch.sum());
        const double sm = (1 - rho) * q.s * q.m + rho * mu_target.s * mu_target.m;
        q.s = (1 - rho) * q.s + rho * mu_target.s;
        q.m = sm / q.s;
        const NormalGammaPlain tau_target = tau_update(prior, q, n, scale * square_deviations(batch, q));
        q.a = (1 - rho) * q.a + rho * tau_target.a;
        q.b = (1 - rho) * q.b + rho * tau_target.b;
      }
      deviation = std::max(deviation, normal_gamma_deviation(preset.q, q));
    }
    deviation = std::max(deviation, bayes_gmm_svi_deviation());
    return ReductionResult{deviation, kDeterministicTolerance,
                           "Normal–Gamma after 1, 2, 5, 40 steps; Bayesian mixture (local q(z)) after "
                           "2, 5, 30 (relative)"};
  };
  return row;
}

Table1Row row_vmp() {
  Table1Row row{"vmp", "Normal–Gamma, mean field", "exact messages, ρ = 1 for every node",
                "VMP (Winn & Bishop 2005)", "Old Faithful eruptions, N = 272",
                "include/blr/inference/vmp.hpp", {}};
  row.check = [] {
    const Vector x = faithful_eruptions();
    const auto prior = eruption_prior();
    const double n = static_cast<double>(x.size());
    double deviation = 0.0;
    for (int iterations : {1, 2, 3, 6}) {
      inference::VmpOptions options;
      options.max_iterations = iterations;
      options.tolerance = 1e-300;  // run every iteration asked for
      const auto preset = inference::normal_gamma_vmp(prior, x, options);
      NormalGammaPlain q = normal_gamma_start(prior);
      for (int t = 0; t < preset.iterations; ++t) {
        q = mu_update(prior, q, n, x.sum());
        q = tau_update(prior, q, n, square_deviations(x, q));
      }
      deviation = std::max(deviation, normal_gamma_deviation(preset.q, q));
    }
    return ReductionResult{deviation, kDeterministicTolerance,
                           "m, s, a, b after 1, 2, 3, 6 sweeps (relative)"};
  };
  return row;
}

Table1Row row_nonconjugate_vmp() {
  Table1Row row{"nonconjugate-vmp", "Gaussian, fully factorised",
                "Gauss–Hermite, ρ = 1, parallel", "NCVMP (Knowles & Minka 2011)",
                "Pima logistic regression, d = 8", "include/blr/inference/cvi.hpp", {}};
  row.check = [] {
    const inference::Glm model = pima_logistic();
    const Index d = model.dimension(), n = model.x.rows();
    inference::CviOptions options;
    options.family = inference::GaussianFamilyKind::diagonal;
    options.rho = 1.0;
    options.backtrack = false;
    options.tolerance = 1e-300;  // run every iteration asked for
    const inference::GaussHermite rule(options.quadrature_nodes);
    double deviation = 0.0;
    for (int iterations : {1, 2, 4, 8}) {
      options.max_iterations = iterations;
      const inference::CviResult preset = inference::cvi(model, options);
      Vector m = model.prior_mean, v = model.prior_precision.cwiseInverse();
      for (int t = 0; t < preset.iterations; ++t) {
        Vector dS_dm = Vector::Zero(d), dS_dv = Vector::Zero(d);  // S = Σ_i E_q[log p(y_i | a_i)]
        for (Index i = 0; i < n; ++i) {
          const Vector xi = model.x.row(i).transpose();
          const auto e = inference::expected_site_terms(model.likelihood, model.y[i], xi.dot(m),
                                                        xi.cwiseAbs2().dot(v), rule);
          dS_dm += e.gradient * xi;                     // Bonnet
          dS_dv += 0.5 * e.hessian * xi.cwiseAbs2();  // Price
        }
        const Vector precision = model.prior_precision - 2.0 * dS_dv;
        const Vector precision_mean = model.prior_precision.cwiseProduct(model.prior_mean) + dS_dm -
                                      2.0 * m.cwiseProduct(dS_dv);
        m = precision_mean.cwiseQuotient(precision);
        v = precision.cwiseInverse();
      }
      const double scale = std::max(1.0, m.cwiseAbs().maxCoeff());
      deviation = std::max({deviation, max_abs_diff(preset.mean, m) / scale,
                            max_abs_diff(preset.covariance.diagonal(), v) / v.maxCoeff()});
    }
    return ReductionResult{deviation, kDeterministicTolerance,
                           "means and variances after 1, 2, 4, 8 iterations (relative)"};
  };
  return row;
}

Table1Row row_nonconjugate_vi() {
  Table1Row row{"nonconjugate-vi", "Gaussian, full",
                "none (Gauss–Hermite), eq. 58",
                "Gaussian VI optimum (Opper & Archambeau)", "Pima logistic regression, d = 8",
                "include/blr/inference/cvi.hpp", {}};
  row.check = [] {
    const inference::Glm model = pima_logistic();
    const Index d = model.dimension();
    const inference::CviResult preset = inference::cvi(model);
    check(preset.converged, "CVI did not converge on the Pima logistic regression.");
    const inference::GaussHermite rule(inference::CviOptions{}.quadrature_nodes);
    Vector grad_mean = -model.prior_precision.cwiseProduct(preset.mean - model.prior_mean);
    const Matrix precision = preset.covariance.llt().solve(Matrix(Matrix::Identity(d, d)));
    Matrix grad_cov = precision;
    grad_cov.diagonal() -= model.prior_precision;
    for (Index i = 0; i < model.x.rows(); ++i) {
      const Vector xi = model.x.row(i).transpose();
      const auto e = inference::expected_site_terms(model.likelihood, model.y[i], xi.dot(preset.mean),
                                                    xi.dot(preset.covariance * xi), rule);
      grad_mean += e.gradient * xi;
      grad_cov += e.hessian * xi * xi.transpose();
    }
    grad_cov *= 0.5;
    // The gradients are in the units of the precision (N = 200 rows of O(1) features), relative to
    // which CVI stops at a change of 1e-11; a contracting iteration's residual is a small multiple
    // of its last change.
    const double scale = std::max(1.0, precision.cwiseAbs().maxCoeff());
    const double deviation =
        std::max(grad_mean.cwiseAbs().maxCoeff(), grad_cov.cwiseAbs().maxCoeff()) / scale;
    return ReductionResult{deviation, 1e-9, "max |∂ELBO/∂m|, |∂ELBO/∂Σ| at the fixed point (relative)"};
  };
  return row;
}

}  // namespace blr::detail
