// Table 1, the variational-inference rows (§5.3–5.4). Each preset is run beside the classical
// algorithm written plainly here in its textbook parameters:
//   • VMP (Winn & Bishop 2005): the mean-field Normal–Gamma coordinate ascent of Bishop, PRML
//     §10.1.3 (eqs. 10.26–10.30), in (m, s) for q(μ) = N(m, s⁻¹) and (a, b) for q(τ) = Gamma(a, b);
//   • SVI (Hoffman et al. 2013, Alg. 1): the same nodes with minibatch targets scaled by N/M and
//     the convex combination (1 − ρ_t)·old + ρ_t·target of the natural parameters, which is linear
//     in (sm, s) and (a, b); the minibatches come from the same MinibatchSampler and seed;
//   • non-conjugate VMP (Knowles & Minka 2011): for a fully factorised Gaussian q(w_j) = N(m_j, v_j)
//     and a non-conjugate factor S = Σ_i E_q[log p(y_i | x_iᵀw)], the message is the gradient of S
//     in the expectation parameters (m_j, m_j² + v_j):  precision −2∂S/∂v_j, precision-times-mean
//     ∂S/∂m_j − 2m_j ∂S/∂v_j, plus the prior; all nodes updated in parallel (ρ = 1);
//   • non-conjugate VI (eq. 58; Opper & Archambeau 2009): the fixed point of the full-Gaussian BLR
//     is the stationary point of the ELBO, ∂ELBO/∂m = Σ_i ḡ_i x_i − S₀(m − m₀) = 0 and
//     ∂ELBO/∂Σ = ½(Σ_i h̄_i x_i x_iᵀ − S₀ + Σ⁻¹) = 0.
// The Gaussian expectations ḡ_i = E[∂_a log p], h̄_i = E[∂²_a log p] (Bonnet and Price) use the
// same Gauss–Hermite rule as the presets, so the only differences left are rounding.
#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>

#include "blr/core/minibatch.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/quadrature.hpp"
#include "blr/inference/vmp.hpp"
#include "blr/io/csv.hpp"
#include "problems.hpp"
#include "reductions.hpp"

namespace blr::detail {

namespace {

/// Old Faithful eruption durations (N = 272) and a weak Normal–Gamma prior.
Vector faithful_eruptions() {
  const io::CsvTable table = io::CsvTable::read(std::string(BLR_DATA_DIR) + "/faithful.csv");
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
  const auto train = io::CsvTable::read(std::string(BLR_DATA_DIR) + "/pima_train.csv");
  const auto names = train.columns_except({"type"});
  const auto standardizer = io::Standardizer::fit(train.numeric_columns(names), names);
  return inference::Glm::with_isotropic_prior(
      io::with_intercept(standardizer.transform(train.numeric_columns(names))),
      train.binary_labels("type", "Yes", {"Yes", "No"}), inference::Likelihood::logistic, 1.0);
}

/// ḡ = E[y − σ(a)], h̄ = E[−σ(a)(1 − σ(a))] under a ~ N(mean, var) by Gauss–Hermite.
void logistic_expectations(const inference::GaussHermite& rule, double y, double mean, double var,
                           double& g, double& h) {
  g = h = 0.0;
  for (Index k = 0; k < rule.nodes().size(); ++k) {
    const double a = mean + std::sqrt(var) * rule.nodes()[k];
    const double sigma = 1.0 / (1.0 + std::exp(-a));
    g += rule.weights()[k] * (y - sigma);
    h += rule.weights()[k] * (-sigma * (1.0 - sigma));
  }
}

}  // namespace

Table1Row row_svi() {
  Table1Row row{"svi", "Normal–Gamma, mean field", "minibatches ×N/M, ρ_t = (t+τ)^−κ",
                "stochastic VI (Hoffman et al. 2013)", "Old Faithful eruptions, N = 272, M = 16",
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
        const double rho = std::pow(t + options.delay, -options.forget);
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
    return ReductionResult{deviation, kDeterministicTolerance,
                           "m, s, a, b after 1, 2, 5, 40 minibatch steps (relative)"};
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
          double g, h;
          logistic_expectations(rule, model.y[i], xi.dot(m), xi.cwiseAbs2().dot(v), g, h);
          dS_dm += g * xi;                     // Bonnet
          dS_dv += 0.5 * h * xi.cwiseAbs2();  // Price
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
    Matrix grad_cov = preset.covariance.llt().solve(Matrix(Matrix::Identity(d, d)));
    grad_cov.diagonal() -= model.prior_precision;
    for (Index i = 0; i < model.x.rows(); ++i) {
      const Vector xi = model.x.row(i).transpose();
      double g, h;
      logistic_expectations(rule, model.y[i], xi.dot(preset.mean), xi.dot(preset.covariance * xi), g, h);
      grad_mean += g * xi;
      grad_cov += h * xi * xi.transpose();
    }
    grad_cov *= 0.5;
    // The gradients are in the units of the precision (N = 200 rows of O(1) features), relative to
    // which CVI stops at a change of 1e-11; a contracting iteration's residual is a small multiple
    // of its last change.
    const double scale = std::max(1.0, preset.covariance.inverse().cwiseAbs().maxCoeff());
    const double deviation =
        std::max(grad_mean.cwiseAbs().maxCoeff(), grad_cov.cwiseAbs().maxCoeff()) / scale;
    return ReductionResult{deviation, 1e-9, "max |∂ELBO/∂m|, |∂ELBO/∂Σ| at the fixed point (relative)"};
  };
  return row;
}

}  // namespace blr::detail
