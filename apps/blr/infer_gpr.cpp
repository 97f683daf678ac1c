// `blr infer gpr`: exact Gaussian-process regression (GPML Alg. 2.1) with the log marginal
// likelihood (eq. 2.30) and, with --learn-hyperparameters, the kernel's hyperparameters (a sum of
// products of base kernels, ARD with --ard; inference/kernels.hpp) and the noise variance σₙ²
// learned by L-BFGS on it (eq. 5.9; gp_hyperparameters.hpp). The GP models y − ȳ (ȳ the training
// mean), so the prior mean of y is ȳ. Also the kernel options shared with `blr infer gpc`.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "blr/core/convergence.hpp"
#include "blr/core/error.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/gp_fit.hpp"
#include "blr/inference/gp_summary.hpp"
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

inference::Kernel kernel_of(const Options& o, Index columns) {
  inference::Kernel kernel = inference::Kernel::parse(o.kernel, o.lengthscale, o.variance);
  if (o.ard) kernel = kernel.with_ard(columns);
  kernel.validate();
  return kernel;
}

namespace {

/// The GP plot's inputs: one or two columns (else none, with a note on stderr).
bool plottable_inputs(const Supervised& s, const std::string& model) {
  if (s.x_train.cols() <= 2) return true;
  fmt::print(stderr,
             "blr: note: gp.png is drawn for one or two input columns; {} has {}, so none was "
             "drawn.\n",
             model, s.x_train.cols());
  return false;
}

}  // namespace

GpPlot gp_plot_frame(const Supervised& s, const Options& o, bool classification) {
  GpPlot p;
  p.classification = classification;
  for (size_t i = 0; i < static_cast<size_t>(s.x_train.cols()); ++i)
    p.inputs.push_back(s.names[i] + (o.standardize ? " (standardised)" : ""));
  p.response = o.label.empty() ? std::string("y") : o.label;
  p.x = s.x_train;
  p.y = s.y_train;
  p.level = o.level;
  if (s.x_train.cols() == 1) {
    p.grid = plot_grid(s.x_train.col(0), 200);
  } else {
    p.grid_x = plot_grid(s.x_train.col(0), 80);
    p.grid_y = plot_grid(s.x_train.col(1), 80);
  }
  return p;
}

Matrix gp_plot_inputs(const GpPlot& p) {
  if (p.grid.size() > 0) return p.grid;
  Matrix g(p.grid_x.size() * p.grid_y.size(), 2);
  for (Index r = 0; r < p.grid_y.size(); ++r)
    for (Index c = 0; c < p.grid_x.size(); ++c) g.row(r * p.grid_x.size() + c) << p.grid_x[c], p.grid_y[r];
  return g;
}

nlohmann::json run_gpr(const Options& o, PredictionTable* predictions, InferPlots* plots) {
  resolve_method(o, {"exact"});
  check(parse_family(o.family) == 0,
        "Model 'gpr' has an exact Gaussian posterior; --family does not apply.");
  check(!o.noise_precision,
        "Model 'gpr' takes its noise as a variance: use --noise-variance instead of "
        "--noise-precision.");
  // The L-BFGS of --learn-hyperparameters, from its preset (default_lbfgs).
  const inference::GpLearnOptions learn =
      inference::gp_regression_options(o.learn_hyperparameters, o.flags.given());
  o.flags.require_taken(o.learn_hyperparameters ? "blr infer gpr --learn-hyperparameters"
                                                : "blr infer gpr without --learn-hyperparameters");
  check_positive("noise-variance", o.noise_variance);
  const Supervised s = load_supervised(o, Response::real, false);
  inference::Kernel kernel = kernel_of(o, s.x_train.cols());
  const double y_mean = s.y_train.mean();
  fmt::print(
      "blr infer gpr — exact GP regression (GPML Alg. 2.1) on {} ({} rows); kernel {}; the GP "
      "models y − {:.6g} (the training mean)\n",
      o.train, s.x_train.rows(), kernel.expression(), y_mean);
  const auto fit = inference::fit_gp_regression(s.x_train, s.y_train, kernel, o.noise_variance,
                                                o.learn_hyperparameters, learn);
  if (fit.search) {
    const auto& h = *fit.search;
    require_search_converged(h.iterations, h.evaluations, h.converged, learn.lbfgs,
                             "kernel values (--kernel, --lengthscale, --variance) and "
                             "--noise-variance");
    fmt::print(
        "hyperparameters: L-BFGS on the log marginal likelihood from {}, σₙ² = {} ({:.9g}): {} "
        "iterations, {} evaluations, max|∇| = {:.2e} in the log hyperparameters, converged: {}\n",
        kernel.describe(), o.noise_variance, h.initial_value, h.iterations, h.evaluations,
        h.gradient.cwiseAbs().maxCoeff(), h.converged ? "yes" : "no");
    if (!h.converged) fmt::print("note: {}\n", h.stop);
  }
  const inference::GpSummary summary(fit, kernel, o.noise_variance);
  fmt::print("{}, σₙ² = {:.6g}\n", fit.kernel.describe(), fit.noise_variance);
  fmt::print("log marginal likelihood {:.9g}\n", fit.log_marginal_likelihood);
  fmt::print("its gradient in the log hyperparameters ({}, noise_variance): ({:.6g})\n",
             fmt::join(fit.kernel.parameter_names(), ", "),
             fmt::join(fit.gradient.data(), fit.gradient.data() + fit.gradient.size(), ", "));
  const auto latent = summary.latent(o.level);
  fmt::print("latent f at the training inputs: mean in [{:.6g}, {:.6g}], sd in [{:.4g}, {:.4g}]\n",
             latent.mean.minCoeff(), latent.mean.maxCoeff(), latent.sd.minCoeff(),
             latent.sd.maxCoeff());
  nlohmann::json j = summary.to_json(o.level);
  j.update({{"ard", o.ard},
            {"features", s.names},
            {"learned_hyperparameters", o.learn_hyperparameters}});
  if (!s.dropped.empty()) j["dropped_rows"] = s.dropped;
  const double noise = fit.noise_variance;
  if (plots != nullptr && plottable_inputs(s, "gpr")) {
    GpPlot p = gp_plot_frame(s, o, false);
    p.title = fmt::format("blr infer gpr — {}, σₙ² = {:.4g}", fit.kernel.describe(), noise);
    const auto at = fit.predict(gp_plot_inputs(p));
    if (p.grid.size() > 0) {
      const auto latent = Marginals::gaussian(at.mean, at.variance.cwiseMax(0.0).cwiseSqrt(), o.level);
      const auto observed = Marginals::gaussian(
          at.mean, (at.variance.cwiseMax(0.0).array() + noise).sqrt().matrix(), o.level);
      p.mean = at.mean;
      p.lower = latent.lower;
      p.upper = latent.upper;
      p.predictive_lower = observed.lower;
      p.predictive_upper = observed.upper;
    } else {
      p.surface = Eigen::Map<const Matrix>(at.mean.data(), p.grid_x.size(), p.grid_y.size())
                      .transpose();
    }
    plots->gp = std::move(p);
  }
  if (s.has_test) {
    const auto t = summary.score(s.x_test, s.y_test);
    fmt::print("test ({}, {} rows): NLL {:.6f}, RMSE {:.6f}\n", o.test, t.n, t.nll, t.rmse);
    j["test"] = {{"n", t.n}, {"nll", t.nll}, {"rmse", t.rmse}};
  }
  if (s.has_predict) {
    *predictions = with_lines(summary.predict(s.x_predict, o.level),
                              inference::Likelihood::gaussian, s.predict_lines, s.classes);
    j["predict"] = report_predictions(o, inference::PredictiveOptions{},
                                      inference::Likelihood::gaussian, *predictions, s.classes);
  }
  return j;
}

}  // namespace blr::cli::infer
