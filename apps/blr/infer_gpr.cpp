// `blr infer gpr`: exact Gaussian-process regression (GPML Alg. 2.1) with the log marginal
// likelihood (eq. 2.30) and, with --learn-hyperparameters, ℓ, σ² and the noise variance σₙ²
// learned by L-BFGS on it (eq. 5.9; gp_hyperparameters.hpp). The GP models y − ȳ (ȳ the training
// mean), so the prior mean of y is ȳ.
#include <fmt/format.h>

#include <cmath>

#include "blr/core/convergence.hpp"
#include "blr/core/error.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/gp_hyperparameters.hpp"
#include "blr/inference/gp_regression.hpp"
#include "blr/inference/kernels.hpp"
#include "infer_common.hpp"

namespace blr::cli::infer {

void require_search_converged(int iterations, int evaluations, bool converged,
                              const inference::LbfgsOptions& options, const char* start_options) {
  if (converged) return;
  const std::string remedy = fmt::format("start it from other {}", start_options);
  if (evaluations >= options.max_evaluations) {
    require_converged(false, "The hyperparameter search (L-BFGS)", evaluations,
                      options.max_evaluations, "evaluations", remedy);
  }
  if (iterations >= options.max_iterations) {
    require_converged(false, "The hyperparameter search (L-BFGS)", iterations,
                      options.max_iterations, "iterations", remedy);
  }
}

nlohmann::json run_gpr(const Options& o, PredictionTable* predictions) {
  const std::string method = resolve_method(o, {"exact"});
  check(parse_family(o.family) == 0,
        "Model 'gpr' has an exact Gaussian posterior; --family does not apply.");
  check(!o.noise_precision,
        "Model 'gpr' takes its noise as a variance: use --noise-variance instead of "
        "--noise-precision.");
  check(!o.rho, "Option '--rho' does not apply to model 'gpr'.");
  inference::Kernel kernel{inference::parse_kernel(o.kernel), o.lengthscale, o.variance};
  kernel.validate();
  check_positive("noise-variance", o.noise_variance);
  const Supervised s = load_supervised(o, Response::real, false);
  const double y_mean = s.y_train.mean();
  const Vector y = s.y_train.array() - y_mean;
  double noise = o.noise_variance;
  fmt::print(
      "blr infer gpr — exact GP regression (GPML Alg. 2.1) on {} ({} rows); {} kernel; the GP "
      "models y − {:.6g} (the training mean)\n",
      o.train, s.x_train.rows(), inference::to_string(kernel.kind), y_mean);
  nlohmann::json j{{"method", method},
                   {"kernel", inference::to_string(kernel.kind)},
                   {"features", s.names},
                   {"y_mean", y_mean},
                   {"learned_hyperparameters", o.learn_hyperparameters}};
  if (!s.dropped.empty()) j["dropped_rows"] = s.dropped;
  if (o.learn_hyperparameters) {
    const auto h = inference::learn_gpr_kernel(kernel, noise, s.x_train, y);
    require_search_converged(h.iterations, h.evaluations, h.converged,
                             inference::GpLearnOptions{}.lbfgs,
                             "--lengthscale, --variance and --noise-variance");
    fmt::print(
        "hyperparameters: L-BFGS on the log marginal likelihood from ℓ = {}, σ² = {}, σₙ² = {} "
        "({:.9g}): {} iterations, {} evaluations, max|∇| = {:.2e} in (log ℓ, log σ², log σₙ²), "
        "converged: {}\n",
        kernel.lengthscale, kernel.variance, noise, h.initial_value, h.iterations, h.evaluations,
        h.gradient.cwiseAbs().maxCoeff(), h.converged ? "yes" : "no");
    if (!h.converged) fmt::print("note: {}\n", h.stop);
    j["hyperparameter_search"] = {{"initial_lengthscale", kernel.lengthscale},
                                  {"initial_variance", kernel.variance},
                                  {"initial_noise_variance", noise},
                                  {"initial_objective", h.initial_value},
                                  {"iterations", h.iterations},
                                  {"evaluations", h.evaluations},
                                  {"gradient", to_json(h.gradient)},
                                  {"converged", h.converged}};
    kernel = h.kernel;
    noise = h.noise_variance;
  }
  const auto e = inference::gp_regression_evidence(kernel, noise, s.x_train, y);
  const Matrix k = kernel.matrix(s.x_train, s.x_train);
  const auto fit = inference::gp_regression(k, y, noise);
  fmt::print("ℓ = {:.6g}, σ² = {:.6g}, σₙ² = {:.6g}\n", kernel.lengthscale, kernel.variance, noise);
  fmt::print("log marginal likelihood {:.9g}\n", e.value);
  fmt::print("its gradient in (log ℓ, log σ², log σₙ²): ({:.6g}, {:.6g}, {:.6g})\n", e.gradient[0],
             e.gradient[1], e.gradient[2]);
  Vector mean, var;
  inference::gp_regression_predict(fit, k, kernel.diagonal(k.rows()), mean, var);
  mean.array() += y_mean;
  const Vector sd = var.cwiseSqrt();
  fmt::print("latent f at the training inputs: mean in [{:.6g}, {:.6g}], sd in [{:.4g}, {:.4g}]\n",
             mean.minCoeff(), mean.maxCoeff(), sd.minCoeff(), sd.maxCoeff());
  j.update({{"lengthscale", kernel.lengthscale},
            {"variance", kernel.variance},
            {"noise_variance", noise},
            {"log_marginal_likelihood", e.value},
            {"hyperparameter_gradient", to_json(e.gradient)},
            {"iterations", 1},
            {"converged", true}});
  Marginals::gaussian(mean, sd, o.level).to(j);
  if (s.has_test) {
    Vector tm, tv;
    inference::gp_regression_predict(fit, kernel.matrix(s.x_train, s.x_test),
                                     kernel.diagonal(s.x_test.rows()), tm, tv);
    tm.array() += y_mean;
    const auto p = inference::predict_latent(inference::Likelihood::gaussian, tm, tv, s.y_test, {},
                                             1.0 / noise);  // y* ~ N(m*, v* + σₙ²)
    const auto t = inference::test_metrics(inference::Likelihood::gaussian, p, s.y_test);
    fmt::print("test ({}, {} rows): NLL {:.6f}, RMSE {:.6f}\n", o.test, t.n, t.nll, t.rmse);
    j["test"] = {{"n", t.n}, {"nll", t.nll}, {"rmse", t.rmse}};
  }
  if (s.has_predict) {
    Vector pm, pv;
    inference::gp_regression_predict(fit, kernel.matrix(s.x_train, s.x_predict),
                                     kernel.diagonal(s.x_predict.rows()), pm, pv);
    pm.array() += y_mean;
    *predictions = prediction_table(inference::Likelihood::gaussian, Vector::Ones(1), pm, pv,
                                    Vector(), noise, o.level, s.predict_lines, s.classes);
    j["predict"] = report_predictions(o, inference::Likelihood::gaussian, *predictions, s.classes);
  }
  return j;
}

}  // namespace blr::cli::infer
