// The posterior summary of a Bayesian GLM (glm_summary.hpp).
#include "blr/inference/glm_summary.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "blr/core/error.hpp"
#include "blr/family/special.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/intervals.hpp"
#include "summary_json.hpp"

namespace blr::inference {
namespace {

using summary_json::tail_heading;
std::string model_title(Likelihood l) {
  switch (l) {
    case Likelihood::gaussian:
      return "linear regression";
    case Likelihood::logistic:
      return "logistic regression";
    case Likelihood::poisson:
      return "Poisson regression";
  }
  return "";
}

/// The latent moments of the rows of x under each component (one column per component).
void mixture_latents(const GlmMixture& m, const Matrix& x, Matrix& mean, Matrix& variance) {
  const Index k = m.weights.size();
  mean.resize(x.rows(), k);
  variance.resize(x.rows(), k);
  for (Index c = 0; c < k; ++c) {
    const auto cs = static_cast<std::size_t>(c);
    mean.col(c) = x * m.means[cs];
    variance.col(c) = row_quadratic_forms(x, m.covariances[cs]);
  }
}

/// The Normal–Gamma posterior of a fit with the noise unknown, for its predictive
/// (conjugate.hpp): S = (b_N/a_N) Λ_N⁻¹, so Λ_N = (b_N/a_N) S⁻¹.
NormalGammaFit normal_gamma(const GlmFit& f) {
  NormalGammaFit g;
  g.mean = f.mean;
  g.scale = *f.scale;
  g.covariance = f.covariance;
  g.dof = *f.dof;
  g.noise_shape = *f.noise_shape;
  g.noise_rate = *f.noise_rate;
  const Index d = f.mean.size();
  g.posterior_precision =
      (g.noise_rate / g.noise_shape) * Eigen::LLT<Matrix>(g.scale).solve(Matrix::Identity(d, d));
  return g;
}

}  // namespace

GlmSummary::GlmSummary(const Matrix& x, const Vector& y, GlmFit fit, std::vector<std::string> names)
    : fit_(std::move(fit)), names_(std::move(names)) {
  const Index d = fit_.mean.size();
  check(x.cols() == d && fit_.covariance.rows() == d && fit_.covariance.cols() == d &&
            y.size() == x.rows(),
        fmt::format("A GLM summary needs a design with one column per coefficient and one "
                    "response per row; got a {}×{} design, {} responses and {} coefficients.",
                    x.rows(), x.cols(), y.size(), d));
  if (names_.empty())
    for (Index j = 0; j < d; ++j) names_.push_back(fmt::format("x{}", j));
  check(static_cast<Index>(names_.size()) == d,
        fmt::format("names has {} entries but X has {} columns; give one name per column.",
                    names_.size(), d));
  check(std::set<std::string>(names_.begin(), names_.end()).size() == names_.size(),
        "The coefficient names repeat; give each column its own name.");
  if (student_t())
    check(fit_.scale && fit_.noise_shape && fit_.noise_rate,
          "A Student-t GLM summary needs the Normal–Gamma posterior's scale, shape and rate.");
  statistics_ = fit_statistics(fit_.likelihood, x, y, fit_.mean);
  const double beta = fit_.noise_precision.value_or(1.0);
  if (fit_.mixture) {
    Matrix m, v;
    mixture_latents(*fit_.mixture, x, m, v);
    waic_ = waic_latent(fit_.likelihood, y, fit_.mixture->weights, m, v, beta);
  } else if (student_t()) {
    waic_ = waic_normal_gamma(x, y, fit_.mean, *fit_.scale, *fit_.noise_shape, *fit_.noise_rate);
  } else {
    waic_ = waic_gaussian_posterior(fit_.likelihood, x, y, fit_.mean, fit_.covariance, beta);
  }
}

CoefficientTable GlmSummary::coefficients(double level) const {
  check_level(level);
  const Index d = fit_.mean.size();
  CoefficientTable t{names_,
                     fit_.mean,
                     fit_.covariance.diagonal().cwiseMax(0.0).cwiseSqrt(),
                     Vector(d),
                     Vector(d),
                     level,
                     fit_.mixture ? "mixture" : student_t() ? "student-t" : "normal"};
  for (Index j = 0; j < d; ++j) {
    Interval ci;
    if (fit_.mixture) {
      // The marginal Σ_c w_c N(m_cj, Σ_c,jj): its exact quantiles.
      const GlmMixture& m = *fit_.mixture;
      const Index k = m.weights.size();
      GaussianMixture1d marginal{m.weights, Vector(k), Vector(k)};
      for (Index c = 0; c < k; ++c) {
        marginal.means[c] = m.means[static_cast<std::size_t>(c)][j];
        marginal.variances[c] = m.covariances[static_cast<std::size_t>(c)](j, j);
      }
      ci = marginal.interval(level);
    } else {
      ci = student_t()
               ? student_t_interval(*fit_.dof, t.mean[j], std::sqrt((*fit_.scale)(j, j)), level)
               : gaussian_interval(t.mean[j], t.sd[j], level);
    }
    t.lower[j] = ci.lower;
    t.upper[j] = ci.upper;
  }
  return t;
}

PredictiveTable GlmSummary::predict(const Matrix& x_new, double level,
                                    const PredictiveOptions& options) const {
  check(x_new.cols() == fit_.mean.size(),
        fmt::format("The inputs to predict have {} columns but the model has {} coefficients; "
                    "give the design's columns in the order it was fitted with.",
                    x_new.cols(), fit_.mean.size()));
  check_level(level);
  if (student_t()) {
    // y* ~ t_ν(x*ᵀm, b_N/a_N + x*ᵀSx*): the exact predictive of the Normal–Gamma posterior.
    const auto p = normal_gamma(fit_).predict(x_new, Vector(), level);
    PredictiveTable t{{"mean", "sd", "lower", "upper"}, Matrix(x_new.rows(), 4)};
    t.values << p.mean, p.sd, p.lower, p.upper;
    return t;
  }
  const double beta = fit_.noise_precision.value_or(1.0);
  if (fit_.mixture) {
    // Each component's latent moments and probability; the mixture's is their weighted sum.
    const GlmMixture& m = *fit_.mixture;
    const Index k = m.weights.size();
    Matrix mean(x_new.rows(), k), variance(x_new.rows(), k);
    Vector probability = Vector::Zero(x_new.rows());
    for (Index c = 0; c < k; ++c) {
      const auto cs = static_cast<std::size_t>(c);
      const Predictive p = inference::predict(fit_.likelihood, m.means[cs], m.covariances[cs],
                                              x_new, Vector(), options, beta);
      mean.col(c) = p.latent_mean;
      variance.col(c) = p.latent_variance;
      probability += m.weights[c] * p.mean;
    }
    return predictive_table(fit_.likelihood, m.weights, mean, variance, probability, 1.0 / beta,
                            level);
  }
  const Predictive p = inference::predict(fit_.likelihood, fit_.mean, fit_.covariance, x_new,
                                          Vector(), options, beta);
  return predictive_table(fit_.likelihood, Vector::Ones(1), p.latent_mean, p.latent_variance,
                          p.mean, 1.0 / beta, level);
}

TestMetrics GlmSummary::score(const Matrix& x_test, const Vector& y_test,
                              const PredictiveOptions& options) const {
  check(x_test.cols() == fit_.mean.size() && x_test.rows() == y_test.size() && y_test.size() > 0,
        fmt::format("Scoring needs test rows with one column per coefficient ({}) and one "
                    "response per row; got a {}×{} design and {} responses.",
                    fit_.mean.size(), x_test.rows(), x_test.cols(), y_test.size()));
  const double beta = fit_.noise_precision.value_or(1.0);
  Predictive p;
  if (student_t()) {
    const auto t = normal_gamma(fit_).predict(x_test, y_test, 0.95);
    p.mean = t.mean;
    p.log_density = t.log_density;
  } else if (fit_.mixture) {
    const GlmMixture& m = *fit_.mixture;
    const Index k = m.weights.size();
    p.mean = Vector::Zero(y_test.size());
    Matrix logs(y_test.size(), k);
    for (Index c = 0; c < k; ++c) {
      const auto cs = static_cast<std::size_t>(c);
      const Predictive pc = inference::predict(fit_.likelihood, m.means[cs], m.covariances[cs],
                                               x_test, y_test, options, beta);
      p.mean += m.weights[c] * pc.mean;
      logs.col(c) = pc.log_density.array() + std::log(m.weights[c]);
    }
    p.log_density.resize(y_test.size());
    for (Index i = 0; i < y_test.size(); ++i)
      p.log_density[i] = log_sum_exp(Vector(logs.row(i).transpose()));
  } else {
    p = inference::predict(fit_.likelihood, fit_.mean, fit_.covariance, x_test, y_test, options,
                           beta);
  }
  return test_metrics(fit_.likelihood, p, y_test);
}

std::string GlmSummary::table(double level) const {
  const CoefficientTable c = coefficients(level);
  const FitStatistics& s = statistics_;
  std::size_t width = 12;
  for (const auto& n : names_) width = std::max(width, n.size() + 1);
  const std::size_t rule_width = width + 4 * 12;
  const std::string rule(rule_width, '='), thin(rule_width, '-');
  const std::string method =
      student_t()    ? "exact (Normal-Gamma)"
      : fit_.mixture ? fmt::format("CVI mixture-of-{}-Gaussians", fit_.mixture->weights.size())
      : fit_.method == "cvi" ? "CVI"
                             : "Laplace";
  std::string out =
      fmt::format("Bayesian {}, {} posterior\n{}\n", model_title(fit_.likelihood), method, rule);
  const auto line = [&](const std::string& l, const std::string& lv, const std::string& r,
                        const std::string& rv) {
    out += fmt::format("{:<16}{:>12}     {:<20}{:>14}\n", l, lv, r, rv);
  };
  line("Observations:", std::to_string(s.observations),
       "Log-likelihood:", fmt::format("{:.4f}", s.log_likelihood));
  line("Coefficients:", std::to_string(s.parameters),
       "Intercept-only LL:", fmt::format("{:.4f}", s.null_log_likelihood));
  line("Iterations:", std::to_string(fit_.iterations),
       std::isnan(s.r_squared) ? "Pseudo R-sq.:" : "R-squared:",
       fmt::format("{:.4f}", std::isnan(s.r_squared) ? s.pseudo_r2 : s.r_squared));
  line("Converged:", fit_.converged ? "yes" : "no", "AIC:", fmt::format("{:.3f}", s.aic));
  const std::string evidence = fit_.log_evidence ? fmt::format("{:.4f}", *fit_.log_evidence)
                               : fit_.elbo       ? fmt::format("{:.4f}", *fit_.elbo)
                                                 : std::string("-");
  line(fit_.elbo && !fit_.log_evidence ? "ELBO:" : "Log evidence:", evidence,
       "BIC:", fmt::format("{:.3f}", s.bic));
  line("Marginals:", c.distribution,
       "WAIC (p_waic):", fmt::format("{:.3f} ({:.2f})", waic_.waic, waic_.p_waic));
  if (fit_.noise_precision && fit_.likelihood == Likelihood::gaussian)
    line(student_t() ? "E[noise prec.]:" : "Noise prec.:",
         fmt::format("{:.4g}", *fit_.noise_precision), "", "");
  out += rule + '\n';
  out += fmt::format("{:<{}}{:>12}{:>12}{:>12}{:>12}\n", "", width, "mean", "sd",
                     tail_heading((1 - level) / 2), tail_heading((1 + level) / 2));
  out += thin + '\n';
  for (std::size_t j = 0; j < names_.size(); ++j) {
    const auto k = static_cast<Index>(j);
    out += fmt::format("{:<{}}{:>12.5g}{:>12.5g}{:>12.5g}{:>12.5g}\n", names_[j], width, c.mean[k],
                       c.sd[k], c.lower[k], c.upper[k]);
  }
  out += rule + '\n';
  for (const auto& a : fit_.assumptions) out += "Assumed: " + a + '\n';
  return out;
}

nlohmann::json GlmSummary::fit_statistics_json() const {
  const FitStatistics& s = statistics_;
  nlohmann::json f{{"observations", s.observations},
                   {"parameters", s.parameters},
                   {"log_likelihood", s.log_likelihood},
                   {"null_log_likelihood", s.null_log_likelihood},
                   {"pseudo_r2", s.pseudo_r2},
                   {"aic", s.aic},
                   {"bic", s.bic},
                   {"waic", waic_.waic},
                   {"lppd", waic_.lppd},
                   {"p_waic", waic_.p_waic}};
  if (!std::isnan(s.r_squared)) f["r_squared"] = s.r_squared;
  return f;
}

nlohmann::json GlmSummary::to_json(double level) const {
  const CoefficientTable c = coefficients(level);
  nlohmann::json j{{"likelihood", to_string(fit_.likelihood)},
                   {"method", student_t() ? std::string("exact") : fit_.method},
                   {"features", names_},
                   {"level", level},
                   {"distribution", c.distribution},
                   {"mean", summary_json::vector(c.mean)},
                   {"sd", summary_json::vector(c.sd)},
                   {"lower", summary_json::vector(c.lower)},
                   {"upper", summary_json::vector(c.upper)},
                   {"covariance", summary_json::matrix(fit_.covariance)},
                   {"correlation", summary_json::matrix(correlation(fit_.covariance))},
                   {"iterations", fit_.iterations},
                   {"converged", fit_.converged},
                   {"assumptions", fit_.assumptions}};
  j["fit_statistics"] = fit_statistics_json();
  if (fit_.log_evidence) j["log_evidence"] = *fit_.log_evidence;
  if (fit_.log_joint) j["log_joint"] = *fit_.log_joint;
  if (fit_.elbo) j["elbo"] = *fit_.elbo;
  if (fit_.noise_precision) j["noise_precision"] = *fit_.noise_precision;
  if (fit_.dof) j["dof"] = *fit_.dof;
  if (fit_.noise_shape) j["noise_shape"] = *fit_.noise_shape;
  if (fit_.noise_rate) j["noise_rate"] = *fit_.noise_rate;
  if (fit_.mixture) {
    const GlmMixture& m = *fit_.mixture;
    nlohmann::json means = nlohmann::json::array(), covariances = nlohmann::json::array();
    for (std::size_t c = 0; c < m.means.size(); ++c) {
      means.push_back(summary_json::vector(m.means[c]));
      covariances.push_back(summary_json::matrix(m.covariances[c]));
    }
    j.update({{"weights", summary_json::vector(m.weights)},
              {"means", means},
              {"covariances", covariances},
              {"elbo_se", m.elbo_se}});
  }
  return j;
}

}  // namespace blr::inference
