// The core's inference on NumPy arrays (blr.infer): Bayesian GLMs by Laplace or CVI with their
// per-example sensitivities (MPE; the fit itself is the library's fit_glm, inference/glm_fit.hpp,
// which the fuzz harness python_infer calls too), the Kalman filter and smoother, Gaussian
// mixtures by EM, and Gaussian processes (inference/gp_fit.hpp, the functions `blr infer gpr|gpc`
// call).
// Arrays arrive as Eigen matrices (copied, float64); results go back as dicts of NumPy arrays and
// Python numbers. A fit that stops at its cap unconverged raises blr.Error (core/convergence.hpp).
// The design matrix is used as given (add an intercept column yourself, as with
// statsmodels' add_constant); the CLI's standardisation and CSV handling are not repeated here.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "bindings.hpp"
#include "blr/core/convergence.hpp"
#include "blr/core/error.hpp"
#include "blr/inference/conjugate_summary.hpp"
#include "blr/inference/fit_statistics.hpp"
#include "blr/inference/glm_fit.hpp"
#include "blr/inference/glm_summary.hpp"
#include "blr/inference/gmm.hpp"
#include "blr/inference/gp_fit.hpp"
#include "blr/inference/gp_summary.hpp"
#include "blr/inference/kalman.hpp"
#include "blr/inference/kalman_summary.hpp"
#include "blr/inference/merge.hpp"
#include "blr/inference/methods.hpp"
#include "blr/inference/mixture_summary.hpp"
#include "blr/inference/sensitivity.hpp"

namespace blr::python {

namespace {

// Named one by one, not `using namespace`: in a unity build the names would reach the next files.
using ::blr::inference::CovarianceType;
using ::blr::inference::EmOptions;
using ::blr::inference::GlmFit;
using ::blr::inference::GlmFitRequest;
using ::blr::inference::Likelihood;
using ::blr::inference::merge_natural;
using ::blr::inference::Sensitivity;
using ::blr::inference::StateSpaceModel;

/// blr.infer.glm's result: the library's posterior summary (inference/glm_summary.hpp) and the
/// per-example sensitivities when asked for; blr.infer.GlmResult wraps it (python/blr/infer.py).
struct PyGlmResult {
  ::blr::inference::GlmSummary summary;
  std::optional<Sensitivity> sensitivity;
  std::optional<::blr::inference::TestMetrics> loo;
};

/// Keyword arguments as the options of a method's tables (None: not given).
GivenOptions given_options(const py::dict& options) {
  GivenOptions given;
  for (const auto& [key, value] : options)
    if (!value.is_none()) {
      const std::string k = key.cast<std::string>();
      given.give(k, to_option_value(k, value));
    }
  return given;
}

/// Refuses a keyword that none of the run's tables took, naming where it applies.
void require_taken(const GivenOptions& given, const std::string& run) {
  given.require_taken(
      run, [](const std::string& key) { return ::blr::inference::inference_methods_with(key); });
}

PyGlmResult fit_glm(const Matrix& x, const Vector& y, const std::string& likelihood,
                    const std::string& method, const std::variant<double, Vector>& prior_precision,
                    const std::optional<Vector>& prior_mean, std::optional<double> noise_precision,
                    std::optional<std::pair<double, double>> noise_prior, const std::string& family,
                    bool sensitivities, std::optional<std::vector<std::string>> names,
                    const std::string& cvi_start, const py::dict& options) {
  GlmFitRequest request;
  request.likelihood = likelihood;
  request.method = method;
  if (const double* delta = std::get_if<double>(&prior_precision)) {
    request.prior_precision = Vector::Constant(1, *delta);
  } else {
    request.prior_precision = std::get<Vector>(prior_precision);
    check(request.prior_precision.size() == x.cols(),
          fmt::format("prior_precision has {} entries but X has {} columns; give one number or "
                      "one per column.",
                      request.prior_precision.size(), x.cols()));
  }
  request.prior_mean = prior_mean;
  request.noise_precision = noise_precision;
  request.noise_prior = noise_prior;
  request.family = family;
  request.sensitivities = sensitivities;
  request.cvi_start = cvi_start;
  request.options = given_options(options);  // the method's table refuses the rest (fit_glm)
  if (names)
    check(static_cast<Index>(names->size()) == x.cols(),
          fmt::format("names has {} entries but X has {} columns; give one name per column.",
                      names->size(), x.cols()));
  py::gil_scoped_release release;
  GlmFit f = ::blr::inference::fit_glm(x, y, request);
  PyGlmResult out{
      ::blr::inference::GlmSummary(x, y, f, names.value_or(std::vector<std::string>{})), {}, f.loo};
  out.sensitivity.swap(f.sensitivity);
  // As `blr infer` refuses a result that is not finite (checked_result.cpp), naming the entry.
  const auto& st = out.summary.statistics();
  const auto& w = out.summary.waic();
  for (const auto& [name, value] :
       {std::pair{"log_likelihood", st.log_likelihood}, std::pair{"aic", st.aic},
        std::pair{"bic", st.bic}, std::pair{"waic", w.waic}, std::pair{"lppd", w.lppd},
        std::pair{"p_waic", w.p_waic}})
    check(std::isfinite(value),
          fmt::format("The fit statistic '{}' is not finite ({}); the data are beyond what double "
                      "precision can represent (rescale them).",
                      name, value));
  return out;
}

/// Everything blr.infer.glm returned as a dict before it returned an object, and the summary's
/// intervals at `level`, its names and WAIC.
py::dict glm_dict(const PyGlmResult& r, double level) {
  const auto& f = r.summary.fit();
  const auto c = r.summary.coefficients(level);
  py::dict out;
  py::list assumptions, names;
  for (const auto& a : f.assumptions) assumptions.append(a);
  for (const auto& n : r.summary.names()) names.append(n);
  if (f.log_joint) out["log_joint"] = *f.log_joint;
  if (f.log_evidence) out["log_evidence"] = *f.log_evidence;
  if (f.elbo) out["elbo"] = *f.elbo;
  if (f.dof) out["dof"] = *f.dof;
  if (f.scale) out["scale"] = *f.scale;
  if (f.noise_shape) out["noise_shape"] = *f.noise_shape;
  if (f.noise_rate) out["noise_rate"] = *f.noise_rate;
  if (f.noise_precision) out["noise_precision"] = *f.noise_precision;
  out["likelihood"] = ::blr::inference::to_string(f.likelihood);
  out["method"] = r.summary.student_t() ? std::string("exact") : f.method;
  out["names"] = names;
  out["iterations"] = f.iterations;
  out["converged"] = f.converged;
  out["mean"] = f.mean;
  out["covariance"] = f.covariance;
  out["sd"] = c.sd;
  out["level"] = level;
  out["lower"] = c.lower;
  out["upper"] = c.upper;
  out["distribution"] = c.distribution;
  out["assumptions"] = assumptions;
  if (f.mixture) {
    py::list means, covariances;
    for (const auto& m : f.mixture->means) means.append(m);
    for (const auto& cov : f.mixture->covariances) covariances.append(cov);
    out["weights"] = f.mixture->weights;
    out["means"] = means;
    out["covariances"] = covariances;
    out["elbo_se"] = f.mixture->elbo_se;
  }
  {
    // statsmodels' llf, llnull, prsquared, aic, bic (and rsquared) at the posterior mean; WAIC.
    const auto& fs = r.summary.statistics();
    const auto& w = r.summary.waic();
    py::dict d;
    d["observations"] = fs.observations;
    d["parameters"] = fs.parameters;
    d["log_likelihood"] = fs.log_likelihood;
    d["null_log_likelihood"] = fs.null_log_likelihood;
    d["pseudo_r2"] = fs.pseudo_r2;
    d["aic"] = fs.aic;
    d["bic"] = fs.bic;
    if (f.likelihood == Likelihood::gaussian) d["r_squared"] = fs.r_squared;
    d["waic"] = w.waic;
    d["lppd"] = w.lppd;
    d["p_waic"] = w.p_waic;
    out["fit_statistics"] = d;
  }
  if (r.sensitivity) {
    const Sensitivity& s = *r.sensitivity;
    py::dict d;
    d["error"] = s.error;
    d["variance"] = s.variance;
    d["deviation"] = s.deviation;
    d["deviation_first_order"] = s.deviation_first_order;
    d["score"] = s.score;
    py::dict l;
    l["nll"] = r.loo->nll;
    if (f.likelihood == Likelihood::logistic) l["accuracy"] = r.loo->accuracy;
    l["rmse"] = r.loo->rmse;
    d["loo"] = l;
    out["sensitivity"] = d;
  }
  return out;
}

/// How a logistic probability E[σ(a*)] is computed, from the Python keywords.
::blr::inference::PredictiveOptions predictive_options(const std::string& predictive, int samples,
                                                       std::uint64_t seed, int quadrature_nodes) {
  ::blr::inference::PredictiveOptions options;
  options.method = ::blr::inference::parse_predictive_method(predictive);
  check(samples >= 1, fmt::format("samples must be at least 1; got {}.", samples));
  options.samples = samples;
  options.seed = seed;
  options.quadrature_nodes = quadrature_nodes;
  return options;
}

/// A predictive table (predictive_table.hpp) as a dict of columns; a row that is not finite is
/// refused in one sentence.
py::dict table_dict(const ::blr::inference::PredictiveTable& t) {
  for (Index i = 0; i < t.values.rows(); ++i)
    for (Index j = 0; j < t.values.cols(); ++j)
      check(std::isfinite(t.values(i, j)),
            fmt::format("The prediction for row {} of x is not finite ('{}' is {}); the inputs are "
                        "beyond what double precision can represent (rescale them).",
                        i, t.columns[static_cast<std::size_t>(j)], t.values(i, j)));
  py::dict out;
  for (std::size_t j = 0; j < t.columns.size(); ++j)
    out[py::str(t.columns[j])] = Vector(t.values.col(static_cast<Index>(j)));
  return out;
}

/// The predictive table of new rows as a dict of columns (predictive_table.hpp), from a result
/// whose summary predicts (GlmSummary, GpSummary).
template <class Result>
py::dict predict_table(const Result& r, const Matrix& x, double level,
                       const std::string& predictive, int samples, std::uint64_t seed,
                       int quadrature_nodes) {
  const auto options = predictive_options(predictive, samples, seed, quadrature_nodes);
  ::blr::inference::PredictiveTable t;
  {
    py::gil_scoped_release release;
    t = r.summary.predict(x, level, options);
  }
  return table_dict(t);
}

/// A state-space posterior (inference/kalman_summary.hpp) and, for a structural model, how it
/// was built.
struct PyKalmanResult {
  ::blr::inference::KalmanSummary summary;
  bool smooth = true;
  std::optional<::blr::inference::StructuralModel> structural;
};

py::dict kalman_dict(const PyKalmanResult& k) {
  const auto& r = k.summary.result();
  py::dict out;
  out["filtered_mean"] = r.filtered_mean;
  out["filtered_cov"] = r.filtered_cov;
  out["predicted_mean"] = r.predicted_mean;
  out["predicted_cov"] = r.predicted_cov;
  if (k.smooth) {
    out["smoothed_mean"] = r.smoothed_mean;
    out["smoothed_cov"] = r.smoothed_cov;
  }
  out["log_likelihood"] = r.log_likelihood;
  out["states"] = k.summary.states();
  out["observed_steps"] = k.summary.observed_steps();
  if (k.structural) {
    const auto& s = *k.structural;
    out["model"] = s.trend ? "local-linear-trend" : "local-level";
    out["obs_var"] = s.obs_var;
    out["state_var"] = s.state_var;
    if (s.trend) out["slope_var"] = s.slope_var;
    out["init_mean"] = s.init_mean;
    out["init_var"] = s.init_var;
    out["assumptions"] = s.assumptions;
    out["converged"] = s.fit ? s.fit->converged : true;
    out["iterations"] = s.fit ? s.fit->evaluations : 1;
  }
  return out;
}

PyKalmanResult kalman(const Matrix& y, const Matrix& transition, const Matrix& observation,
                      const Matrix& state_noise, const Matrix& obs_noise, const Vector& init_mean,
                      const Matrix& init_cov, bool smooth,
                      const std::optional<std::vector<std::string>>& states) {
  StateSpaceModel model{transition, observation, state_noise, obs_noise, init_mean, init_cov};
  model.validate();
  check(y.cols() == model.obs_dim(),
        fmt::format("y has {} columns but the observation matrix has {} rows; they must match.",
                    y.cols(), model.obs_dim()));
  py::gil_scoped_release release;
  return {::blr::inference::KalmanSummary(std::move(model), y,
                                          states.value_or(std::vector<std::string>{})),
          smooth, std::nullopt};
}

PyKalmanResult structural(const Matrix& y, const std::string& kind, std::optional<double> obs_var,
                          std::optional<double> state_var, std::optional<double> slope_var,
                          std::optional<double> init_mean, std::optional<double> init_var, bool fit,
                          const py::dict& options) {
  ::blr::inference::StructuralModelRequest request{kind,      obs_var,  state_var, slope_var,
                                                   init_mean, init_var, fit,       {}};
  const GivenOptions given = given_options(options);
  if (fit) given.apply(::blr::inference::NelderMeadOptions::table(), request.nelder_mead);
  require_taken(given, fit ? "kalman with fit=True" : "kalman without fit");
  std::optional<::blr::inference::StructuralModel> s;
  {
    py::gil_scoped_release release;
    s = ::blr::inference::structural_model(request, y);
  }
  if (s->fit) {
    require_converged(s->fit->converged, "Maximum likelihood by Nelder–Mead", s->fit->evaluations,
                      request.nelder_mead.max_evaluations, "evaluations",
                      "raise max_evaluations or give obs_var and state_var");
  }
  py::gil_scoped_release release;
  return {::blr::inference::KalmanSummary(s->model, y, s->states), true, std::move(s)};
}

py::dict kalman_forecast(const PyKalmanResult& k, Index steps, double level) {
  const auto f = k.summary.forecast(steps, level);
  py::dict out;
  out["mean"] = f.mean;
  out["sd"] = f.sd;
  out["lower"] = f.lower;
  out["upper"] = f.upper;
  out["level"] = level;
  return out;
}

py::dict kalman_bands(const PyKalmanResult& k, Index state, double level, bool smoothed) {
  check(smoothed ? k.smooth : true,
        "This result was run with smooth=False; it has no smoothed marginals.");
  const auto b = smoothed ? k.summary.smoothed(state, level) : k.summary.filtered(state, level);
  py::dict out;
  out["state"] = b.state;
  out["mean"] = b.mean;
  out["sd"] = b.sd;
  out["lower"] = b.lower;
  out["upper"] = b.upper;
  out["level"] = level;
  return out;
}

/// A conjugate posterior (inference/conjugate_summary.hpp) with its data's names kept.
struct PyConjugateResult {
  ::blr::inference::ConjugateSummary summary;
};

PyConjugateResult fit_conjugate_model(const Vector& y, const std::string& likelihood,
                                      const std::optional<std::vector<double>>& prior,
                                      const std::string& method,
                                      const std::vector<std::string>& classes,
                                      const py::dict& options) {
  ::blr::inference::ConjugateProblem problem;
  problem.likelihood = likelihood;
  problem.y = y;
  problem.classes = classes;
  problem.prior = prior.value_or(std::vector<double>{});
  problem.method = method;
  const GivenOptions given = given_options(options);
  ::blr::inference::apply_options(problem, given);
  require_taken(given, fmt::format("conjugate {}", method));
  PyConjugateResult out;
  {
    py::gil_scoped_release release;
    out.summary = ::blr::inference::fit_conjugate(problem);
  }
  if (method == "vmp") {
    check(std::isfinite(*out.summary.elbo()),
          fmt::format("VMP's ELBO is not finite ({}); the data or the prior are beyond what double "
                      "precision can represent (rescale them).",
                      *out.summary.elbo()));
    require_converged(out.summary.converged(), "VMP", out.summary.iterations(),
                      problem.vmp.max_iterations, "iterations",
                      "raise max_iterations or loosen tolerance");
  }
  return out;
}

/// A Gaussian-mixture fit (inference/mixture_summary.hpp).
struct PyMixtureResult {
  ::blr::inference::MixtureSummary summary;
};

PyMixtureResult gmm(const Matrix& x, const std::string& method, std::optional<double> alpha0,
                    const py::dict& options) {
  ::blr::inference::MixtureRequest request;
  request.method = method;
  const GivenOptions given = given_options(options);
  check(method == "em" || method == "vmp" || method == "svi",
        fmt::format("Option 'method' for a Gaussian mixture must be em, vmp or svi; got '{}'.",
                    method));
  ::blr::inference::apply_options(request, given);
  require_taken(given, fmt::format("gmm {}", method));
  if (alpha0) request.prior.alpha0 = *alpha0;
  std::optional<::blr::inference::MixtureSummary> s;
  {
    py::gil_scoped_release release;
    s = ::blr::inference::fit_mixture(x, request);
  }
  if (method != "svi") {
    require_converged(s->converged(), method == "em" ? "EM" : "VMP", s->iterations(),
                      method == "em" ? request.em.max_iterations : request.vmp.max_iterations,
                      "iterations", "raise max_iterations");
  }
  return {std::move(*s)};
}

py::dict gmm_dict(const PyMixtureResult& r) {
  const auto& s = r.summary;
  py::dict out;
  out["method"] = s.method();
  out["weights"] = s.mixture().weights;
  out["means"] = s.mixture().means;
  out["covariances"] = s.mixture().covariances;
  out["responsibilities"] = s.responsibilities();
  out["log_likelihood"] = s.log_likelihood();
  out["iterations"] = s.iterations();
  out["converged"] = s.converged();
  out["observations"] = s.observations();
  out["parameters"] = s.parameters();
  if (s.method() == "em") {
    out["aic"] = s.aic();
    out["bic"] = s.bic();
  } else {
    out["elbo"] = *s.elbo();
  }
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

/// The kernel of an expression, with ARD over `columns` features when asked. `lengthscale` is
/// one start for the factors that set none, or one per column: ARD starting there in every
/// stationary factor.
::blr::inference::Kernel gp_kernel(const std::string& expression, bool ard,
                                   const std::variant<double, Vector>& lengthscale, double variance,
                                   Index columns) {
  const double* one = std::get_if<double>(&lengthscale);
  auto kernel = ::blr::inference::Kernel::parse(expression, one ? *one : 1.0, variance);
  if (one == nullptr) {
    const Vector& per_column = std::get<Vector>(lengthscale);
    check(per_column.size() == columns,
          fmt::format("lengthscale has {} values; give one, or one per input column ({}).",
                      per_column.size(), columns));
    check(ard || columns == 1, "One length-scale per column is ARD: pass ard=True as well.");
    kernel = kernel.with_ard(columns);
    Vector theta = kernel.log_parameters();
    const auto names = kernel.parameter_names();
    for (size_t i = 0; i < names.size(); ++i) {
      const auto open = names[i].find(".lengthscale[");
      if (open == std::string::npos) continue;
      const Index d = std::stol(names[i].substr(open + 13));
      check(per_column[d] > 0 && std::isfinite(per_column[d]),
            fmt::format("Option 'lengthscale' must be positive and finite; got {} for column {}.",
                        per_column[d], d));
      theta[static_cast<Index>(i)] = std::log(per_column[d]);
    }
    kernel = kernel.with_log_parameters(theta);
  } else if (ard) {
    kernel = kernel.with_ard(columns);
  }
  kernel.validate();
  return kernel;
}

/// A GP fit's summary (inference/gp_summary.hpp).
struct PyGpResult {
  ::blr::inference::GpSummary summary;
};

/// The kernel and, when learned, the search, as dict entries.
void put_gp_kernel(py::dict& out, const ::blr::inference::Kernel& kernel,
                   const std::optional<::blr::inference::GpLearned>& search) {
  out["kernel"] = kernel.expression();
  out["kernel_description"] = kernel.describe();
  py::dict parameters;
  const auto names = kernel.parameter_names();
  const Vector values = kernel.parameters();
  for (size_t i = 0; i < names.size(); ++i)
    parameters[py::str(names[i])] = values[static_cast<Index>(i)];
  out["parameters"] = parameters;
  if (search) {
    out["initial_objective"] = search->initial_value;
    out["iterations"] = search->iterations;
    out["evaluations"] = search->evaluations;
    out["converged"] = search->converged;
    out["stop"] = search->stop;
  }
}

void check_search(const std::optional<::blr::inference::GpLearned>& search) {
  if (search && !search->converged) {
    throw Error(
        fmt::format("The hyperparameter search (L-BFGS) did not converge: {} Start it "
                    "from other kernel values.",
                    search->stop));
  }
}

py::tuple gp_regression(const Matrix& x, const Vector& y, const std::string& kernel, bool ard,
                        const std::variant<double, Vector>& lengthscale, double variance,
                        double noise_variance, bool learn, const std::optional<Matrix>& x_new,
                        const py::dict& options) {
  const GivenOptions given = given_options(options);
  const auto learn_options = ::blr::inference::gp_regression_options(learn, given);
  require_taken(given, learn ? "gpr with learn=True" : "gpr with learn=False");
  const auto start = gp_kernel(kernel, ard, lengthscale, variance, x.cols());
  const auto fit =
      ::blr::inference::fit_gp_regression(x, y, start, noise_variance, learn, learn_options);
  check_search(fit.search);
  py::dict out;
  put_gp_kernel(out, fit.kernel, fit.search);
  out["noise_variance"] = fit.noise_variance;
  out["y_mean"] = fit.y_mean;
  out["log_marginal_likelihood"] = fit.log_marginal_likelihood;
  out["gradient"] = fit.gradient;
  const auto fitted = fit.fitted();
  out["fitted_mean"] = fitted.mean;
  out["fitted_variance"] = fitted.variance;
  if (x_new) {
    const auto p = fit.predict(*x_new);
    out["mean"] = p.mean;
    out["variance"] = p.variance;
    out["predictive_variance"] = Vector(p.variance.array() + fit.noise_variance);
  }
  return py::make_tuple(out, PyGpResult{::blr::inference::GpSummary(fit, start, noise_variance)});
}

py::tuple gp_classification(const Matrix& x, const Vector& y, const std::string& kernel, bool ard,
                            const std::variant<double, Vector>& lengthscale, double variance,
                            const std::string& method, bool learn,
                            const std::optional<Matrix>& x_new, const py::dict& keywords) {
  check(method == "laplace" || method == "cvi",
        fmt::format("The GP classification method must be 'laplace' or 'cvi'; got '{}'.", method));
  const bool laplace = method == "laplace";
  const GivenOptions given = given_options(keywords);
  const auto options = ::blr::inference::gp_classification_options(
      laplace ? ::blr::inference::GpcMethod::laplace : ::blr::inference::GpcMethod::cvi, learn,
      given);
  require_taken(given, fmt::format("gpc {} with learn={}", method, learn ? "True" : "False"));
  const auto start = gp_kernel(kernel, ard, lengthscale, variance, x.cols());
  const auto fit = ::blr::inference::fit_gp_classification(
      x, y, start,
      laplace ? ::blr::inference::GpcMethod::laplace : ::blr::inference::GpcMethod::cvi, learn,
      options);
  check_search(fit.search);
  require_converged(fit.converged, laplace ? "Newton's method to the GP's Laplace mode" : "CVI",
                    fit.iterations,
                    laplace ? options.laplace.max_iterations : options.cvi.max_iterations,
                    "iterations",
                    "raise max_iterations, scale the inputs or start from other kernel values");
  py::dict out;
  put_gp_kernel(out, fit.kernel, fit.search);
  out[laplace ? "log_marginal_likelihood" : "elbo"] = fit.objective;
  out["gradient"] = fit.gradient;
  const auto fitted = fit.fitted();
  out["fitted_mean"] = fitted.mean;
  out["fitted_variance"] = fitted.variance;
  if (x_new) {
    const auto p = fit.predict(*x_new);
    out["mean"] = p.mean;
    out["variance"] = p.variance;
    out["probability"] =
        ::blr::inference::predict_latent(Likelihood::logistic, p.mean, p.variance, Vector()).mean;
  }
  return py::make_tuple(out, PyGpResult{::blr::inference::GpSummary(fit, start)});
}

}  // namespace

void bind_inference(py::module_& m) {
  py::module_ inf = m.def_submodule("infer", "The core's Bayesian inference on NumPy arrays.");
  py::class_<PyGlmResult>(inf, "_GlmResult",
                          "The C++ side of blr.infer.GlmResult (inference/glm_summary.hpp).")
      .def("to_dict", &glm_dict, py::arg("level") = 0.95)
      .def(
          "table", [](const PyGlmResult& r, double level) { return r.summary.table(level); },
          py::arg("level") = 0.95)
      .def("predict", &predict_table<PyGlmResult>, py::arg("x"), py::arg("level") = 0.95,
           py::arg("predictive") = "quadrature", py::arg("samples") = 2000, py::arg("seed") = 0,
           py::arg("quadrature_nodes") = 32);
  inf.def("glm", &fit_glm, py::arg("x"), py::arg("y"), py::arg("likelihood") = "logistic",
          py::arg("method") = "laplace", py::arg("prior_precision") = 1.0,
          py::arg("prior_mean") = py::none(), py::arg("noise_precision") = py::none(),
          py::arg("noise_prior") = py::none(), py::arg("family") = "gaussian-full",
          py::arg("sensitivities") = false, py::arg("names") = py::none(),
          py::arg("cvi_start") = ::blr::inference::GlmFitRequest{}.cvi_start,
          py::arg("options") = py::dict(),
          "Bayesian GLM (the C++ behind blr.infer.glm, which wraps the result in GlmResult).");
  inf.def(
      "_methods_json", [] { return ::blr::inference::inference_methods_json().dump(); },
      "The registry of inference methods (inference/methods.hpp) as JSON text.");
  inf.def(
      "_shared_options_json",
      [] { return ::blr::inference::inference_shared_options_json().dump(); },
      "The option tables several inference methods share (inference/methods.hpp) as JSON text.");
  py::class_<PyKalmanResult>(
      inf, "_KalmanResult",
      "The C++ side of blr.infer.KalmanResult (inference/kalman_summary.hpp).")
      .def("to_dict", &kalman_dict)
      .def(
          "table", [](const PyKalmanResult& r, double level) { return r.summary.table(level); },
          py::arg("level") = 0.95)
      .def("forecast", &kalman_forecast, py::arg("steps"), py::arg("level") = 0.95)
      .def("bands", &kalman_bands, py::arg("state") = 0, py::arg("level") = 0.95,
           py::arg("smoothed") = true);
  inf.def("kalman", &kalman, py::arg("y"), py::arg("transition"), py::arg("observation"),
          py::arg("state_noise"), py::arg("obs_noise"), py::arg("init_mean"), py::arg("init_cov"),
          py::arg("smooth") = true, py::arg("states") = py::none(),
          "Kalman filter (and RTS smoother) over the rows of y (T x p; NaN rows are missing, an "
          "infinite value raises blr.Error naming its row); row t of a *_cov matrix is vec(P_t).");
  inf.def("structural", &structural, py::arg("y"), py::arg("model") = "local-level",
          py::arg("obs_var") = py::none(), py::arg("state_var") = py::none(),
          py::arg("slope_var") = py::none(), py::arg("init_mean") = py::none(),
          py::arg("init_var") = py::none(), py::arg("fit") = false, py::arg("options") = py::dict(),
          "A local-level or local-linear-trend model of the series y (T x 1), its variances "
          "given or fitted by maximum likelihood, filtered and smoothed.");
  py::class_<PyConjugateResult>(
      inf, "_ConjugateResult",
      "The C++ side of blr.infer.ConjugateResult (inference/conjugate_summary.hpp).")
      .def(
          "to_json_text",
          [](const PyConjugateResult& r, double level) { return r.summary.to_json(level).dump(); },
          py::arg("level") = 0.95)
      .def(
          "table", [](const PyConjugateResult& r, double level) { return r.summary.table(level); },
          py::arg("level") = 0.95);
  inf.def("conjugate", &fit_conjugate_model, py::arg("y"), py::arg("likelihood"),
          py::arg("prior") = py::none(), py::arg("method") = "exact",
          py::arg("classes") = std::vector<std::string>{}, py::arg("options") = py::dict(),
          "A conjugate posterior (the C++ behind blr.infer.conjugate, which wraps it in "
          "ConjugateResult).");
  py::class_<PyMixtureResult>(
      inf, "_MixtureResult",
      "The C++ side of blr.infer.MixtureResult (inference/mixture_summary.hpp).")
      .def("to_dict", &gmm_dict)
      .def(
          "table",
          [](const PyMixtureResult& r, const std::vector<std::string>& columns) {
            return r.summary.table(columns);
          },
          py::arg("columns") = std::vector<std::string>{})
      .def("predict_proba",
           [](const PyMixtureResult& r, const Matrix& x) { return r.summary.predict_proba(x); })
      .def("predict",
           [](const PyMixtureResult& r, const Matrix& x) { return r.summary.predict(x); })
      .def("log_density",
           [](const PyMixtureResult& r, const Matrix& x) { return r.summary.log_density(x); });
  inf.def("gmm", &gmm, py::arg("x"), py::arg("method") = "em", py::arg("alpha0") = py::none(),
          py::arg("options") = py::dict(),
          "Gaussian mixture by EM (the BLR with a mixture family; k-means++ start), or the "
          "Bayesian mixture's mean-field posterior by VMP or SVI; a run that stops at "
          "max_iterations unconverged raises blr.Error.");
  py::class_<PyGpResult>(inf, "_GpResult",
                         "The C++ side of blr.infer.GpResult (inference/gp_summary.hpp).")
      .def(
          "to_json_text",
          [](const PyGpResult& r, double level) { return r.summary.to_json(level).dump(); },
          py::arg("level") = 0.95)
      .def(
          "table", [](const PyGpResult& r, double level) { return r.summary.table(level); },
          py::arg("level") = 0.95)
      .def("predict", &predict_table<PyGpResult>, py::arg("x"), py::arg("level") = 0.95,
           py::arg("predictive") = "quadrature", py::arg("samples") = 2000, py::arg("seed") = 0,
           py::arg("quadrature_nodes") = 32);
  inf.def("gp_regression", &gp_regression, py::arg("x"), py::arg("y"), py::arg("kernel") = "rbf",
          py::arg("ard") = false, py::arg("lengthscale") = 1.0, py::arg("variance") = 1.0,
          py::arg("noise_variance") = 1.0, py::arg("learn") = true, py::arg("x_new") = py::none(),
          py::arg("options") = py::dict(),
          "Exact GP regression of y on x (the GP models y - mean(y)) with a kernel expression "
          "(sums of products of rbf, matern32, matern52, linear, white and constant, each with "
          "optional values, e.g. 'rbf(l=2)*linear+white(v=0.1)'; lengthscale and variance start "
          "the factors that set none; ard: one length-scale per column, or lengthscale given per "
          "column). learn: the kernel's "
          "hyperparameters and noise_variance maximise the log marginal likelihood by L-BFGS "
          "first. Returns the kernel's parameters by name, the evidence and its gradient, the "
          "latent fit at x and, with x_new, the latent mean and variance there "
          "(predictive_variance adds the noise).");
  inf.def("gp_classification", &gp_classification, py::arg("x"), py::arg("y"),
          py::arg("kernel") = "rbf", py::arg("ard") = false, py::arg("lengthscale") = 1.0,
          py::arg("variance") = 1.0, py::arg("method") = "laplace", py::arg("learn") = true,
          py::arg("x_new") = py::none(), py::arg("options") = py::dict(),
          "GP classification of labels y in {0, 1} (Bernoulli-logit likelihood) by the Laplace "
          "approximation (GPML Alg. 3.1) or CVI, with the kernel expressions of gp_regression; "
          "learn: the hyperparameters maximise the Laplace evidence or the CVI ELBO first. With "
          "x_new the latent mean and variance there and the probability of class 1.");
  inf.def(
      "merge", &merge, py::arg("prior_mean"), py::arg("prior_precision"), py::arg("means"),
      py::arg("precisions"), py::arg("scale") = 1.0,
      "Merges Gaussian posteriors N(mean_t, precision_t^-1) fitted from the prior N(prior_mean, "
      "prior_precision^-1) in natural parameters: lambda_0 + scale * sum_t (lambda_t - "
      "lambda_0) (uncertainty-weighted merging; exact for conjugate models on disjoint data).");
}

}  // namespace blr::python
