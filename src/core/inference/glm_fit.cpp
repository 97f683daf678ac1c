#include "blr/inference/glm_fit.hpp"
#include "blr/inference/methods.hpp"

#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <tuple>

#include "blr/core/convergence.hpp"
#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/inference/mixture_vi.hpp"

namespace blr::inference {

namespace {

/// What to change when a fit stops at its cap.
constexpr const char* kRaiseCap = "raise max_iterations or loosen tolerance";

Likelihood likelihood_from(const std::string& name) {
  if (name == "logistic") return Likelihood::logistic;
  if (name == "poisson") return Likelihood::poisson;
  if (name == "gaussian") return Likelihood::gaussian;
  throw Error(fmt::format(
      "Option 'likelihood' must be one of logistic, poisson, gaussian; got '{}'.", name));
}

/// p₀ of a d-column design from one value or one per column (give the intercept column a small
/// one, e.g. 1e-6, as `blr infer` does).
Vector prior_precisions_from(const Vector& given, Index d) {
  check(given.size() == 1 || given.size() == d,
        fmt::format("prior_precision has {} entries but X has {} columns; give one number or one "
                    "per column.",
                    given.size(), d));
  const Vector p = given.size() == 1 ? Vector(Vector::Constant(d, given(0))) : given;
  for (Index j = 0; j < d; ++j)
    check(std::isfinite(p(j)) && p(j) > 0,
          fmt::format("prior_precision must be positive and finite; entry {} is {}.", j, p(j)));
  return p;
}

/// How a Gaussian likelihood's noise precision is treated.
enum class Noise {
  none,          ///< logistic or Poisson: no noise parameter
  known,         ///< β given by the caller
  normal_gamma,  ///< τ unknown: the exact Normal–Gamma posterior (method "laplace", exact here)
  plug_in        ///< τ unknown: β = E[τ | y] of that posterior, then held fixed (method "cvi")
};

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

/// K of "mixture:K" (0 when the family is not a mixture); throws on a malformed count.
int mixture_components(const std::string& family) {
  const std::string prefix = "mixture:";
  if (family.rfind(prefix, 0) != 0) return 0;
  const std::string count = family.substr(prefix.size());
  int k = 0;
  const bool digits = !count.empty() && count.size() <= 3 &&
                      count.find_first_not_of("0123456789") == std::string::npos;
  if (digits) k = std::stoi(count);
  check(digits && k >= 1,
        fmt::format("Option 'family' mixture:K needs a number of components K ≥ 1; got '{}'.",
                    family));
  return k;
}

}  // namespace

GlmMethodOptions glm_method_options(std::string_view method, int mixture_components,
                                    bool evidence_maximised, const GivenOptions& given) {
  GlmMethodOptions o;
  if (method == "exact" && evidence_maximised) given.apply(EvidenceOptions::table(), o.evidence);
  if (method == "laplace") given.apply(LaplaceOptions::table(), o.laplace);
  if (method == "cvi" && mixture_components > 0) given.apply(MixtureViOptions::table(), o.mixture);
  if (method == "cvi" && mixture_components == 0)
    given.apply(CviOptions::table(), o.cvi,
                KeySelection::all_but({"family"}));  // family: the request's
  return o;
}

GlmFit fit_glm_mixture(const Glm& model, int components, const MixtureViOptions& options) {
  check(components >= 1, "A mixture posterior needs at least one component.");
  check(options.iterations >= 1,
        fmt::format("Mixture VI needs at least one iteration; got {}.", options.iterations));
  options.validate();
  const LaplaceResult lap = laplace(model);
  require_converged(lap.converged, "Newton's method to the Laplace mode (the mixture's start)",
                    lap.iterations, LaplaceOptions{}.max_iterations, "iterations",
                    "a larger prior precision gives a better-conditioned mode");
  const Index d = model.dimension();
  const Matrix l = Eigen::LLT<Matrix>(lap.covariance).matrixL();
  const Matrix precision = lap.covariance.inverse();
  Rng rng(options.seed);
  std::vector<GaussianComponent> start;
  for (int c = 0; c < components; ++c) {
    const Vector shift = components == 1 ? Vector::Zero(d) : Vector(1.5 * l * rng.normal_vector(d));
    start.push_back({lap.mean + shift, precision});
  }
  const MixtureViResult r = mixture_vi(
      LossFunctions::wrap(model), Vector::Constant(components, 1.0 / components), start, options);
  GlmFit out;
  out.likelihood = model.likelihood;
  out.method = "cvi";
  GlmMixture m;
  m.weights = r.weights;
  m.elbo_se = r.elbo_se;
  out.mean = Vector::Zero(d);
  Matrix second = Matrix::Zero(d, d);
  for (int c = 0; c < components; ++c) {
    const auto& comp = r.components[static_cast<std::size_t>(c)];
    m.means.push_back(comp.mean);
    m.covariances.push_back(comp.precision.inverse());
    out.mean += r.weights[c] * comp.mean;
    second += r.weights[c] * (m.covariances.back() + comp.mean * comp.mean.transpose());
  }
  out.covariance = second - out.mean * out.mean.transpose();
  out.mixture = std::move(m);
  out.elbo = r.elbo;
  out.iterations = r.iterations;
  out.converged = true;  // a fixed number of steps: nothing to converge
  if (model.likelihood == Likelihood::gaussian) out.noise_precision = model.noise_precision;
  return out;
}

GlmFit fit_glm(const Matrix& x, const Vector& y, const GlmFitRequest& request) {
  const Likelihood likelihood = likelihood_from(request.likelihood);
  const bool gaussian = likelihood == Likelihood::gaussian;
  const auto& noise_precision = request.noise_precision;
  const auto& noise_prior = request.noise_prior;
  check(gaussian || !noise_precision,
        fmt::format("noise_precision applies only to likelihood='gaussian', not '{}'.",
                    request.likelihood));
  check(!noise_precision || !noise_prior,
        "noise_precision (a known β) and noise_prior (a Gamma prior on an unknown τ) exclude "
        "each other; give one.");
  check(gaussian || !noise_prior,
        fmt::format("noise_prior applies only to likelihood='gaussian', not '{}'.",
                    request.likelihood));
  check(x.rows() == y.size(),
        fmt::format("X has {} rows but y has {} entries; they must match.", x.rows(), y.size()));
  check(
      request.method == "laplace" || request.method == "cvi" || request.method == "exact",
      fmt::format("Option 'method' must be one of exact, laplace, cvi; got '{}'.", request.method));
  check(request.method != "exact" || gaussian,
        fmt::format("Method 'exact' is linear regression's (likelihood='gaussian'); a {} model "
                    "has no closed-form posterior: use laplace or cvi.",
                    request.likelihood));
  // One spelling in every door (`blr infer --family`, blr.infer.glm, the registry's table).
  check(request.family != "full" && request.family != "diagonal",
        fmt::format("Option 'family' is spelled '{}' as in `blr infer --family`; got '{}'.",
                    request.family == "full" ? "gaussian-full" : "gaussian-diag", request.family));
  check(request.method == "cvi" || request.family == "gaussian-full",
        fmt::format("Method '{}' gives a full Gaussian: family must be 'gaussian-full'.",
                    request.method));
  const int components = mixture_components(request.family);
  check(request.family == "gaussian-full" || request.family == "gaussian-diag" || components > 0,
        fmt::format("Option 'family' must be one of gaussian-full, gaussian-diag, mixture:K; got "
                    "'{}'.",
                    request.family));
  check(components == 0 || !request.sensitivities,
        "The sensitivities need a Gaussian posterior; a mixture has none (family full or "
        "diagonal).");
  const Noise noise = !gaussian                 ? Noise::none
                      : noise_precision         ? Noise::known
                      : request.method == "cvi" ? Noise::plug_in
                                                : Noise::normal_gamma;
  // The method's options (its table in the registry), each checked there; a key the method's
  // table lacks is refused before anything is fitted.
  const GlmMethodOptions method_options =
      glm_method_options(request.method, components, false, request.options);
  // The sensitivities' options (`blr sensitivity`'s flags) when they are asked for.
  SensitivityOptions sensitivity_options = SensitivityOptions::after(request.method);
  if (request.sensitivities)
    request.options.apply(SensitivityOptions::table(), sensitivity_options);
  request.options.require_taken(
      fmt::format("glm {}{}", components > 0 ? "mixture-vi" : request.method,
                  noise == Noise::normal_gamma ? " with the noise precision unknown (no iterations)"
                  : request.method == "exact"  ? " with a known noise precision (closed form)"
                                               : ""),
      [](const std::string& key) { return inference_methods_with(key); });
  const Vector precisions = prior_precisions_from(request.prior_precision, x.cols());
  GlmFit out;
  out.likelihood = likelihood;
  out.method = request.method;
  if (noise == Noise::known) out.noise_precision = *noise_precision;
  double beta = noise_precision.value_or(1.0);
  std::optional<NormalGammaFit> normal_gamma;  // fitted when the noise is unknown
  if (noise == Noise::normal_gamma || noise == Noise::plug_in) {
    // w | τ ~ N(m₀, (τ p₀)⁻¹) and τ ~ Gamma(a₀, b₀) (Jeffreys' 1/τ by default): the prior
    // precisions are in units of the noise precision, as `blr infer linreg` takes them.
    check(!request.prior_mean || request.prior_mean->isZero(0),
          "With the noise precision unknown (the Normal–Gamma posterior), the prior mean is 0; "
          "give noise_precision to use prior_mean.");
    NormalGammaRegression ng;
    ng.prior_precision = precisions;
    if (noise_prior) std::tie(ng.noise_shape, ng.noise_rate) = *noise_prior;
    ng.validate();
    normal_gamma = fit_normal_gamma(ng, x, y);
    beta = normal_gamma->noise_precision_mean();
    const std::string prior = noise_prior ? fmt::format("the prior Gamma({}, {})",
                                                        noise_prior->first, noise_prior->second)
                                          : std::string("Jeffreys' prior p(tau) ~ 1/tau");
    out.assumptions.push_back(fmt::format(
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
  const Glm model = make_glm(x, y, likelihood, model_precisions, request.prior_mean, beta);
  Matrix covariance;  // the Gaussian the sensitivities use (τ unknown: S at τ = E[τ | y])
  if (noise == Noise::normal_gamma) {
    const NormalGammaFit& f = *normal_gamma;
    out.mean = f.mean;
    covariance = f.scale;
    out.covariance = f.covariance;
    out.log_evidence = f.log_evidence;
    out.dof = f.dof;
    out.scale = f.scale;
    out.noise_shape = f.noise_shape;
    out.noise_rate = f.noise_rate;
    out.noise_precision = beta;
    out.iterations = 1;
    out.converged = true;
  } else if (request.method == "laplace" || request.method == "exact") {
    // With β known a Gaussian's Laplace posterior is exact (one Newton step from any start).
    const LaplaceOptions& options = method_options.laplace;
    const LaplaceResult r = laplace(model, options);
    require_converged(r.converged, "Newton's method to the Laplace mode", r.iterations,
                      options.max_iterations, "iterations", kRaiseCap);
    out.mean = r.mean;
    covariance = out.covariance = r.covariance;
    out.log_joint = r.log_joint;
    out.log_evidence = r.log_evidence;
    out.iterations = r.iterations;
    out.converged = r.converged;
  } else if (components > 0) {
    GlmFit m = fit_glm_mixture(model, components, method_options.mixture);
    m.assumptions = std::move(out.assumptions);
    m.noise_precision = out.noise_precision;
    if (noise == Noise::plug_in) m.noise_precision = beta;
    return m;
  } else {
    CviOptions options = method_options.cvi;
    options.family =
        request.family == "gaussian-full" ? GaussianFamilyKind::full : GaussianFamilyKind::diagonal;
    check(request.cvi_start == "laplace" || request.cvi_start == "prior",
          fmt::format("The CVI start must be laplace or prior; got '{}'.", request.cvi_start));
    std::optional<CviLaplaceStart> start;
    if (request.cvi_start == "laplace") start = cvi_laplace_start(model, options.family);
    const CviResult r = cvi(model, options, start ? &start->natural : nullptr);
    require_converged(r.converged, "CVI", r.iterations, options.max_iterations, "iterations",
                      kRaiseCap);
    out.mean = r.mean;
    covariance = out.covariance = r.covariance;
    out.elbo = r.elbo;
    out.iterations = r.iterations;
    out.converged = r.converged;
    if (noise == Noise::plug_in) out.noise_precision = beta;
  }
  if (request.sensitivities) {
    out.sensitivity = glm_sensitivity(model, out.mean, covariance, sensitivity_options);
    out.loo = loo_estimate(model, *out.sensitivity);
  }
  return out;
}

}  // namespace blr::inference
