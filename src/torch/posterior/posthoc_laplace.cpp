// The post-hoc Laplace pipeline (posthoc_laplace.hpp).
#include "blr/torch/posterior/posthoc_laplace.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "blr/core/error.hpp"

namespace blr::torch {

PosthocLaplaceFit fit_posthoc_laplace(const Model& model, const ::at::Tensor& train_x,
                                      const ::at::Tensor& train_y, const ::at::Tensor& validation_x,
                                      const ::at::Tensor& validation_y,
                                      const PosthocLaplaceRequest& request,
                                      const MakeLaplacePosterior& make_posterior) {
  const bool regression = request.curvature.likelihood == LaplaceLikelihood::kRegression;
  check(request.prior_precision == 0 ||
            (request.prior_precision > 0 && std::isfinite(request.prior_precision)),
        fmt::format("The prior precision must be a positive finite number (0: choose it by the "
                    "marginal likelihood); got {}.",
                    request.prior_precision));
  check(
      request.prior_precision_method == "marglik" || request.prior_precision_method == "gridsearch",
      fmt::format("The prior precision method must be marglik or gridsearch; got '{}'.",
                  request.prior_precision_method));
  check(regression || !request.noise_std_by_marglik,
        "The noise σ is chosen for a regression's Gaussian likelihood; this is a classifier.");
  PosthocLaplaceFit out;
  out.prior_precision_chosen = !(request.prior_precision > 0);
  const bool gridsearch =
      out.prior_precision_chosen && request.prior_precision_method == "gridsearch";
  check(!(request.noise_std_by_marglik && gridsearch),
        "Choosing σ by the marginal likelihood takes δ given or chosen by it too; it does not "
        "combine with the grid search on validation NLL.");
  if (gridsearch) request.grid.validate();
  check(!gridsearch || (validation_x.defined() && validation_x.size(0) > 0),
        "The grid search chooses δ on a validation split, and there is none.");
  const auto t0 = std::chrono::steady_clock::now();
  out.run_noise_std = regression ? request.curvature.noise_std : 0.0;
  out.fit = laplace_curvature(model, train_x, train_y, request.curvature);
  if (request.noise_std_by_marglik) {
    out.fit = laplace_with_noise_std(
        out.fit, laplace_optimal_noise_std(
                     out.fit, out.prior_precision_chosen ? 0.0 : request.prior_precision));
  }
  out.prior_precision = !out.prior_precision_chosen ? request.prior_precision
                        : gridsearch                ? request.grid.values().front()
                                                    : laplace_optimal_prior_precision(out.fit);
  LaplacePosterior& posterior = make_posterior(out.prior_precision, out.fit);
  posterior.set_curvature(out.fit.curvature, out.fit.factors);
  if (gridsearch) {
    out.search = laplace_prior_precision_search(model, posterior, validation_x, validation_y,
                                                request.samples, request.grid,
                                                regression ? out.fit.noise_std : 0.0);
    out.prior_precision = out.search->best;
  }
  out.log_marginal_likelihood = laplace_log_marginal_likelihood(out.fit, out.prior_precision);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace blr::torch
