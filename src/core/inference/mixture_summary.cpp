// The summary of a Gaussian-mixture fit (mixture_summary.hpp).
#include "blr/inference/mixture_summary.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/core/option_table.hpp"
#include "summary_json.hpp"

namespace blr::inference {
namespace {

/// weights, means (one array per component) and covariances (arrays of rows) of a mixture.
nlohmann::json mixture_json(const GaussianMixture& g) {
  nlohmann::json means = nlohmann::json::array(), covs = nlohmann::json::array();
  for (Index c = 0; c < g.components(); ++c) {
    means.push_back(summary_json::vector(g.means.row(c).transpose()));
    covs.push_back(summary_json::matrix(g.covariances[static_cast<std::size_t>(c)]));
  }
  return {{"weights", summary_json::vector(g.weights)}, {"means", means}, {"covariances", covs}};
}

void check_columns(const GaussianMixture& g, const Matrix& x) {
  check(x.cols() == g.dimension(),
        fmt::format("The rows have {} columns but the mixture was fitted on {}; they must match.",
                    x.cols(), g.dimension()));
}

}  // namespace

Index MixtureSummary::parameters() const {
  const Index k = mixture_.components(), d = mixture_.dimension();
  const Index covariance = mixture_.type == CovarianceType::full ? d * (d + 1) / 2 : d;
  return (k - 1) + k * d + k * covariance;
}

double MixtureSummary::aic() const {
  if (method_ != "em") return NAN;
  return 2.0 * static_cast<double>(parameters()) - 2.0 * log_likelihood_;
}

double MixtureSummary::bic() const {
  if (method_ != "em") return NAN;
  return static_cast<double>(parameters()) * std::log(static_cast<double>(observations_)) -
         2.0 * log_likelihood_;
}

Matrix MixtureSummary::predict_proba(const Matrix& x) const {
  check_columns(mixture_, x);
  const Matrix joint = mixture_.log_joint(x);
  const Vector norm = log_sum_exp_rows(joint);
  return (joint.colwise() - norm).array().exp().matrix();
}

std::vector<int> MixtureSummary::predict(const Matrix& x) const {
  check_columns(mixture_, x);
  const Matrix joint = mixture_.log_joint(x);
  std::vector<int> out(static_cast<std::size_t>(x.rows()));
  for (Index i = 0; i < x.rows(); ++i) {
    Index best = 0;
    joint.row(i).maxCoeff(&best);
    out[static_cast<std::size_t>(i)] = static_cast<int>(best);
  }
  return out;
}

Vector MixtureSummary::log_density(const Matrix& x) const {
  check_columns(mixture_, x);
  return log_sum_exp_rows(mixture_.log_joint(x));
}

std::string MixtureSummary::components_table(const std::vector<std::string>& columns) const {
  const Index k = mixture_.components(), d = mixture_.dimension();
  std::vector<std::string> names = columns;
  check(names.empty() || static_cast<Index>(names.size()) == d,
        fmt::format("The summary was given {} column names but the mixture has {} columns.",
                    names.size(), d));
  if (names.empty())
    for (Index q = 0; q < d; ++q) names.push_back(fmt::format("x{}", q));
  std::string out =
      fmt::format("{:>9}  {:>8}  {}\n", "component", "weight", "mean (sd) per column");
  for (Index c = 0; c < k; ++c) {
    std::string row;
    for (Index q = 0; q < d; ++q) {
      row += fmt::format("  {}: {:.5g} ({:.4g})", names[static_cast<std::size_t>(q)],
                         mixture_.means(c, q),
                         std::sqrt(mixture_.covariances[static_cast<std::size_t>(c)](q, q)));
    }
    out += fmt::format("{:>9}  {:>8.4f}{}\n", c + 1, mixture_.weights[c], row);
  }
  return out;
}

std::string MixtureSummary::table(const std::vector<std::string>& columns) const {
  std::string out = fmt::format("Gaussian mixture, {} ({} components, {} covariances)\n",
                                method_ == "em" ? "EM" : method_, mixture_.components(),
                                mixture_.type == CovarianceType::full ? "full" : "diagonal");
  out += fmt::format("Observations: {}   Parameters: {}   Iterations: {}   Converged: {}\n",
                     observations_, parameters(), iterations_,
                     method_ == "svi" ? "fixed count"
                     : converged_     ? "yes"
                                      : "no");
  out += fmt::format("Log-likelihood: {:.4f}", log_likelihood_);
  if (method_ == "em") out += fmt::format("   AIC: {:.3f}   BIC: {:.3f}", aic(), bic());
  if (elbo_) out += fmt::format("   ELBO: {:.4f}", *elbo_);
  return out + "\n" + components_table(columns);
}

nlohmann::json MixtureSummary::to_json() const {
  nlohmann::json j = mixture_json(mixture_);
  nlohmann::json statistics{{"observations", observations_},
                            {"parameters", parameters()},
                            {"log_likelihood", log_likelihood_}};
  j.update({{"method", method_},
            {"components", mixture_.components()},
            {"covariance", mixture_.type == CovarianceType::full ? "full" : "diag"},
            {"observations", observations_},
            {"iterations", iterations_},
            {"converged", converged_}});
  if (method_ == "em") {
    statistics.update({{"aic", aic()}, {"bic", bic()}});
    j.update({{"log_likelihood", log_likelihood_},
              {"initial", mixture_json(*initial_)},
              {"stopping",
               {{"tolerance", em_.tolerance},
                {"parameter_tolerance", em_.parameter_tolerance},
                {"max_iterations", em_.max_iterations},
                {"fixed_iterations", em_.fixed_iterations}}}});
  } else {
    j["elbo"] = *elbo_;
  }
  if (method_ == "svi") j["note"] = "SVI runs a fixed number of minibatch steps (--iterations).";
  j["fit_statistics"] = statistics;
  return j;
}

MixtureSummary fit_mixture(const Matrix& x, const MixtureRequest& r) {
  check(r.method == "em" || r.method == "vmp" || r.method == "svi",
        fmt::format("Option '{}' for a Gaussian mixture must be em, vmp or svi; got '{}'.",
                    spelled("method"), r.method));
  const int k = r.em.components;
  check(k >= 1, fmt::format("Option '{}' must be at least 1; got {}.", spelled("components"), k));
  check(k <= x.rows(), fmt::format("Option '{}' ({}) exceeds the number of data rows ({}).",
                                   spelled("components"), k, x.rows()));
  check(r.em.covariance == CovarianceType::full || r.method == "em",
        fmt::format("Methods vmp and svi use Normal–Wishart components: {} full.",
                    spelled("covariance")));
  MixtureSummary s;
  s.method_ = r.method;
  s.observations_ = x.rows();
  s.em_ = r.em;
  if (r.method == "em") {
    EmResult e = em(x, r.em);
    s.mixture_ = std::move(e.mixture);
    s.initial_ = std::move(e.initial);
    s.responsibilities_ = std::move(e.responsibilities);
    s.log_likelihood_ = e.log_likelihood;
    s.iterations_ = e.iterations;
    s.converged_ = e.converged;
    return s;
  }
  BayesGmmResult b = r.method == "vmp" ? bayes_gmm_vmp(x, k, r.prior, r.vmp, r.em.seed)
                                       : bayes_gmm_svi(x, k, r.prior, r.svi);
  s.mixture_.type = CovarianceType::full;
  s.mixture_.weights = b.q.expected_weights();
  s.mixture_.means.resize(k, x.cols());
  for (Index c = 0; c < k; ++c) {
    s.mixture_.means.row(c) = b.q.mean(c).transpose();
    s.mixture_.covariances.push_back(b.q.expected_covariance(c));
  }
  s.elbo_ = b.elbo;
  s.iterations_ = b.iterations;
  s.converged_ = r.method == "vmp" && b.converged;
  s.responsibilities_ = std::move(b.responsibilities);
  s.log_likelihood_ = s.mixture_.log_likelihood(x);
  return s;
}

void apply_options(MixtureRequest& request, const GivenOptions& given) {
  if (request.method == "em") {
    given.apply(EmOptions::table(), request.em);
  } else if (request.method == "vmp") {
    given.apply(EmOptions::table(), request.em,
                KeySelection::only_these({"components", "covariance", "seed"}));
    given.apply(VmpOptions::table(), request.vmp);
  } else {
    given.apply(EmOptions::table(), request.em,
                KeySelection::only_these({"components", "covariance"}));
    given.apply(SviOptions::table(), request.svi);
  }
}

}  // namespace blr::inference
