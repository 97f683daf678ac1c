// The core's inference on NumPy arrays (blr.infer): Bayesian GLMs by Laplace or CVI with their
// per-example sensitivities (MPE), the Kalman filter and smoother, Gaussian mixtures by EM.
// Arrays arrive as Eigen matrices (copied, float64); results go back as dicts of NumPy arrays and
// Python numbers. A fit that stops at its cap unconverged raises blr.Error (core/convergence.hpp).
// The design matrix is used as given (add an intercept column yourself, as with
// statsmodels' add_constant); the CLI's standardisation and CSV handling are not repeated here.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <tuple>
#include <utility>
#include <variant>

#include "bindings.hpp"
#include "blr/core/convergence.hpp"
#include "blr/core/error.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/gmm.hpp"
#include "blr/inference/kalman.hpp"
#include "blr/inference/merge.hpp"
#include "blr/inference/sensitivity.hpp"

namespace blr::python {

namespace {

// Named one by one, not `using namespace`: in a unity build the names would reach the next files.
using ::blr::inference::CovarianceType;
using ::blr::inference::CviOptions;
using ::blr::inference::CviResult;
using ::blr::inference::EmOptions;
using ::blr::inference::EmResult;
using ::blr::inference::GaussianFamilyKind;
using ::blr::inference::Glm;
using ::blr::inference::KalmanResult;
using ::blr::inference::LaplaceOptions;
using ::blr::inference::LaplaceResult;
using ::blr::inference::Likelihood;
using ::blr::inference::Sensitivity;
using ::blr::inference::SensitivityOptions;
using ::blr::inference::SiteEvaluation;
using ::blr::inference::StateSpaceModel;
using ::blr::inference::TestMetrics;
using ::blr::inference::cvi;
using ::blr::inference::em;
using ::blr::inference::glm_sensitivity;
using ::blr::inference::kalman_filter;
using ::blr::inference::kalman_smooth;
using ::blr::inference::laplace;
using ::blr::inference::loo_estimate;
using ::blr::inference::merge_natural;
using ::blr::inference::NormalGammaFit;
using ::blr::inference::NormalGammaRegression;

/// What to change when a fit stops at its cap (require_converged: no unconverged result returns).
constexpr const char* kRaiseCap = "raise max_iterations or loosen tolerance";

Likelihood likelihood_from(const std::string& name) {
  if (name == "logistic") return Likelihood::logistic;
  if (name == "poisson") return Likelihood::poisson;
  if (name == "gaussian") return Likelihood::gaussian;
  throw Error(fmt::format(
      "Option 'likelihood' must be one of logistic, poisson, gaussian; got '{}'.", name));
}

/// The prior precisions p₀ of a d-column design from a number (δ on every column) or an array
/// (one per column: give the intercept column a small one, e.g. 1e-6, as `blr infer` does).
Vector prior_precisions_from(const std::variant<double, Vector>& given, Index d) {
  Vector p;
  if (const double* delta = std::get_if<double>(&given)) {
    p = Vector::Constant(d, *delta);
  } else {
    p = std::get<Vector>(given);
    check(p.size() == d, fmt::format("prior_precision has {} entries but X has {} columns; give "
                                     "one number or one per column.",
                                     p.size(), d));
  }
  for (Index j = 0; j < d; ++j)
    check(std::isfinite(p(j)) && p(j) > 0,
          fmt::format("prior_precision must be positive and finite; entry {} is {}.", j, p(j)));
  return p;
}

/// How a Gaussian likelihood's noise precision is treated.
enum class Noise {
  none,         ///< logistic or Poisson: no noise parameter
  known,        ///< β given by the caller
  normal_gamma, ///< τ unknown: the exact Normal–Gamma posterior (method "laplace", exact here)
  plug_in       ///< τ unknown: β = E[τ | y] of that posterior, then held fixed (method "cvi")
};

/// The GLM of fit_glm (which has checked that X and y have the same rows).
Glm make_glm(const Matrix& x, const Vector& y, Likelihood likelihood, const Vector& precisions,
             const std::optional<Vector>& prior_mean, double noise_precision) {
  Glm model = Glm::with_prior_precisions(x, y, likelihood, precisions);
  model.noise_precision = noise_precision;
  if (prior_mean) {
    check(prior_mean->size() == x.cols(),
          fmt::format("prior_mean has {} entries but X has {} columns; they must match.",
                      prior_mean->size(), x.cols()));
    model.prior_mean = *prior_mean;
  }
  model.validate();
  return model;
}

py::dict fit_glm(const Matrix& x, const Vector& y, const std::string& likelihood_name,
                 const std::string& method, const std::variant<double, Vector>& prior_precision,
                 const std::optional<Vector>& prior_mean, std::optional<double> noise_precision,
                 std::optional<std::pair<double, double>> noise_prior, const std::string& family,
                 std::optional<int> max_iterations, std::optional<double> tolerance,
                 bool sensitivities) {
  const Likelihood likelihood = likelihood_from(likelihood_name);
  const bool gaussian = likelihood == Likelihood::gaussian;
  check(gaussian || !noise_precision,
        fmt::format("noise_precision applies only to likelihood='gaussian', not '{}'.",
                    likelihood_name));
  check(!noise_precision || !noise_prior,
        "noise_precision (a known β) and noise_prior (a Gamma prior on an unknown τ) exclude "
        "each other; give one.");
  check(gaussian || !noise_prior,
        fmt::format("noise_prior applies only to likelihood='gaussian', not '{}'.",
                    likelihood_name));
  check(x.rows() == y.size(),
        fmt::format("X has {} rows but y has {} entries; they must match.", x.rows(), y.size()));
  check(method == "laplace" || method == "cvi",
        fmt::format("Option 'method' must be one of laplace, cvi; got '{}'.", method));
  check(method != "laplace" || family == "full",
        "The Laplace approximation has a full covariance: family must be 'full'.");
  const Noise noise = !gaussian          ? Noise::none
                      : noise_precision  ? Noise::known
                      : method == "cvi"  ? Noise::plug_in
                                         : Noise::normal_gamma;
  const Vector precisions = prior_precisions_from(prior_precision, x.cols());
  py::list assumptions;
  double beta = noise_precision.value_or(1.0);
  std::optional<NormalGammaFit> normal_gamma;  // fitted when the noise is unknown
  if (noise == Noise::normal_gamma || noise == Noise::plug_in) {
    // w | τ ~ N(m₀, (τ p₀)⁻¹) and τ ~ Gamma(a₀, b₀) (Jeffreys' 1/τ by default): the prior
    // precisions are in units of the noise precision, as `blr infer linreg` takes them.
    check(!prior_mean || prior_mean->isZero(0),
          "With the noise precision unknown (the Normal–Gamma posterior), the prior mean is 0; "
          "give noise_precision to use prior_mean.");
    NormalGammaRegression ng;
    ng.prior_precision = precisions;
    if (noise_prior) std::tie(ng.noise_shape, ng.noise_rate) = *noise_prior;
    ng.validate();
    {
      py::gil_scoped_release release;
      normal_gamma = ::blr::inference::fit_normal_gamma(ng, x, y);
    }
    beta = normal_gamma->noise_precision_mean();
    const std::string prior = noise_prior ? fmt::format("the prior Gamma({}, {})",
                                                        noise_prior->first, noise_prior->second)
                                          : std::string("Jeffreys' prior p(tau) ~ 1/tau");
    assumptions.append(fmt::format(
        "noise: its precision tau is unknown, with {}; prior w | tau ~ N(0, (tau p0)^-1), "
        "p0 = prior_precision in units of tau{} (noise_precision=B: a known beta)",
        prior,
        noise == Noise::normal_gamma
            ? "; exact Normal-Gamma posterior, so the coefficients are Student t"
            : fmt::format("; beta = E[tau | y] = {:.6g} from the exact Normal-Gamma posterior, "
                          "then held fixed by CVI",
                          beta)));
  }
  // Conditional on τ = β, the Normal–Gamma prior is N(0, (β p₀)⁻¹).
  const Vector model_precisions = normal_gamma ? Vector(beta * precisions) : precisions;
  const Glm model = make_glm(x, y, likelihood, model_precisions, prior_mean, beta);
  py::dict out;
  Vector mean;
  Matrix covariance;
  SiteEvaluation sites = SiteEvaluation::at_mean;
  if (noise == Noise::normal_gamma) {
    const NormalGammaFit& f = *normal_gamma;
    mean = f.mean;
    // The sensitivities below use the posterior of w at τ = E[τ | y], whose covariance is S.
    covariance = f.scale;
    out["log_evidence"] = f.log_evidence;
    out["dof"] = f.dof;
    out["scale"] = f.scale;
    out["noise_shape"] = f.noise_shape;
    out["noise_rate"] = f.noise_rate;
    out["noise_precision"] = beta;
    out["iterations"] = 1;
    out["converged"] = true;
  } else if (method == "laplace") {
    ::blr::inference::LaplaceOptions options;
    if (max_iterations) options.max_iterations = *max_iterations;
    if (tolerance) options.tolerance = *tolerance;
    options.validate();
    ::blr::inference::LaplaceResult r;
    {
      py::gil_scoped_release release;
      r = ::blr::inference::laplace(model, options);
    }
    require_converged(r.converged, "Newton's method to the Laplace mode", r.iterations,
                      options.max_iterations, "iterations", kRaiseCap);
    mean = r.mean;
    covariance = r.covariance;
    out["log_joint"] = r.log_joint;
    out["log_evidence"] = r.log_evidence;
    out["iterations"] = r.iterations;
    out["converged"] = r.converged;
  } else {
    CviOptions options;
    check(family == "full" || family == "diagonal",
          fmt::format("Option 'family' must be one of full, diagonal; got '{}'.", family));
    options.family = family == "full" ? GaussianFamilyKind::full : GaussianFamilyKind::diagonal;
    if (max_iterations) options.max_iterations = *max_iterations;
    if (tolerance) options.tolerance = *tolerance;
    CviResult r;
    {
      py::gil_scoped_release release;
      r = cvi(model, options);
    }
    require_converged(r.converged, "CVI", r.iterations, options.max_iterations, "iterations",
                      kRaiseCap);
    mean = r.mean;
    covariance = r.covariance;
    out["elbo"] = r.elbo;
    out["iterations"] = r.iterations;
    out["converged"] = r.converged;
    if (noise == Noise::plug_in) out["noise_precision"] = beta;
    sites = SiteEvaluation::expected;
  }
  out["mean"] = mean;
  // With τ unknown, w is Student t: its covariance is ν/(ν − 2)·S.
  out["covariance"] = noise == Noise::normal_gamma ? normal_gamma->covariance : covariance;
  out["assumptions"] = assumptions;
  if (sensitivities) {
    SensitivityOptions options;
    options.sites = sites;
    const Sensitivity s = glm_sensitivity(model, mean, covariance, options);
    const TestMetrics loo = loo_estimate(model, s);
    py::dict d;
    d["error"] = s.error;
    d["variance"] = s.variance;
    d["deviation"] = s.deviation;
    d["deviation_first_order"] = s.deviation_first_order;
    d["score"] = s.score;
    py::dict l;
    l["nll"] = loo.nll;
    if (model.likelihood == Likelihood::logistic) l["accuracy"] = loo.accuracy;
    l["rmse"] = loo.rmse;
    d["loo"] = l;
    out["sensitivity"] = d;
  }
  return out;
}

py::dict kalman(const Matrix& y, const Matrix& transition, const Matrix& observation,
                const Matrix& state_noise, const Matrix& obs_noise, const Vector& init_mean,
                const Matrix& init_cov, bool smooth) {
  StateSpaceModel model{transition, observation, state_noise, obs_noise, init_mean, init_cov};
  model.validate();
  check(y.cols() == model.obs_dim(),
        fmt::format("y has {} columns but the observation matrix has {} rows; they must match.",
                    y.cols(), model.obs_dim()));
  KalmanResult r;
  {
    py::gil_scoped_release release;
    r = kalman_filter(model, y);
    if (smooth) kalman_smooth(model, y, r);
  }
  py::dict out;
  out["filtered_mean"] = r.filtered_mean;
  out["filtered_cov"] = r.filtered_cov;
  out["predicted_mean"] = r.predicted_mean;
  out["predicted_cov"] = r.predicted_cov;
  if (smooth) {
    out["smoothed_mean"] = r.smoothed_mean;
    out["smoothed_cov"] = r.smoothed_cov;
  }
  out["log_likelihood"] = r.log_likelihood;
  return out;
}

py::dict gmm(const Matrix& x, int components, const std::string& covariance, int max_iterations,
             double reg_covar, uint64_t seed) {
  EmOptions options;
  options.components = components;
  check(covariance == "full" || covariance == "diag",
        fmt::format("Option 'covariance' must be one of full, diag; got '{}'.", covariance));
  options.covariance = covariance == "full" ? CovarianceType::full : CovarianceType::diagonal;
  options.max_iterations = max_iterations;
  options.reg_covar = reg_covar;
  options.seed = seed;
  EmResult r;
  {
    py::gil_scoped_release release;
    r = em(x, options);
  }
  require_converged(r.converged, "EM", r.iterations, options.max_iterations, "iterations",
                    "raise max_iterations");
  py::dict out;
  out["weights"] = r.mixture.weights;
  out["means"] = r.mixture.means;
  out["covariances"] = r.mixture.covariances;
  out["responsibilities"] = r.responsibilities;
  out["log_likelihood"] = r.log_likelihood;
  out["iterations"] = r.iterations;
  out["converged"] = r.converged;
  return out;
}

/// Gaussian posteriors fitted from one prior, merged in natural parameters (merge.hpp):
/// λ = λ₀ + scale·Σ_t(λ_t − λ₀); with scale 1 and disjoint data, the full-data posterior.
py::dict merge(const Vector& prior_mean, const Matrix& prior_precision,
               const std::vector<Vector>& means, const std::vector<Matrix>& precisions,
               double scale) {
  check(means.size() == precisions.size(),
        fmt::format("merge got {} means but {} precisions; give one of each per posterior.",
                    means.size(), precisions.size()));
  std::vector<Vector> naturals;
  for (size_t t = 0; t < means.size(); ++t) {
    naturals.push_back(GaussianFull(means[t], precisions[t]).natural());
  }
  const GaussianFull merged = GaussianFull::from_natural(
      merge_natural(GaussianFull(prior_mean, prior_precision).natural(), naturals, scale));
  py::dict out;
  out["mean"] = merged.mean;
  out["precision"] = merged.precision_matrix();
  out["covariance"] = merged.covariance();
  return out;
}

}  // namespace

void bind_inference(py::module_& m) {
  py::module_ inf = m.def_submodule("infer", "The core's Bayesian inference on NumPy arrays.");
  inf.def("glm", &fit_glm, py::arg("x"), py::arg("y"), py::arg("likelihood") = "logistic",
          py::arg("method") = "laplace", py::arg("prior_precision") = 1.0,
          py::arg("prior_mean") = py::none(), py::arg("noise_precision") = py::none(),
          py::arg("noise_prior") = py::none(), py::arg("family") = "full",
          py::arg("max_iterations") = py::none(), py::arg("tolerance") = py::none(), py::arg("sensitivities") = false,
          "Bayesian GLM (logistic, Poisson or Gaussian likelihood; prior N(prior_mean, "
          "diag(prior_precision)^-1), prior_precision one number or one per column) by Laplace "
          "(BLR with the delta method, rho = 1) or CVI (iteration limit and tolerance default to "
          "the library's; a fit that stops at the limit unconverged raises blr.Error). Gaussian: "
          "the noise precision is unknown unless noise_precision is given (Jeffreys' prior, or "
          "noise_prior=(a, b) for Gamma(a, b); prior_precision then in units of it): the exact "
          "Normal-Gamma posterior with Student-t coefficients (keys dof, scale, noise_shape, "
          "noise_rate, noise_precision = E[tau | y]), or with method='cvi' E[tau | y] held fixed. "
          "'assumptions' lists what was assumed. With sensitivities=True also the per-example MPE "
          "quantities and leave-one-out estimates.");
  inf.def("kalman", &kalman, py::arg("y"), py::arg("transition"), py::arg("observation"),
          py::arg("state_noise"), py::arg("obs_noise"), py::arg("init_mean"), py::arg("init_cov"),
          py::arg("smooth") = true,
          "Kalman filter (and RTS smoother) over the rows of y (T x p; NaN rows are missing, an "
          "infinite value raises blr.Error naming its row); row t of a *_cov matrix is vec(P_t).");
  inf.def("gmm", &gmm, py::arg("x"), py::arg("components") = 2, py::arg("covariance") = "full",
          py::arg("max_iterations") = 1000, py::arg("reg_covar") = 1e-6, py::arg("seed") = 0,
          "Gaussian mixture by EM (the BLR with a mixture family; k-means++ start); a run that stops "
          "at max_iterations unconverged raises blr.Error.");
  inf.def("merge", &merge, py::arg("prior_mean"), py::arg("prior_precision"), py::arg("means"),
          py::arg("precisions"), py::arg("scale") = 1.0,
          "Merges Gaussian posteriors N(mean_t, precision_t^-1) fitted from the prior N(prior_mean, "
          "prior_precision^-1) in natural parameters: lambda_0 + scale * sum_t (lambda_t - "
          "lambda_0) (uncertainty-weighted merging; exact for conjugate models on disjoint data).");
}

}  // namespace blr::python
