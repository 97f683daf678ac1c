// The posterior summary of a Bayesian GLM (issue 31, item 2): one value that holds a fit
// (glm_fit.hpp) with its data and answers what a statistician asks of it, for `blr infer
// linreg|logistic|poisson` and for `blr.infer.glm` alike:
//   coefficients(level)  mean, sd and the equal-tailed interval of every coefficient's marginal:
//                        Gaussian N(m_j, Σ_jj), Student t_ν(m_j, S_jj) with the noise unknown
//                        (the Normal–Gamma posterior), or the mixture Σ_c w_c N(m_cj, Σ_c,jj)
//                        (its moments, and its exact quantiles; intervals.hpp);
//   predict(x, level)    the predictive table of new rows (predictive_table.hpp); with the noise
//                        unknown the exact Student-t predictive t_ν(x*ᵀm, b_N/a_N + x*ᵀSx*);
//                        under a mixture, latents Σ_c w_c N(x*ᵀm_c, x*ᵀΣ_c x*);
//   score(x, y)          accuracy (logistic), mean NLL of the predictive density and RMSE on
//                        held-out rows (glm.hpp's test_metrics; a mixture's density is
//                        Σ_c w_c p_c(y*), summed in log space);
//   statistics()         n, k, log-likelihood at the posterior mean, intercept-only
//                        log-likelihood, pseudo-R², R², AIC, BIC (fit_statistics.hpp);
//   waic()               WAIC, lppd and p_waic of the training data (waic.hpp);
//   table(level)         a statsmodels-like text summary;
//   to_json(level)       every number above, for the CLI's --json and Python's to_dict().
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "blr/core/types.hpp"
#include "blr/inference/fit_statistics.hpp"
#include "blr/inference/glm_fit.hpp"
#include "blr/inference/predictive_table.hpp"
#include "blr/inference/waic.hpp"

namespace blr::inference {

/// Each coefficient's marginal: mean, sd and the interval at `level`.
struct CoefficientTable {
  std::vector<std::string> names;
  Vector mean, sd, lower, upper;
  double level = 0.95;
  std::string distribution;  ///< "normal", "student-t" or "mixture"
};

class GlmSummary {
 public:
  /// The summary of `fit` on its training data (x, y), which it reads for the statistics and
  /// WAIC and does not keep; `names` names the columns of x (default x0, x1, ...). Throws a
  /// sentence when the shapes disagree or a name repeats.
  GlmSummary(const Matrix& x, const Vector& y, GlmFit fit, std::vector<std::string> names = {});

  const GlmFit& fit() const { return fit_; }
  const std::vector<std::string>& names() const { return names_; }
  const FitStatistics& statistics() const { return statistics_; }
  const Waic& waic() const { return waic_; }
  /// True for the Normal–Gamma posterior (noise unknown): Student-t marginals and predictive.
  bool student_t() const { return fit_.dof.has_value(); }

  CoefficientTable coefficients(double level = 0.95) const;
  /// The predictive of the rows of x_new (one column per coefficient); `options` says how a
  /// logistic model's probability E[σ(a*)] is computed.
  PredictiveTable predict(const Matrix& x_new, double level = 0.95,
                          const PredictiveOptions& options = {}) const;
  /// The predictive's metrics on labelled rows (x_test, y_test).
  TestMetrics score(const Matrix& x_test, const Vector& y_test,
                    const PredictiveOptions& options = {}) const;
  std::string table(double level = 0.95) const;
  nlohmann::json to_json(double level = 0.95) const;
  /// The "fit_statistics" object of to_json: statistics() and waic() by name.
  nlohmann::json fit_statistics_json() const;

 private:
  GlmFit fit_;
  std::vector<std::string> names_;
  FitStatistics statistics_;
  Waic waic_;
};

}  // namespace blr::inference
