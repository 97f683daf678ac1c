// The posterior summary of a Gaussian-process fit (gp_summary.hpp).
#include "blr/inference/gp_summary.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <utility>

#include "blr/core/error.hpp"
#include "blr/inference/intervals.hpp"
#include "summary_json.hpp"

namespace blr::inference {

nlohmann::json kernel_parameters_json(const Kernel& kernel) {
  nlohmann::json j = nlohmann::json::object();
  const auto names = kernel.parameter_names();
  const Vector values = kernel.parameters();
  for (std::size_t i = 0; i < names.size(); ++i) j[names[i]] = values[static_cast<Index>(i)];
  return j;
}

namespace {

bool single_stationary(const Kernel& k) { return k.is_single() && is_stationary(k.kind()); }

}  // namespace

GpSummary::GpSummary(GpRegressionFit fit, Kernel start, double start_noise_variance)
    : regression_(std::move(fit)),
      start_(std::move(start)),
      start_noise_variance_(start_noise_variance) {}

GpSummary::GpSummary(GpClassificationFit fit, Kernel start)
    : classification_(std::move(fit)), start_(std::move(start)) {}

const Kernel& GpSummary::kernel() const {
  return regression_ ? regression_->kernel : classification_->kernel;
}

double GpSummary::objective() const {
  return regression_ ? regression_->log_marginal_likelihood : classification_->objective;
}

const Vector& GpSummary::gradient() const {
  return regression_ ? regression_->gradient : classification_->gradient;
}

const std::optional<GpLearned>& GpSummary::search() const {
  return regression_ ? regression_->search : classification_->search;
}

LatentBands GpSummary::latent(double level) const {
  check_level(level);
  const GpLatentPrediction f = regression_ ? regression_->fitted() : classification_->fitted();
  LatentBands b{f.mean, f.variance.cwiseMax(0.0).cwiseSqrt(), {}, {}, level};
  IntervalBands i = gaussian_bands(b.mean, b.sd, level);
  b.lower = std::move(i.lower);
  b.upper = std::move(i.upper);
  return b;
}

GpLatentPrediction GpSummary::latent_at(const Matrix& x_new) const {
  const Index d = regression_ ? regression_->x.cols() : classification_->x.cols();
  check(x_new.cols() == d,
        fmt::format("The new inputs have {} columns but the GP was fitted on {}; they must match.",
                    x_new.cols(), d));
  return regression_ ? regression_->predict(x_new) : classification_->predict(x_new);
}

PredictiveTable GpSummary::predict(const Matrix& x_new, double level,
                                   const PredictiveOptions& options) const {
  check_level(level);
  const auto [m, v] = latent_at(x_new);
  if (regression_) {
    return predictive_table(Likelihood::gaussian, Vector::Ones(1), m, v, Vector(),
                            regression_->noise_variance, level);
  }
  const Vector probability = predict_latent(Likelihood::logistic, m, v, Vector(), options).mean;
  return predictive_table(Likelihood::logistic, Vector::Ones(1), m, v, probability, 0.0, level);
}

TestMetrics GpSummary::score(const Matrix& x_test, const Vector& y_test,
                             const PredictiveOptions& options) const {
  const auto [m, v] = latent_at(x_test);
  if (regression_) {  // y* ~ N(m*, v* + σₙ²)
    const auto p = predict_latent(Likelihood::gaussian, m, v, y_test, {},
                                  1.0 / regression_->noise_variance);
    return test_metrics(Likelihood::gaussian, p, y_test);
  }
  const auto p = predict_latent(Likelihood::logistic, m, v, y_test, options);
  return test_metrics(Likelihood::logistic, p, y_test);
}

std::string GpSummary::table(double level) const {
  const LatentBands b = latent(level);
  const bool cvi = classification_ && classification_->method == GpcMethod::cvi;
  std::string out = fmt::format(
      "Gaussian process {}, {}\nKernel: {}{}\n",
      regression_ ? "regression (exact)" : "classification",
      regression_ ? "y − ȳ ~ GP(0, k) + N(0, σₙ²)" : cvi ? "CVI" : "Laplace (GPML Alg. 3.1)",
      kernel().describe(),
      regression_ ? fmt::format(", σₙ² = {:.6g}, ȳ = {:.6g}", regression_->noise_variance,
                                regression_->y_mean)
                  : std::string());
  out += fmt::format("Observations: {}   {}: {:.4f}\n", b.mean.size(),
                     cvi ? "ELBO" : "Log marginal likelihood", objective());
  out += fmt::format("Gradient in the log hyperparameters ({}{}): ({:.4g})\n",
                     fmt::join(kernel().parameter_names(), ", "),
                     regression_ ? ", noise_variance" : "",
                     fmt::join(gradient().data(), gradient().data() + gradient().size(), ", "));
  if (search()) {
    const auto& h = *search();
    out += fmt::format("Hyperparameters learned by L-BFGS from {}: {} iterations, {} evaluations, "
                       "converged: {}\n",
                       start_.describe(), h.iterations, h.evaluations, h.converged ? "yes" : "no");
  }
  out += fmt::format("Latent f at the training inputs: mean in [{:.4g}, {:.4g}], sd in [{:.4g}, "
                     "{:.4g}] ({} intervals at {:g})\n",
                     b.mean.minCoeff(), b.mean.maxCoeff(), b.sd.minCoeff(), b.sd.maxCoeff(),
                     "equal-tailed", level);
  return out;
}

nlohmann::json GpSummary::to_json(double level) const {
  const LatentBands b = latent(level);
  const Kernel& k = kernel();
  nlohmann::json j{{"kernel", start_.expression()},
                   {"kernel_parameters", kernel_parameters_json(k)},
                   {"hyperparameter_gradient", summary_json::vector(gradient())},
                   {"level", level},
                   {"mean", summary_json::vector(b.mean)},
                   {"sd", summary_json::vector(b.sd)},
                   {"lower", summary_json::vector(b.lower)},
                   {"upper", summary_json::vector(b.upper)}};
  if (single_stationary(k)) {
    j["lengthscale"] = k.lengthscale();
    j["variance"] = k.variance();
  }
  if (search()) {
    const auto& h = *search();
    nlohmann::json s{{"initial_kernel", kernel_parameters_json(start_)},
                     {"initial_objective", h.initial_value},
                     {"iterations", h.iterations},
                     {"evaluations", h.evaluations},
                     {"gradient", summary_json::vector(h.gradient)},
                     {"converged", h.converged}};
    if (single_stationary(start_)) {
      s["initial_lengthscale"] = start_.lengthscale();
      s["initial_variance"] = start_.variance();
    }
    if (regression_) s["initial_noise_variance"] = start_noise_variance_;
    j["hyperparameter_search"] = s;
  }
  if (regression_) {
    j.update({{"method", "exact"},
              {"noise_variance", regression_->noise_variance},
              {"y_mean", regression_->y_mean},
              {"log_marginal_likelihood", regression_->log_marginal_likelihood},
              {"iterations", 1},
              {"converged", true}});
  } else {
    const auto& c = *classification_;
    const bool laplace = c.method == GpcMethod::laplace;
    j.update({{"method", laplace ? "laplace" : "cvi"},
              {laplace ? "log_marginal_likelihood" : "elbo", c.objective},
              {"iterations", c.iterations},
              {"converged", c.converged}});
  }
  return j;
}

}  // namespace blr::inference
