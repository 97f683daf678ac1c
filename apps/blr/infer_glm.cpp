// `blr infer linreg|logistic|poisson|gpc`: conjugate linear regression, Laplace, CVI (full,
// diagonal, mixture of Gaussians) and GP classification.
#include <fmt/format.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "blr/core/convergence.hpp"
#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/cvi.hpp"
#include "blr/family/gaussian_full.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/intervals.hpp"
#include "blr/inference/gp_hyperparameters.hpp"
#include "blr/inference/gp_laplace.hpp"
#include "blr/inference/kernels.hpp"
#include "blr/inference/mixture_vi.hpp"
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

inference::PredictiveOptions predictive_options(const Options& o) {
  inference::PredictiveOptions p;
  p.method = predictive_method(o.predictive);
  check(o.samples >= 1, "Option '--samples' must be at least 1.");
  p.samples = o.samples;
  p.seed = o.seed;
  p.quadrature_nodes = o.quadrature_nodes;
  return p;
}

/// Mixture-of-Gaussians posterior by eqs. 29–30, started around the Laplace mode.
nlohmann::json run_mixture(const Options& o, const inference::Glm& model, const Supervised& s,
                           int k, PredictionTable* predictions) {
  check(o.iterations >= 1, "Option '--iterations' must be at least 1.");
  const inference::LaplaceResult lap = inference::laplace(model);
  require_converged(lap.converged, "Newton's method to the Laplace mode (the mixture's start)",
                    lap.iterations, inference::LaplaceOptions{}.max_iterations, "iterations",
                    "a larger --prior-precision gives a better-conditioned mode");
  const Index d = model.dimension();
  const Eigen::LLT<Matrix> llt(lap.covariance);
  const Matrix l = llt.matrixL();
  const Matrix precision = lap.covariance.inverse();
  Rng rng(o.seed);
  std::vector<inference::GaussianComponent> init;
  for (int c = 0; c < k; ++c) {
    const Vector shift = k == 1 ? Vector::Zero(d) : Vector(1.5 * l * rng.normal_vector(d));
    init.push_back({lap.mean + shift, precision});
  }
  inference::MixtureViOptions mo;
  mo.iterations = o.iterations;
  mo.rho = o.rho.value_or(0.1);
  mo.seed = o.seed;
  const auto fit = inference::mixture_vi(inference::LossFunctions::wrap(model),
                                         Vector::Constant(k, 1.0 / k), init, mo);
  // Moments of the mixture for the table.
  Vector mean = Vector::Zero(d);
  Matrix second = Matrix::Zero(d, d);
  nlohmann::json means = nlohmann::json::array(), covs = nlohmann::json::array();
  std::vector<Matrix> comp_cov;
  for (int c = 0; c < k; ++c) {
    const auto& comp = fit.components[c];
    comp_cov.push_back(comp.precision.inverse());
    mean += fit.weights[c] * comp.mean;
    second += fit.weights[c] * (comp_cov.back() + comp.mean * comp.mean.transpose());
    means.push_back(to_json(comp.mean));
    covs.push_back(to_json(comp_cov.back()));
  }
  const Matrix cov = second - mean * mean.transpose();
  const Vector sd = cov.diagonal().cwiseMax(0.0).cwiseSqrt();
  // Each coefficient's marginal is the mixture Σ_c w_c N(m_cj, Σ_c,jj): its exact quantiles.
  Marginals marginals{mean, sd, Vector(d), Vector(d), o.level};
  for (Index j = 0; j < d; ++j) {
    inference::GaussianMixture1d m{fit.weights, Vector(k), Vector(k)};
    for (int c = 0; c < k; ++c) {
      m.means[c] = fit.components[c].mean[j];
      m.variances[c] = comp_cov[c](j, j);
    }
    const auto ci = m.interval(o.level);
    marginals.lower[j] = ci.lower;
    marginals.upper[j] = ci.upper;
  }
  print_table(s.names, marginals,
              fmt::format("posterior: mixture of {} Gaussians (moments of the mixture; intervals "
                          "from its marginals)",
                          k));
  for (int c = 0; c < k; ++c) {
    fmt::print("component {} (weight {:.3g}): mean", c + 1, fit.weights[c]);
    for (Index j = 0; j < d; ++j) fmt::print(" {:.4g}", fit.components[c].mean[j]);
    fmt::print("\n");
  }
  fmt::print("ELBO {:.6f} ± {:.6f} (Monte Carlo), {} iterations\n", fit.elbo, fit.elbo_se,
             fit.iterations);
  nlohmann::json j{{"method", "cvi"},
                   {"family", fmt::format("mixture:{}", k)},
                   {"features", s.names},
                   {"weights", to_json(fit.weights)},
                   {"means", means},
                   {"covariances", covs},
                   {"covariance", to_json(cov)},
                   {"correlation", to_json(inference::correlation(cov))},
                   {"elbo", fit.elbo},
                   {"elbo_se", fit.elbo_se},
                   {"iterations", fit.iterations},
                   {"converged", true},
                   {"prior_precision", o.prior_precision}};
  marginals.to(j);
  if (!s.dropped.empty()) j["dropped_rows"] = s.dropped;
  if (s.has_predict) {
    const auto popt = predictive_options(o);
    const Index n = s.x_predict.rows();
    Matrix lm(n, k), lv(n, k);
    Vector probability = Vector::Zero(n);
    for (int c = 0; c < k; ++c) {
      const auto p = inference::predict(model.likelihood, fit.components[c].mean, comp_cov[c],
                                        s.x_predict, Vector(), popt, model.noise_precision);
      lm.col(c) = p.latent_mean;
      lv.col(c) = p.latent_variance;
      probability += fit.weights[c] * p.mean;
    }
    *predictions = prediction_table(model.likelihood, fit.weights, lm, lv, probability,
                                    1.0 / model.noise_precision, o.level, s.predict_lines,
                                    s.classes);
    j["predict"] = report_predictions(o, model.likelihood, *predictions, s.classes);
  }
  if (s.has_test) {
    const auto popt = predictive_options(o);
    Vector pmean = Vector::Zero(s.y_test.size());
    Matrix logs(s.y_test.size(), k);
    for (int c = 0; c < k; ++c) {
      const auto p = inference::predict(model.likelihood, fit.components[c].mean, comp_cov[c],
                                        s.x_test, s.y_test, popt, model.noise_precision);
      pmean += fit.weights[c] * p.mean;
      logs.col(c) = p.log_density.array() + std::log(fit.weights[c]);
    }
    inference::Predictive mix;
    mix.mean = pmean;
    const Vector mx = logs.rowwise().maxCoeff();
    mix.log_density = mx.array() + (logs.colwise() - mx).array().exp().rowwise().sum().log();
    const auto t = inference::test_metrics(model.likelihood, mix, s.y_test);
    print_test(model.likelihood, t, o.test);
    j["test"] = test_json(model.likelihood, t);
  }
  return j;
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
  check(!o.rho || p.method != "exact",
        "Option '--rho' applies to --method laplace and cvi, not to the exact posterior.");
  check_positive("prior-precision", o.prior_precision);
  check_positive("noise-precision", o.noise_precision);
  check(!o.optimize_evidence || p.method == "exact",
        "Option '--optimize-evidence' applies only to linreg with --method exact.");
  const Response resp = p.likelihood == Likelihood::gaussian   ? Response::real
                        : p.likelihood == Likelihood::logistic ? Response::binary
                                                               : Response::count;
  p.data = load_supervised(o, resp, !o.no_intercept);
  p.model = inference::Glm::with_isotropic_prior(p.data.x_train, p.data.y_train, p.likelihood,
                                                 o.prior_precision);
  p.model.noise_precision = o.noise_precision;
  p.model.validate();
  fmt::print("blr {} {} — {} on {} ({} rows, {} parameters){}\n", command, o.model, p.method,
             o.train, p.data.x_train.rows(), p.data.x_train.cols(),
             p.data.classes.empty()
                 ? ""
                 : fmt::format("; positive class '{}'", p.data.classes[1]));
  return p;
}

GaussianPosterior fit_gaussian_posterior(const Options& o, RegressionProblem& p,
                                         nlohmann::json& j) {
  const Supervised& s = p.data;
  inference::Glm& model = p.model;
  const int family = p.family;
  GaussianPosterior post;
  Vector& mean = post.mean;
  Matrix& cov = post.covariance;
  if (p.method == "exact") {
    if (o.optimize_evidence) {
      inference::EvidenceOptions eo{o.prior_precision, o.noise_precision};
      if (o.max_iterations > 0) eo.max_iterations = o.max_iterations;
      if (o.tolerance > 0) eo.tolerance = o.tolerance;
      const auto r = inference::maximize_evidence(s.x_train, s.y_train, eo);
      require_converged(r.converged, "Evidence maximisation", r.iterations, eo.max_iterations,
                        "iterations", kRaiseCap);
      mean = r.mean;
      cov = r.covariance;
      model.prior_precision.setConstant(r.alpha);
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
      const inference::BayesianLinearRegression blr{o.prior_precision, o.noise_precision};
      const Vector natural = blr.posterior(s.x_train, s.y_train);  // one BLR step, ρ = 1
      // GaussianFull refuses a non-finite λ: say so as for any result that is not finite.
      require_finite(nlohmann::json{{"posterior_natural", to_json(natural)}},
                     fmt::format("blr infer {}", o.model));
      const GaussianFull q = GaussianFull::from_natural(natural);
      mean = q.mean;
      cov = q.covariance();
      j.update({{"log_evidence", blr.log_evidence(s.x_train, s.y_train, natural)},
                {"iterations", 1},
                {"converged", true}});
    }
    j["family"] = "gaussian-full";
    fmt::print("log evidence {:.9g}\n", j["log_evidence"].get<double>());
  } else if (p.method == "laplace") {
    inference::LaplaceOptions lo;
    if (o.rho) lo.rho = *o.rho;
    if (o.max_iterations > 0) lo.max_iterations = o.max_iterations;
    if (o.tolerance > 0) lo.tolerance = o.tolerance;
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
    inference::CviOptions co;
    co.family =
        family == 0 ? inference::GaussianFamilyKind::full : inference::GaussianFamilyKind::diagonal;
    if (o.rho) co.rho = *o.rho;
    if (o.max_iterations > 0) co.max_iterations = o.max_iterations;
    if (o.tolerance > 0) co.tolerance = o.tolerance;
    co.quadrature_nodes = o.quadrature_nodes;
    co.seed = o.seed;
    // From the Laplace posterior (a few Newton steps) CVI needs about half the iterations on
    // 10⁵ rows (more on small data sets).
    std::optional<inference::CviLaplaceStart> start;
    if (o.cvi_start == "laplace") start = inference::cvi_laplace_start(model, co.family);
    const auto r = inference::cvi(model, co, start ? &start->natural : nullptr);
    require_converged(r.converged, "CVI", r.iterations, co.max_iterations, "iterations", kRaiseCap);
    mean = r.mean;
    cov = r.covariance;
    j.update({{"family", o.family},
              {"elbo", r.elbo},
              {"iterations", r.iterations},
              {"converged", r.converged},
              {"start", o.cvi_start}});
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
  const Supervised& s = p.data;
  const Likelihood lik = p.likelihood;
  if (p.method == "cvi" && p.family > 0) return run_mixture(o, p.model, s, p.family, predictions);

  nlohmann::json j{{"method", p.method}, {"features", s.names}};
  if (!s.dropped.empty()) j["dropped_rows"] = s.dropped;
  const GaussianPosterior post = fit_gaussian_posterior(o, p, j);
  const Vector& mean = post.mean;
  const Matrix& cov = post.covariance;
  const double prior_precision = p.model.prior_precision[0];
  const double noise_precision = p.model.noise_precision;
  const Vector sd = cov.diagonal().cwiseSqrt();
  const auto marginals = Marginals::gaussian(mean, sd, o.level);
  print_table(s.names, marginals, "posterior:");
  marginals.to(j);
  j.update({{"covariance", to_json(cov)},
            {"correlation", to_json(inference::correlation(cov))},
            {"prior_precision", prior_precision}});
  if (lik == Likelihood::gaussian) j["noise_precision"] = noise_precision;
  if (s.has_test) {
    const auto pred = inference::predict(lik, mean, cov, s.x_test, s.y_test,
                                         predictive_options(o), noise_precision);
    const auto t = inference::test_metrics(lik, pred, s.y_test);
    print_test(lik, t, o.test);
    j["test"] = test_json(lik, t);
  }
  if (s.has_predict) {
    const auto pred = inference::predict(lik, mean, cov, s.x_predict, Vector(),
                                         predictive_options(o), noise_precision);
    *predictions = prediction_table(lik, Vector::Ones(1), pred.latent_mean, pred.latent_variance,
                                    pred.mean, 1.0 / noise_precision, o.level, s.predict_lines,
                                    s.classes);
    j["predict"] = report_predictions(o, lik, *predictions, s.classes);
  }
  return j;
}

nlohmann::json run_gpc(const Options& o, PredictionTable* predictions) {
  // Laplace (GPML Algs. 3.1, 3.2) or CVI (eq. 60) for the latent values; with
  // --learn-hyperparameters, ℓ and σ² first maximise the Laplace evidence or the CVI ELBO (L-BFGS
  // in log space, gp_hyperparameters.hpp).
  const std::string method = resolve_method(o, {"cvi", "laplace"});
  check(parse_family(o.family) == 0,
        "Model 'gpc' uses a full Gaussian over the latent values: --family gaussian-full.");
  inference::Kernel kernel{inference::parse_kernel(o.kernel), o.lengthscale, o.variance};
  kernel.validate();
  check(method == "cvi" || !o.rho, "Option '--rho' applies only to gpc with --method cvi.");
  const Supervised s = load_supervised(o, Response::binary, false);
  inference::CviOptions co;
  if (o.rho) co.rho = *o.rho;
  if (o.max_iterations > 0) co.max_iterations = o.max_iterations;
  if (o.tolerance > 0) co.tolerance = o.tolerance;
  co.quadrature_nodes = o.quadrature_nodes;
  // Learning by the ELBO gradient needs the sites stationary for the ELBO itself: at least 100
  // Gauss–Hermite nodes (gp_hyperparameters.hpp), also for the final fit.
  if (o.learn_hyperparameters)
    co.quadrature_nodes = std::max(o.quadrature_nodes, inference::learning_cvi().quadrature_nodes);
  co.validate();
  inference::GpLaplaceOptions lo = inference::tight_laplace();
  if (o.max_iterations > 0) lo.max_iterations = o.max_iterations;
  if (o.tolerance > 0) lo.tolerance = o.tolerance;
  lo.validate();
  const bool laplace = method == "laplace";
  nlohmann::json j{{"method", method},
                   {"family", "gaussian-full"},
                   {"kernel", inference::to_string(kernel.kind)},
                   {"features", s.names},
                   {"learned_hyperparameters", o.learn_hyperparameters}};
  if (!s.dropped.empty()) j["dropped_rows"] = s.dropped;
  fmt::print("blr infer gpc — {}, full Gaussian over {} latent values; {} kernel\n",
             laplace ? "Laplace (GPML Alg. 3.1)" : "CVI", s.x_train.rows(),
             inference::to_string(kernel.kind));
  if (o.learn_hyperparameters) {
    inference::GpLearnOptions learn;
    learn.laplace = lo;
    learn.cvi = co;
    const auto h = inference::learn_gpc_kernel(
        kernel, s.x_train, s.y_train, Likelihood::logistic,
        laplace ? inference::GpcMethod::laplace : inference::GpcMethod::cvi, learn);
    require_search_converged(h.iterations, h.evaluations, h.converged, learn.lbfgs,
                             "--lengthscale and --variance");
    fmt::print(
        "hyperparameters: L-BFGS on the {} from ℓ = {}, σ² = {} ({:.9g}): {} iterations, {} "
        "evaluations, max|∇| = {:.2e} in (log ℓ, log σ²), converged: {}\n",
        laplace ? "log marginal likelihood" : "ELBO", kernel.lengthscale, kernel.variance,
        h.initial_value, h.iterations, h.evaluations, h.gradient.cwiseAbs().maxCoeff(),
        h.converged ? "yes" : "no");
    if (!h.converged) fmt::print("note: {}\n", h.stop);
    j["hyperparameter_search"] = {{"initial_lengthscale", kernel.lengthscale},
                                  {"initial_variance", kernel.variance},
                                  {"initial_objective", h.initial_value},
                                  {"iterations", h.iterations},
                                  {"evaluations", h.evaluations},
                                  {"gradient", to_json(h.gradient)},
                                  {"converged", h.converged}};
    kernel = h.kernel;
  }
  fmt::print("ℓ = {:.6g}, σ² = {:.6g}\n", kernel.lengthscale, kernel.variance);
  j.update({{"lengthscale", kernel.lengthscale}, {"variance", kernel.variance}});
  const Matrix k = kernel.matrix(s.x_train, s.x_train);
  const auto dk = kernel.gradients(s.x_train);
  Vector mean, var, gradient;
  std::function<void(const Matrix&, Vector&, Vector&)> predict;
  if (laplace) {
    const auto r = inference::gp_laplace(k, s.y_train, Likelihood::logistic, lo);
    require_converged(r.converged, "Newton's method to the GP's Laplace mode", r.iterations,
                      lo.max_iterations, "iterations", kRaiseCap);
    fmt::print("{} Newton iterations, converged: {}; log marginal likelihood {:.9g}\n",
               r.iterations, r.converged ? "yes" : "no", r.log_marginal_likelihood);
    mean = r.mode;
    var = r.variance;
    gradient =
        inference::gp_laplace_gradient(k, r, s.y_train, Likelihood::logistic, {dk[0], dk[1]});
    j.update({{"log_marginal_likelihood", r.log_marginal_likelihood},
              {"iterations", r.iterations},
              {"converged", r.converged}});
    predict = [r, &kernel](const Matrix& cross, Vector& m, Vector& v) {
      inference::gp_laplace_predict_latent(r, cross, kernel.diagonal(cross.cols()), m, v);
    };
  } else {
    const auto r = inference::gp_cvi(k, s.y_train, Likelihood::logistic, co);
    require_converged(r.converged, "CVI", r.iterations, co.max_iterations, "iterations", kRaiseCap);
    fmt::print("{} iterations, converged: {}; ELBO {:.9g} ({} Gauss–Hermite nodes)\n", r.iterations,
               r.converged ? "yes" : "no", r.elbo, co.quadrature_nodes);
    mean = r.mean;
    var = r.variance;
    gradient = inference::gp_cvi_elbo_gradient(k, r, {dk[0], dk[1]});
    j.update({{"elbo", r.elbo}, {"iterations", r.iterations}, {"converged", r.converged}});
    predict = [r, &k, &kernel](const Matrix& cross, Vector& m, Vector& v) {
      inference::gp_predict_latent(k, r, cross, kernel.diagonal(cross.cols()), m, v);
    };
  }
  fmt::print("its gradient in (log ℓ, log σ²): ({:.6g}, {:.6g})\n", gradient[0], gradient[1]);
  j["hyperparameter_gradient"] = to_json(gradient);
  const Vector sd = var.cwiseMax(0.0).cwiseSqrt();
  fmt::print("latent f at the training inputs: mean in [{:.4g}, {:.4g}], sd in [{:.4g}, {:.4g}]\n",
             mean.minCoeff(), mean.maxCoeff(), sd.minCoeff(), sd.maxCoeff());
  Marginals::gaussian(mean, sd, o.level).to(j);
  if (s.has_test) {
    Vector tm, tv;
    predict(kernel.matrix(s.x_train, s.x_test), tm, tv);
    const auto p =
        inference::predict_latent(Likelihood::logistic, tm, tv, s.y_test, predictive_options(o));
    const auto t = inference::test_metrics(Likelihood::logistic, p, s.y_test);
    print_test(Likelihood::logistic, t, o.test);
    j["test"] = test_json(Likelihood::logistic, t);
  }
  if (s.has_predict) {
    Vector pm, pv;
    predict(kernel.matrix(s.x_train, s.x_predict), pm, pv);
    const auto p =
        inference::predict_latent(Likelihood::logistic, pm, pv, Vector(), predictive_options(o));
    *predictions = prediction_table(Likelihood::logistic, Vector::Ones(1), pm, pv, p.mean, 0.0,
                                    o.level, s.predict_lines, s.classes);
    j["predict"] = report_predictions(o, Likelihood::logistic, *predictions, s.classes);
  }
  return j;
}

}  // namespace blr::cli::infer
