// Bayesian generalised linear models and their Laplace approximation by the BLR.
//
// Model: y_i | w ~ p(y_i | a_i), a_i = x_iᵀw, with a logistic (Bernoulli), Poisson (log link) or
// Gaussian (noise precision β) likelihood, and prior w ~ N(m₀, diag(p₀)⁻¹). The loss handed to the
// BLR is the negative log joint  ℓ̄(w) = −Σ_i log p(y_i | x_iᵀw) − log N(w | m₀, diag(p₀)⁻¹),
// normalisers included, so that −ℓ̄ at the mode is the log joint density.
//
// Laplace: the rule's Laplace routine (blr::laplace, algorithms/laplace.hpp) on ℓ̄ — the Gaussian
// BLR with the delta method, ρ = 1 by default (Newton's method), started at q₀ = N(m₀, diag(p₀)⁻¹),
// stopped once max|∇ℓ̄| < tolerance; q = N(w*, [∇²ℓ̄(w*)]⁻¹) and
//     log p(y) ≈ −ℓ̄(w*) + (d/2) log 2π − ½ log|∇²ℓ̄(w*)|.
// inference::laplace adds the GLM's option names (those of `blr infer`), the moments and the
// record of iterates and log joints (through the routine's observer); it has no loop of its own.
// The intercept (column 0 of a design built with one) has its own, weak prior by default
// (kInterceptPriorPrecision); every other coefficient has δ.
// Predictive: a* = x*ᵀw ~ N(x*ᵀm, x*ᵀΣx*); p(y* | x*) by Gauss–Hermite, by Monte Carlo over w ~ q,
// or for the logistic link by the probit approximation σ(μ/√(1 + πσ²/8)).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "blr/algorithms/laplace.hpp"
#include "blr/core/rng.hpp"
#include "blr/core/option_table.hpp"
#include "blr/core/types.hpp"
#include "blr/inference/quadrature.hpp"

namespace blr::inference {

enum class Likelihood { logistic, poisson, gaussian };
std::string to_string(Likelihood l);

/// log p(y | a) and its first two derivatives in a.
struct SiteTerms {
  double value = 0, gradient = 0, hessian = 0;
};
/// Point evaluation.
SiteTerms site_terms(Likelihood l, double y, double a, double noise_precision = 1.0);
/// E, E[∂/∂a], E[∂²/∂a²] under a ~ N(m, v): closed form for Poisson and Gaussian, Gauss–Hermite
/// for the logistic link.
SiteTerms expected_site_terms(Likelihood l, double y, double m, double v,
                              const GaussHermite& quadrature, double noise_precision = 1.0);

/// The logistic link's expectations for n sites at once: for a_i ~ N(m_i, v_i), value_i =
/// E[y_i a − log(1 + eᵃ)], gradient_i = E[y_i − σ(a)], hessian_i = −E[σ(a)(1 − σ(a))] by
/// Gauss–Hermite, vectorised over sites and nodes (one exponential and one logarithm per node, with
/// e = exp(−|a|), p = 1/(1 + e): σ(a) = p or e·p, log(1 + eᵃ) = max(a, 0) − log p). Any output
/// pointer may be null. expected_site_terms runs this for one site.
void expected_logistic_sites(Index n, const double* y, const double* m, const double* v,
                             const GaussHermite& quadrature, double* value, double* gradient,
                             double* hessian);

/// XᵀWX for W = diag(w) (the GLM and CVI curvatures): the lower triangle of (WX)ᵀX by a blocked
/// BLAS-3 kernel, mirrored; any signs of w.
Matrix weighted_gram(const Matrix& x, const Vector& w);

/// v_i = x_iᵀ S x_i for every row of x (the latent variances diag(X S Xᵀ) of a predictive or of
/// WAIC): X S by blocks of rows (through the system BLAS when large), so no n×d temporary is made.
Vector row_quadratic_forms(const Matrix& x, const Matrix& s);

/// A Bayesian GLM; satisfies the HasHessian loss concept (blr/model/loss.hpp) with ℓ̄ = −log joint.
struct Glm {
  Matrix x;  ///< N×d design (intercept column included by the caller)
  Vector y;
  Likelihood likelihood = Likelihood::logistic;
  double noise_precision = 1.0;  ///< β (Gaussian likelihood only)
  Vector prior_mean;             ///< m₀ (length d)
  Vector prior_precision;        ///< p₀ (length d, positive)

  /// Isotropic prior N(0, δ⁻¹I).
  static Glm with_isotropic_prior(Matrix x, Vector y, Likelihood l, double delta);
  /// Prior N(0, diag(p₀)⁻¹) (e.g. `prior_precisions` below).
  static Glm with_prior_precisions(Matrix x, Vector y, Likelihood l, Vector precisions);

  Index dimension() const { return x.cols(); }
  void validate() const;
  double log_likelihood(const Vector& w) const;
  double log_prior(const Vector& w) const;
  double value(const Vector& w) const { return -log_likelihood(w) - log_prior(w); }
  Vector gradient(const Vector& w) const;
  Matrix hessian(const Vector& w) const;
  /// value and gradient (HasValueAndGradient), and with the Hessian (HasValueGradientAndHessian),
  /// from one linear predictor Xw: bit for bit what the separate calls return.
  double value_and_gradient(const Vector& w, Vector& gradient) const;
  double value_gradient_and_hessian(const Vector& w, Vector& gradient, Matrix& hessian) const;
};

/// The default prior precision of an intercept (design column 0) in `blr infer` and
/// `blr sensitivity` (`--intercept-prior-precision`): weak, a prior sd of 1000 — on the link scale
/// (logistic, Poisson), in units of y with β known, in noise sds with the noise estimated
/// (Normal–Gamma, conjugate.hpp). The intercept carries the level of the data, which has no reason
/// to be near 0, so it is not shrunk like the coefficients: on unstandardised Pima data δ = 1 on
/// every column gave a logistic intercept of −3.36 against the maximum-likelihood −4.63.
inline constexpr double kInterceptPriorPrecision = 1e-6;

/// The prior precisions of a d-column design: δ for every column, and `intercept_precision` for
/// column 0 when given (the intercept). Throws a sentence naming the option unless each is
/// positive and finite.
Vector prior_precisions(Index d, double delta, std::optional<double> intercept_precision);

/// The options of `blr infer --method laplace` (their names are the CLI's).
struct LaplaceOptions {
  double rho = 1.0;  ///< ρ of the BLR step (1 = Newton)
  int max_iterations = 100;
  double tolerance = 1e-10;  ///< stop when max|∇ℓ̄| falls below this
  void validate() const;  ///< the table's ranges (and the cross-option checks)
  static const OptionTable<LaplaceOptions>& table();
};

struct LaplaceResult : blr::LaplaceResult {
  Vector mean;        ///< w* (= posterior.mean)
  Matrix covariance;  ///< [∇²ℓ̄(w*)]⁻¹
  std::vector<Vector> iterates;    ///< m after each step
  std::vector<double> log_joints;  ///< −ℓ̄ after each step
};

/// Laplace's method for a GLM, started at `start` (default: the prior mean).
LaplaceResult laplace(const Glm& model, const LaplaceOptions& options = {},
                      const Vector* start = nullptr);

/// Predictive distribution of test responses under q(w) = N(mean, covariance).
enum class PredictiveMethod { quadrature, monte_carlo, probit };
/// "quadrature", "monte-carlo" or "probit" (the spelling of every door); throws a sentence
/// naming the option otherwise.
PredictiveMethod parse_predictive_method(const std::string& name);
struct Predictive {
  Vector latent_mean, latent_variance;  ///< of a* = x*ᵀw
  Vector mean;                          ///< E[y*] (probability of class 1 for logistic)
  Vector log_density;                   ///< log p(y*_i | data) at the given test responses
};
struct PredictiveOptions {
  PredictiveMethod method = PredictiveMethod::quadrature;  ///< key "predictive"
  int samples = 2000;  ///< Monte Carlo draws of w
  std::uint64_t seed = 0;
  int quadrature_nodes = 32;
  void validate() const;  ///< the table's ranges
  static const OptionTable<PredictiveOptions>& table();
};
/// Latent moments from a full covariance.
Predictive predict(Likelihood l, const Vector& mean, const Matrix& covariance, const Matrix& x,
                   const Vector& y, const PredictiveOptions& options = {},
                   double noise_precision = 1.0);
/// Latent moments given directly (GP, diagonal families); Monte Carlo draws a* instead of w.
Predictive predict_latent(Likelihood l, const Vector& latent_mean, const Vector& latent_variance,
                          const Vector& y, const PredictiveOptions& options = {},
                          double noise_precision = 1.0);

/// Test metrics: accuracy (logistic; threshold ½), mean negative log predictive density, RMSE.
struct TestMetrics {
  double accuracy = 0, nll = 0, rmse = 0;
  Index n = 0;
};
TestMetrics test_metrics(Likelihood l, const Predictive& p, const Vector& y);

}  // namespace blr::inference
