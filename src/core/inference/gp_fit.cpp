// A Gaussian process fitted to data (gp_fit.hpp).
#include "blr/inference/gp_fit.hpp"

#include <fmt/format.h>

#include <cmath>

#include "blr/core/error.hpp"

namespace blr::inference {

GpLatentPrediction GpRegressionFit::predict(const Matrix& x_new) const {
  check(x_new.cols() == x.cols(),
        fmt::format("The GP was fitted on {} input columns; the new inputs have {}.", x.cols(),
                    x_new.cols()));
  GpLatentPrediction p;
  gp_regression_predict(posterior, kernel.matrix(x, x_new), kernel.diagonal(x_new), p.mean,
                        p.variance);
  p.mean.array() += y_mean;
  return p;
}

namespace {

/// A fit whose objective, gradient or latent mean overflowed is refused, not returned (found by
/// the python_infer fuzz harness: one response of 1e300 gave a log marginal likelihood of −inf).
void require_finite_fit(const char* what, double objective, const Vector& gradient,
                        const Vector& latent_mean) {
  check(std::isfinite(objective) && gradient.allFinite() && latent_mean.allFinite(),
        fmt::format("{}, its gradient or the latent mean is not finite (the objective is {}); "
                    "the inputs or responses are beyond what double precision can represent "
                    "(rescale them).",
                    what, objective));
}

}  // namespace

GpLearnOptions gp_regression_options(bool learn, const GivenOptions& given) {
  GpLearnOptions o;
  if (learn) given.apply(LbfgsOptions::table(), o.lbfgs);
  return o;
}

GpLearnOptions gp_classification_options(GpcMethod method, bool learn, const GivenOptions& given) {
  GpLearnOptions o;
  if (method == GpcMethod::laplace) {
    given.apply(GpLaplaceOptions::table(), o.laplace);
  } else {
    given.apply(CviOptions::table(), o.cvi);
  }
  if (learn) given.apply(LbfgsOptions::table(), o.lbfgs, KeySelection::all_but({"max_iterations"}));
  return o;
}

GpRegressionFit fit_gp_regression(const Matrix& x, const Vector& y, const Kernel& kernel,
                                  double noise_variance, bool learn,
                                  const GpLearnOptions& options) {
  check(x.rows() >= 1 && y.size() == x.rows(),
        fmt::format("GP regression needs one response per input row; got {} rows and {} "
                    "responses.",
                    x.rows(), y.size()));
  check(x.allFinite() && y.allFinite(), "GP regression needs finite inputs and responses.");
  kernel.validate();
  check_positive("noise-variance", noise_variance);
  GpRegressionFit fit;
  fit.kernel = kernel;
  fit.noise_variance = noise_variance;
  fit.y_mean = y.mean();
  fit.x = x;
  const Vector centred = y.array() - fit.y_mean;
  if (learn) {
    fit.search = learn_gpr_kernel(kernel, noise_variance, x, centred, options);
    fit.kernel = fit.search->kernel;
    fit.noise_variance = fit.search->noise_variance;
  }
  const GpEvidence e = gp_regression_evidence(fit.kernel, fit.noise_variance, x, centred);
  fit.log_marginal_likelihood = e.value;
  fit.gradient = e.gradient;
  fit.posterior = gp_regression(fit.kernel.matrix(x), centred, fit.noise_variance);
  require_finite_fit("GP regression's log marginal likelihood", fit.log_marginal_likelihood,
                     fit.gradient, fit.fitted().mean);
  return fit;
}

GpLatentPrediction GpClassificationFit::fitted() const {
  if (laplace) return {laplace->mode, laplace->variance};
  return {cvi->mean, cvi->variance};
}

GpLatentPrediction GpClassificationFit::predict(const Matrix& x_new) const {
  check(x_new.cols() == x.cols(),
        fmt::format("The GP was fitted on {} input columns; the new inputs have {}.", x.cols(),
                    x_new.cols()));
  GpLatentPrediction p;
  const Matrix cross = kernel.matrix(x, x_new);
  if (laplace) {
    gp_laplace_predict_latent(*laplace, cross, kernel.diagonal(x_new), p.mean, p.variance);
  } else {
    gp_predict_latent(k, *cvi, cross, kernel.diagonal(x_new), p.mean, p.variance);
  }
  return p;
}

GpClassificationFit fit_gp_classification(const Matrix& x, const Vector& y, const Kernel& kernel,
                                          GpcMethod method, bool learn,
                                          const GpLearnOptions& options) {
  check(x.rows() >= 1 && y.size() == x.rows(),
        fmt::format("GP classification needs one label per input row; got {} rows and {} labels.",
                    x.rows(), y.size()));
  check(x.allFinite(), "GP classification needs finite inputs.");
  check((y.array() == 0.0 || y.array() == 1.0).all(),
        "GP classification needs labels 0 or 1.");
  kernel.validate();
  options.validate();
  GpClassificationFit fit;
  fit.kernel = kernel;
  fit.method = method;
  fit.x = x;
  if (learn) {
    fit.search = learn_gpc_kernel(kernel, x, y, Likelihood::logistic, method, options);
    fit.kernel = fit.search->kernel;
  }
  fit.k = fit.kernel.matrix(x);
  const auto dk = fit.kernel.gradients(x);
  if (method == GpcMethod::laplace) {
    fit.laplace = gp_laplace(fit.k, y, Likelihood::logistic, options.laplace);
    fit.objective = fit.laplace->log_marginal_likelihood;
    fit.gradient = gp_laplace_gradient(fit.k, *fit.laplace, y, Likelihood::logistic, dk);
    fit.iterations = fit.laplace->iterations;
    fit.converged = fit.laplace->converged;
  } else {
    fit.cvi = gp_cvi(fit.k, y, Likelihood::logistic, options.cvi);
    fit.objective = fit.cvi->elbo;
    fit.gradient = gp_cvi_elbo_gradient(fit.k, *fit.cvi, dk);
    fit.iterations = fit.cvi->iterations;
    fit.converged = fit.cvi->converged;
  }
  require_finite_fit(method == GpcMethod::laplace ? "GP classification's log marginal likelihood"
                                                  : "GP classification's ELBO",
                     fit.objective, fit.gradient, fit.fitted().mean);
  return fit;
}

}  // namespace blr::inference
