// `blr infer linreg|logistic|poisson|gpc`: conjugate linear regression, Laplace, CVI (full,
// diagonal, mixture of Gaussians) and GP classification.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <tuple>

#include "blr/core/convergence.hpp"
#include "blr/core/error.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/family/gaussian_full.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/intervals.hpp"
#include "blr/inference/gp_hyperparameters.hpp"
#include "blr/inference/gp_laplace.hpp"
#include "blr/inference/fit_statistics.hpp"
#include "blr/inference/glm_summary.hpp"
#include "blr/inference/waic.hpp"
#include "blr/inference/gp_fit.hpp"
#include "blr/inference/gp_summary.hpp"
#include "blr/inference/kernels.hpp"
#include "checked_result.hpp"
#include "infer_common.hpp"

namespace blr::cli::infer {
namespace {

using inference::Likelihood;

nlohmann::json test_json(Likelihood l, const inference::TestMetrics& t) {
  nlohmann::json j{{"n", t.n}, {"nll", t.nll}, {"rmse", t.rmse}};
  if (l == Likelihood::logistic) j["accuracy"] = t.accuracy;
  return j;
}

void print_test(Likelihood l, const inference::TestMetrics& t, const std::string& file) {
  if (l == Likelihood::logistic) {
    fmt::print("test ({}, {} rows): accuracy {:.4f} ({} errors), NLL {:.6f}\n", file, t.n,
               t.accuracy, static_cast<long>(std::llround((1 - t.accuracy) * t.n)), t.nll);
  } else {
    fmt::print("test ({}, {} rows): NLL {:.6f}, RMSE {:.6f}\n", file, t.n, t.nll, t.rmse);
  }
}


/// The fit statistics (inference/fit_statistics.hpp) and WAIC (inference/waic.hpp): one line on
/// stdout, "fit_statistics" in JSON (GlmSummary::fit_statistics_json, the keys of to_json).
void report_fit_statistics(const inference::GlmSummary& summary, nlohmann::json& j) {
  const inference::FitStatistics& f = summary.statistics();
  const inference::Waic& w = summary.waic();
  fmt::print(
      "fit at the posterior mean: n = {}, k = {}, log-likelihood {:.6f} (intercept-only {:.6f}), "
      "pseudo-R² {:.4f}{}, AIC {:.3f}, BIC {:.3f}; over the posterior: WAIC {:.3f} (lppd {:.6f}, "
      "p_waic {:.4f})\n",
      f.observations, f.parameters, f.log_likelihood, f.null_log_likelihood, f.pseudo_r2,
      std::isnan(f.r_squared) ? std::string() : fmt::format(", R² {:.4f}", f.r_squared), f.aic,
      f.bic, w.waic, w.lppd, w.p_waic);
  j["fit_statistics"] = summary.fit_statistics_json();
}

/// The printed table and JSON of a summary's marginals, fit statistics and WAIC, predictions
/// and test metrics (inference/glm_summary.hpp), shared by every GLM posterior.
void report_summary(const Options& o, const Supervised& s, const inference::GlmSummary& summary,
                    const inference::PredictiveOptions& predictive, const std::string& title,
                    nlohmann::json& j, PredictionTable* predictions) {
  const Likelihood lik = summary.fit().likelihood;
  const auto c = summary.coefficients(o.level);
  const Marginals marginals{c.mean, c.sd, c.lower, c.upper, o.level};
  print_table(s.names, marginals, title);
  marginals.to(j);
  report_fit_statistics(summary, j);
  const Matrix& cov = summary.fit().covariance;
  j.update({{"covariance", to_json(cov)}, {"correlation", to_json(inference::correlation(cov))}});
  if (s.has_test) {
    const auto t = summary.score(s.x_test, s.y_test, predictive);
    print_test(lik, t, o.test);
    j["test"] = test_json(lik, t);
  }
  if (s.has_predict) {
    *predictions = with_lines(summary.predict(s.x_predict, o.level, predictive), lik,
                              s.predict_lines, s.classes);
    j["predict"] = report_predictions(o, predictive, lik, *predictions, s.classes);
  }
}

/// Mixture-of-Gaussians posterior by eqs. 29–30, started around the Laplace mode
/// (inference::fit_glm_mixture).
nlohmann::json run_mixture(const Options& o, const RegressionProblem& p,
                           PredictionTable* predictions) {
  const Supervised& s = p.data;
  const int k = p.family;
  inference::GlmFit fit = inference::fit_glm_mixture(p.model, k, p.options.mixture);
  fit.assumptions = p.assumptions;
  const inference::GlmMixture& m = *fit.mixture;
  nlohmann::json means = nlohmann::json::array(), covs = nlohmann::json::array();
  for (int c = 0; c < k; ++c) {
    means.push_back(to_json(m.means[static_cast<std::size_t>(c)]));
    covs.push_back(to_json(m.covariances[static_cast<std::size_t>(c)]));
  }
  nlohmann::json j{{"method", "cvi"},
                   {"family", fmt::format("mixture:{}", k)},
                   {"features", s.names},
                   {"weights", to_json(m.weights)},
                   {"means", means},
                   {"covariances", covs},
                   {"elbo", *fit.elbo},
                   {"elbo_se", m.elbo_se},
                   {"iterations", fit.iterations},
                   {"converged", true}};
  report_problem(p, j);
  if (!s.dropped.empty()) j["dropped_rows"] = s.dropped;
  const inference::GlmSummary summary(p.model.x, s.y_train, fit, s.names);
  report_summary(o, s, summary, p.predictive,
                 fmt::format("posterior: mixture of {} Gaussians (moments of the mixture; "
                             "intervals from its marginals)",
                             k),
                 j, predictions);
  for (int c = 0; c < k; ++c) {
    fmt::print("component {} (weight {:.3g}): mean", c + 1, m.weights[c]);
    for (Index i = 0; i < m.means[static_cast<std::size_t>(c)].size(); ++i)
      fmt::print(" {:.4g}", m.means[static_cast<std::size_t>(c)][i]);
    fmt::print("\n");
  }
  fmt::print("ELBO {:.6f} ± {:.6f} (Monte Carlo), {} iterations\n", *fit.elbo, m.elbo_se,
             fit.iterations);
  return j;
}

}  // namespace

namespace {

/// "A,B" of --noise-prior: both 0 (Jeffreys) or both positive.
std::pair<double, double> parse_noise_prior(const std::string& text) {
  const auto v = parse_numbers(text, "--noise-prior");
  check(v.size() == 2 && ((v[0] == 0 && v[1] == 0) || (v[0] > 0 && v[1] > 0)),
        fmt::format("Option '--noise-prior' must be A,B with a Gamma shape A and rate B both "
                    "positive, or 0,0 (Jeffreys' prior); got '{}'.",
                    text));
  return {v[0], v[1]};
}

std::string likelihood_scale(Noise noise) {
  switch (noise) {
    case Noise::normal_gamma:
    case Noise::plug_in:
      return "1000 noise sds";
    case Noise::known:
    case Noise::evidence:
      return "1000 in units of y";
    case Noise::none:
      break;
  }
  return "1000 on the link scale";
}

}  // namespace

RegressionProblem prepare_regression(const Options& o, const std::string& command) {
  RegressionProblem p;
  p.likelihood = o.model == "linreg"     ? Likelihood::gaussian
                 : o.model == "logistic" ? Likelihood::logistic
                                         : Likelihood::poisson;
  p.method = o.model == "linreg" ? resolve_method(o, {"exact", "laplace", "cvi"})
                                 : resolve_method(o, {"laplace", "cvi"});
  p.family = parse_family(o.family);
  check(p.method == "cvi" || p.family == 0,
        fmt::format("Option '--family {}' applies only to --method cvi.", o.family));
  const bool linreg = p.likelihood == Likelihood::gaussian;
  check(!o.noise_precision || linreg,
        "Option '--noise-precision' applies only to linreg (a known noise precision β).");
  check(o.noise_prior.empty() || linreg, "Option '--noise-prior' applies only to linreg.");
  check(o.noise_prior.empty() || !o.noise_precision,
        "Options '--noise-prior' and '--noise-precision' exclude each other: a known noise "
        "precision has no prior.");
  check(o.noise_prior.empty() || !o.optimize_evidence,
        "Options '--noise-prior' and '--optimize-evidence' exclude each other: evidence "
        "maximisation learns β as a point.");
  check(!o.optimize_evidence || p.method == "exact",
        "Option '--optimize-evidence' applies only to linreg with --method exact.");
  check(!o.intercept_prior_precision || !o.no_intercept,
        "Option '--intercept-prior-precision' needs an intercept; it does not apply with "
        "--no-intercept.");
  p.delta = o.prior_precision.value_or(1.0);
  check_positive("--prior-precision", p.delta);
  if (o.noise_precision) check_positive("--noise-precision", *o.noise_precision);
  if (!o.no_intercept) {
    p.intercept = o.intercept_prior_precision.value_or(inference::kInterceptPriorPrecision);
    check_positive("--intercept-prior-precision", *p.intercept);
  }
  p.noise = !linreg                ? Noise::none
            : o.noise_precision    ? (o.optimize_evidence ? Noise::evidence : Noise::known)
            : o.optimize_evidence  ? Noise::evidence
            : p.method == "exact"  ? Noise::normal_gamma
                                   : Noise::plug_in;
  const auto noise_prior = o.noise_prior.empty() ? std::pair<double, double>{0.0, 0.0}
                                                 : parse_noise_prior(o.noise_prior);
  const Response resp = linreg                                 ? Response::real
                        : p.likelihood == Likelihood::logistic ? Response::binary
                                                               : Response::count;
  p.data = load_supervised(o, resp, !o.no_intercept);
  p.warnings = p.data.warnings;
  const Index d = p.data.x_train.cols();
  p.precisions = inference::prior_precisions(d, p.delta, p.intercept);
  double beta = o.noise_precision.value_or(1.0);
  if (p.noise == Noise::normal_gamma || p.noise == Noise::plug_in) {
    p.normal_gamma.prior_precision = p.precisions;
    std::tie(p.normal_gamma.noise_shape, p.normal_gamma.noise_rate) = noise_prior;
    p.normal_gamma.validate();
  }
  if (p.noise == Noise::plug_in)
    beta = inference::fit_normal_gamma(p.normal_gamma, p.data.x_train, p.data.y_train)
               .noise_precision_mean();
  // The Normal–Gamma prior is w | τ ~ N(0, (τΛ₀)⁻¹): conditional on τ = β it is Λ₀β.
  const bool relative = p.noise == Noise::normal_gamma || p.noise == Noise::plug_in;
  // The design moves into the model: it is held once (p.data.x_train is empty from here on).
  p.model =
      inference::Glm::with_prior_precisions(std::move(p.data.x_train), p.data.y_train, p.likelihood,
                                            relative ? Vector(beta * p.precisions) : p.precisions);
  p.model.noise_precision = beta;
  p.model.validate();
  fmt::print("blr {} {} — {} on {} ({} rows, {} parameters){}\n", command, o.model, p.method,
             o.train, p.model.x.rows(), p.model.x.cols(),
             p.data.classes.empty() ? "" : fmt::format("; positive class '{}'", p.data.classes[1]));

  // Every default taken says what it assumed.
  auto& a = p.assumptions;
  if (o.method.empty() && !linreg)
    a.push_back(fmt::format("posterior by the {} (the default for {}; --method cvi: CVI)",
                            "Laplace approximation", o.model));
  if (linreg && !o.noise_precision && !o.optimize_evidence) {
    const std::string prior = o.noise_prior.empty()
                                  ? "Jeffreys' prior p(τ) ∝ 1/τ"
                                  : fmt::format("the prior Gamma({})", o.noise_prior);
    if (p.noise == Noise::normal_gamma)
      a.push_back(fmt::format(
          "noise: its precision τ is unknown, with {}; exact Normal–Gamma posterior, so the "
          "coefficients are Student t (--noise-precision B: a known β{})",
          prior, o.noise_prior.empty() ? "; --noise-prior A,B: a Gamma prior" : ""));
    else
      a.push_back(fmt::format(
          "noise: precision β = E[τ | y] = {:.6g} from the exact Normal–Gamma posterior ({}), "
          "then held fixed by {} (--noise-precision B: a known β)",
          beta, prior, p.method));
  }
  if (!o.prior_precision) {
    if (o.optimize_evidence)
      a.push_back("evidence maximisation starts from δ = 1 (--prior-precision)");
    else if (relative)
      a.push_back(
          "coefficients: prior w | τ ~ N(0, (δτ)⁻¹) with δ = 1, in units of the noise precision "
          "(--prior-precision)");
    else
      a.push_back("coefficients: prior N(0, 1/δ) with δ = 1 (--prior-precision)");
  }
  if (o.optimize_evidence && !o.noise_precision)
    a.push_back("evidence maximisation starts from β = 1 (--noise-precision)");
  if (p.intercept && !o.intercept_prior_precision)
    a.push_back(fmt::format(
        "intercept: a weak prior of precision {:g} (sd {}), not δ, so it is not shrunk towards 0 "
        "(--intercept-prior-precision){}",
        *p.intercept, likelihood_scale(p.noise),
        o.optimize_evidence ? "; δ is learned for the other coefficients" : ""));
  // The method's options from the flags given (table_flags.hpp): its own table's and the
  // predictive's; run_regression and `blr sensitivity` refuse the rest before fitting.
  p.options = inference::glm_method_options(p.method, std::max(p.family, 0), o.optimize_evidence,
                                            o.flags.given());
  o.flags.apply(inference::PredictiveOptions::table(), p.predictive);
  p.run = fmt::format("blr {} {} --method {}{}", command, o.model, p.method,
                      p.method == "exact" && !o.optimize_evidence ? " without --optimize-evidence"
                      : p.family > 0 ? fmt::format(" --family {}", o.family)
                                     : std::string());
  if (p.method == "cvi" && p.family <= 0 && o.cvi_start.empty())
    a.push_back("cvi starts from the Laplace posterior (the same fixed point as from the prior, "
                "--cvi-start prior; from the intercept's weak prior the first steps can fail)");
  for (const auto& s : a) fmt::print("assumed: {}\n", s);
  return p;
}

void report_problem(const RegressionProblem& p, nlohmann::json& j) {
  j["assumptions"] = p.assumptions;
  if (!p.warnings.empty()) j["warnings"] = p.warnings;
  j["prior_precision"] = p.delta;  // learned by --optimize-evidence
  if (p.intercept) j["intercept_prior_precision"] = *p.intercept;
  if (p.likelihood == Likelihood::gaussian) {
    j["noise_precision"] = p.model.noise_precision;
    j["noise_estimate"] = p.noise == Noise::known          ? "known"
                          : p.noise == Noise::normal_gamma ? "normal-gamma"
                          : p.noise == Noise::evidence     ? "evidence"
                                                           : "plug-in";
  }
}

GaussianPosterior fit_gaussian_posterior(const Options& o, RegressionProblem& p,
                                         nlohmann::json& j) {
  const Supervised& s = p.data;
  inference::Glm& model = p.model;
  const int family = p.family;
  GaussianPosterior post;
  Vector& mean = post.mean;
  Matrix& cov = post.covariance;
  if (p.method == "exact" && p.noise == Noise::normal_gamma) {
    const auto f = inference::fit_normal_gamma(p.normal_gamma, p.model.x, s.y_train);
    mean = f.mean;
    cov = f.covariance;
    // The Gaussian conditional on τ = E[τ | y], N(m, S): what the sensitivities see.
    model.noise_precision = f.noise_precision_mean();
    model.prior_precision = model.noise_precision * p.precisions;
    const auto tau = inference::gamma_interval(f.noise_shape, f.noise_rate, o.level);
    const double sd_lower = 1 / std::sqrt(tau.upper), sd_upper = 1 / std::sqrt(tau.lower);
    j.update({{"family", "normal-gamma"},
              {"dof", f.dof},
              {"log_evidence", f.log_evidence},
              {"iterations", 1},
              {"converged", true},
              {"noise",
               {{"prior", o.noise_prior.empty()
                              ? nlohmann::json("jeffreys")
                              : nlohmann::json{{"shape", p.normal_gamma.noise_shape},
                                               {"rate", p.normal_gamma.noise_rate}}},
                {"shape", f.noise_shape},
                {"rate", f.noise_rate},
                {"precision_mean", f.noise_precision_mean()},
                {"precision_lower", tau.lower},
                {"precision_upper", tau.upper},
                {"sd_lower", sd_lower},
                {"sd_upper", sd_upper},
                {"variance_mean", f.noise_rate / (f.noise_shape - 1)}}}});
    fmt::print(
        "noise precision τ | y ~ Gamma({:.6g}, rate {:.6g}): mean {:.6g}, {:g}% interval "
        "[{:.6g}, {:.6g}]; noise sd σ = τ^(-1/2) in [{:.6g}, {:.6g}]\n",
        f.noise_shape, f.noise_rate, f.noise_precision_mean(), 100 * o.level, tau.lower,
        tau.upper, sd_lower, sd_upper);
    fmt::print("log evidence {:.9g}{}\n", f.log_evidence,
               o.noise_prior.empty() ? " (with p(τ) = 1/τ unnormalised: compares fits of this y)"
                                     : "");
    post.normal_gamma = f;
  } else if (p.method == "exact") {
    if (o.optimize_evidence) {
      inference::EvidenceOptions eo = p.options.evidence;
      eo.alpha = p.delta;
      eo.beta = o.noise_precision.value_or(1.0);
      eo.intercept_precision = p.intercept;
      const auto r = inference::maximize_evidence(p.model.x, s.y_train, eo);
      require_converged(r.converged, "Evidence maximisation", r.iterations, eo.max_iterations,
                        "iterations", kRaiseCap);
      mean = r.mean;
      cov = r.covariance;
      p.delta = r.alpha;
      p.precisions = inference::prior_precisions(p.model.x.cols(), r.alpha, p.intercept);
      model.prior_precision = p.precisions;
      model.noise_precision = r.beta;
      j.update({{"log_evidence", r.log_evidence},
                {"iterations", r.iterations},
                {"converged", r.converged},
                {"effective_parameters", r.gamma}});
      fmt::print(
          "evidence maximisation: prior precision {:.6g}, noise precision {:.6g}, "
          "γ = {:.6g}, {} iterations\n",
          r.alpha, r.beta, r.gamma, r.iterations);
    } else {
      const inference::BayesianLinearRegression blr{p.delta, model.noise_precision, p.intercept};
      const Vector natural = blr.posterior(p.model.x, s.y_train);  // one BLR step, ρ = 1
      // GaussianFull refuses a non-finite λ: say so as for any result that is not finite.
      require_finite(nlohmann::json{{"posterior_natural", to_json(natural)}},
                     fmt::format("blr infer {}", o.model));
      const GaussianFull q = GaussianFull::from_natural(natural);
      mean = q.mean;
      cov = q.covariance();
      j.update({{"log_evidence", blr.log_evidence(p.model.x, s.y_train, natural)},
                {"iterations", 1},
                {"converged", true}});
    }
    j["family"] = "gaussian-full";
    fmt::print("log evidence {:.9g}\n", j["log_evidence"].get<double>());
  } else if (p.method == "laplace") {
    const inference::LaplaceOptions& lo = p.options.laplace;
    const auto r = inference::laplace(model, lo);
    require_converged(r.converged, "Newton's method to the Laplace mode", r.iterations,
                      lo.max_iterations, "iterations", kRaiseCap);
    mean = r.mean;
    cov = r.covariance;
    j.update({{"family", "gaussian-full"},
              {"log_evidence", r.log_evidence},
              {"log_joint", r.log_joint},
              {"iterations", r.iterations},
              {"converged", r.converged}});
    fmt::print("Newton (BLR, delta method, ρ = {}): {} iterations, converged: {}\n", lo.rho,
               r.iterations, r.converged ? "yes" : "no");
    fmt::print("log joint at the mode {:.9g}; Laplace log evidence {:.9g}\n", r.log_joint,
               r.log_evidence);
  } else {  // cvi
    inference::CviOptions co = p.options.cvi;
    co.family =
        family == 0 ? inference::GaussianFamilyKind::full : inference::GaussianFamilyKind::diagonal;
    // The start: GlmFitRequest::cvi_start (inference/glm_fit.hpp says why laplace is the default).
    std::optional<inference::CviLaplaceStart> start;
    const std::string from = !o.cvi_start.empty() ? o.cvi_start : inference::GlmFitRequest{}.cvi_start;
    if (from == "laplace") start = inference::cvi_laplace_start(model, co.family);
    const auto r = inference::cvi(model, co, start ? &start->natural : nullptr);
    require_converged(r.converged, "CVI", r.iterations, co.max_iterations, "iterations", kRaiseCap);
    mean = r.mean;
    cov = r.covariance;
    j.update({{"family", o.family},
              {"elbo", r.elbo},
              {"iterations", r.iterations},
              {"converged", r.converged},
              {"start", from}});
    if (start) j["laplace_iterations"] = start->laplace_iterations;
    fmt::print("CVI ({}{}): {} iterations, converged: {}; ELBO {:.9g}\n", o.family,
               start ? fmt::format(", from the Laplace posterior after {} Newton steps",
                                   start->laplace_iterations)
                     : "",
               r.iterations, r.converged ? "yes" : "no", r.elbo);
  }
  return post;
}


nlohmann::json run_regression(const Options& o, PredictionTable* predictions) {
  RegressionProblem p = prepare_regression(o, "infer");
  o.flags.require_taken(p.run);
  const Supervised& s = p.data;
  const Likelihood lik = p.likelihood;
  if (p.method == "cvi" && p.family > 0) return run_mixture(o, p, predictions);

  nlohmann::json j{{"method", p.method}, {"features", s.names}};
  if (!s.dropped.empty()) j["dropped_rows"] = s.dropped;
  const GaussianPosterior post = fit_gaussian_posterior(o, p, j);
  report_problem(p, j);
  // The library's summary of this posterior (inference/glm_summary.hpp): marginals, fit
  // statistics, WAIC and predictions, as blr.infer.glm returns them.
  inference::GlmFit g;
  g.likelihood = lik;
  g.method = p.method;
  g.mean = post.mean;
  g.covariance = post.covariance;
  g.iterations = j.at("iterations").get<int>();
  g.converged = j.at("converged").get<bool>();
  g.assumptions = p.assumptions;
  if (lik == Likelihood::gaussian) g.noise_precision = p.model.noise_precision;
  if (post.normal_gamma) {
    const auto& f = *post.normal_gamma;
    g.dof = f.dof;
    g.scale = f.scale;
    g.noise_shape = f.noise_shape;
    g.noise_rate = f.noise_rate;
  }
  const inference::GlmSummary summary(p.model.x, s.y_train, std::move(g), s.names);
  report_summary(o, s, summary, p.predictive,
                 post.normal_gamma
                     ? fmt::format("posterior (Student t marginals, ν = {:g}):", post.normal_gamma->dof)
                     : std::string("posterior:"),
                 j, predictions);
  return j;
}

nlohmann::json run_gpc(const Options& o, PredictionTable* predictions, InferPlots* plots) {
  // Laplace (GPML Algs. 3.1, 3.2) or CVI (eq. 60) for the latent values, fitted by the library's
  // fit_gp_classification (gp_fit.hpp); with --learn-hyperparameters, the kernel's ℓ and σ² first
  // maximise the Laplace evidence or the CVI ELBO (L-BFGS in log space, gp_hyperparameters.hpp).
  const std::string method = resolve_method(o, {"cvi", "laplace"});
  check(parse_family(o.family) == 0,
        "Model 'gpc' uses a full Gaussian over the latent values: --family gaussian-full.");
  const bool laplace = method == "laplace";
  // The method's table (GP Laplace from its preset tight_laplace, CVI from learning_cvi), the
  // hyperparameters' L-BFGS with --learn-hyperparameters, and the predictive's.
  const inference::GpLearnOptions learn = inference::gp_classification_options(
      laplace ? inference::GpcMethod::laplace : inference::GpcMethod::cvi,
      o.learn_hyperparameters, o.flags.given());
  inference::PredictiveOptions predictive;
  o.flags.apply(inference::PredictiveOptions::table(), predictive);
  o.flags.require_taken(fmt::format("blr infer gpc --method {}{}", method,
                                    o.learn_hyperparameters ? " --learn-hyperparameters" : ""));
  const Supervised s = load_supervised(o, Response::binary, false);
  inference::Kernel kernel = kernel_of(o, s.x_train.cols());
  fmt::print("blr infer gpc — {}, full Gaussian over {} latent values; kernel {}\n",
             laplace ? "Laplace (GPML Alg. 3.1)" : "CVI", s.x_train.rows(), kernel.expression());
  const auto fit = inference::fit_gp_classification(
      s.x_train, s.y_train, kernel,
      laplace ? inference::GpcMethod::laplace : inference::GpcMethod::cvi,
      o.learn_hyperparameters, learn);
  if (fit.search) {
    const auto& h = *fit.search;
    require_search_converged(h.iterations, h.evaluations, h.converged, learn.lbfgs,
                             "kernel values (--kernel, --lengthscale and --variance)");
    fmt::print(
        "hyperparameters: L-BFGS on the {} from {} ({:.9g}): {} iterations, {} evaluations, "
        "max|∇| = {:.2e} in the log hyperparameters, converged: {}\n",
        laplace ? "log marginal likelihood" : "ELBO", kernel.describe(), h.initial_value,
        h.iterations, h.evaluations, h.gradient.cwiseAbs().maxCoeff(), h.converged ? "yes" : "no");
    if (!h.converged) fmt::print("note: {}\n", h.stop);
  }
  fmt::print("{}\n", fit.kernel.describe());
  if (laplace) {
    require_converged(fit.converged, "Newton's method to the GP's Laplace mode", fit.iterations,
                      learn.laplace.max_iterations, "iterations", kRaiseCap);
    fmt::print("{} Newton iterations, converged: {}; log marginal likelihood {:.9g}\n",
               fit.iterations, fit.converged ? "yes" : "no", fit.objective);
  } else {
    require_converged(fit.converged, "CVI", fit.iterations, learn.cvi.max_iterations, "iterations",
                      kRaiseCap);
    fmt::print("{} iterations, converged: {}; ELBO {:.9g} ({} Gauss–Hermite nodes)\n",
               fit.iterations, fit.converged ? "yes" : "no", fit.objective, learn.cvi.quadrature_nodes);
  }
  const Vector& gradient = fit.gradient;
  fmt::print("its gradient in the log hyperparameters ({}): ({:.6g})\n",
             fmt::join(fit.kernel.parameter_names(), ", "),
             fmt::join(gradient.data(), gradient.data() + gradient.size(), ", "));
  const inference::GpSummary summary(fit, kernel);
  const auto latent = summary.latent(o.level);
  fmt::print("latent f at the training inputs: mean in [{:.4g}, {:.4g}], sd in [{:.4g}, {:.4g}]\n",
             latent.mean.minCoeff(), latent.mean.maxCoeff(), latent.sd.minCoeff(),
             latent.sd.maxCoeff());
  nlohmann::json j = summary.to_json(o.level);
  j.update({{"family", "gaussian-full"},
            {"ard", o.ard},
            {"features", s.names},
            {"learned_hyperparameters", o.learn_hyperparameters}});
  if (!s.dropped.empty()) j["dropped_rows"] = s.dropped;
  if (plots != nullptr) {
    if (s.x_train.cols() <= 2) {
      GpPlot p = gp_plot_frame(s, o, true);
      p.title = fmt::format("blr infer gpc — {}, {}", method, fit.kernel.describe());
      const auto at = fit.predict(gp_plot_inputs(p));
      const Vector probability =
          inference::predict_latent(Likelihood::logistic, at.mean, at.variance, Vector(), predictive)
              .mean;
      if (p.grid.size() > 0) {
        // σ is increasing, so σ of the latent interval's ends is the interval of σ(f).
        const auto latent =
            Marginals::gaussian(at.mean, at.variance.cwiseMax(0.0).cwiseSqrt(), o.level);
        const auto sigmoid = [](const Vector& v) {
          return Vector((1.0 + (-v.array()).exp()).inverse());
        };
        p.mean = probability;
        p.lower = sigmoid(latent.lower);
        p.upper = sigmoid(latent.upper);
      } else {
        p.surface = Eigen::Map<const Matrix>(probability.data(), p.grid_x.size(), p.grid_y.size())
                        .transpose();
      }
      plots->gp = std::move(p);
    } else {
      fmt::print(stderr,
                 "blr: note: gp.png is drawn for one or two input columns; gpc has {}, so none "
                 "was drawn.\n",
                 s.x_train.cols());
    }
  }
  if (s.has_test) {
    const auto t = summary.score(s.x_test, s.y_test, predictive);
    print_test(Likelihood::logistic, t, o.test);
    j["test"] = test_json(Likelihood::logistic, t);
  }
  if (s.has_predict) {
    *predictions = with_lines(summary.predict(s.x_predict, o.level, predictive),
                              Likelihood::logistic, s.predict_lines, s.classes);
    j["predict"] = report_predictions(o, predictive, Likelihood::logistic, *predictions, s.classes);
  }
  return j;
}

}  // namespace blr::cli::infer
