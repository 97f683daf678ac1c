// The posterior summary of a Gaussian-process fit (issue 31, item 2): what `blr infer gpr|gpc`
// prints and writes and what `blr.infer.gp_regression|gp_classification` return, from a fit of
// gp_fit.hpp and the kernel it started from.
//   latent(level)       the latent f at the training inputs, N(m_i, v_i): mean, sd and interval;
//   predict(x, level)   the predictive table of new inputs (predictive_table.hpp): regression
//                       y* = f* + ε, ε ~ N(0, σₙ²), mean, sd, interval; classification
//                       P(y* = 1) = E[σ(f*)] by the options' method, and σ of f*'s interval;
//   to_json(level)      the kernel (its expression, every hyperparameter by name; ℓ and σ² of a
//                       single stationary kernel), σₙ² and ȳ (regression), the log marginal
//                       likelihood (regression, Laplace) or the ELBO (CVI), its gradient in the
//                       log hyperparameters, the hyperparameter search (its start, iterations,
//                       evaluations, gradient, convergence), the final fit's iterations and
//                       convergence, and the latent marginals;
//   table(level)        the same as text.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "blr/core/types.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/gp_fit.hpp"
#include "blr/inference/predictive_table.hpp"

namespace blr::inference {

/// Per-input Gaussian marginals: mean, sd and the interval at `level`.
struct LatentBands {
  Vector mean, sd, lower, upper;
  double level = 0.95;
};

/// The hyperparameters of `kernel` by name (Kernel::parameter_names).
nlohmann::json kernel_parameters_json(const Kernel& kernel);

class GpSummary {
 public:
  /// `start` is the kernel the fit began from (the search's start when it learned), and
  /// `start_noise_variance` its σₙ².
  GpSummary(GpRegressionFit fit, Kernel start, double start_noise_variance);
  GpSummary(GpClassificationFit fit, Kernel start);

  bool classification() const { return classification_.has_value(); }
  const Kernel& kernel() const;
  /// The log marginal likelihood (regression, Laplace) or the ELBO (CVI).
  double objective() const;
  const Vector& gradient() const;
  const std::optional<GpLearned>& search() const;
  const std::optional<GpRegressionFit>& regression() const { return regression_; }
  const std::optional<GpClassificationFit>& classification_fit() const { return classification_; }

  LatentBands latent(double level = 0.95) const;
  /// f* at new inputs.
  GpLatentPrediction latent_at(const Matrix& x_new) const;
  PredictiveTable predict(const Matrix& x_new, double level = 0.95,
                          const PredictiveOptions& options = {}) const;
  /// Accuracy (classification), NLL and RMSE of the predictive on labelled rows.
  TestMetrics score(const Matrix& x_test, const Vector& y_test,
                    const PredictiveOptions& options = {}) const;
  std::string table(double level = 0.95) const;
  nlohmann::json to_json(double level = 0.95) const;

 private:
  std::optional<GpRegressionFit> regression_;
  std::optional<GpClassificationFit> classification_;
  Kernel start_;
  double start_noise_variance_ = 0;
};

}  // namespace blr::inference
