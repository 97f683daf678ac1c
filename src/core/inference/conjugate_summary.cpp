// The posterior summary of a conjugate model (conjugate_summary.hpp).
#include "blr/inference/conjugate_summary.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "blr/core/error.hpp"
#include "blr/inference/conjugate.hpp"
#include "summary_json.hpp"

namespace blr::inference {
namespace {

using Law = ParameterMarginal::Law;

const char* law_name(Law law) {
  switch (law) {
    case Law::beta:
      return "beta";
    case Law::gamma:
      return "gamma";
    case Law::student_t:
      return "student-t";
    case Law::normal:
      return "normal";
  }
  return "";
}

/// The prior's numbers, or `fallback` when none were given; throws unless there are `count`.
std::vector<double> prior_or(const ConjugateProblem& p, std::vector<double> fallback,
                             std::size_t count, const char* what) {
  std::vector<double> prior = p.prior.empty() ? std::move(fallback) : p.prior;
  check(prior.size() == count, fmt::format("The prior for {} needs {} numbers ({}); got {}.",
                                           p.likelihood, count, what, prior.size()));
  return prior;
}

/// The observations as integers, each one of 0..limit−1 (a Bernoulli outcome or a class index).
std::vector<int> indices(const ConjugateProblem& p, int limit, const char* what) {
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(p.y.size()));
  for (Index i = 0; i < p.y.size(); ++i) {
    const double v = p.y[i];
    check(v >= 0 && v < limit && v == std::floor(v),
          fmt::format("Observation {} of the {} data is {}; each must be {}.", i, p.likelihood, v,
                      what));
    out.push_back(static_cast<int>(v));
  }
  return out;
}

std::vector<double> reals(const ConjugateProblem& p, bool counts) {
  for (Index i = 0; i < p.y.size(); ++i) {
    const double v = p.y[i];
    check(std::isfinite(v) && (!counts || (v >= 0 && v == std::floor(v))),
          fmt::format("Observation {} of the {} data is {}; each must be {}.", i, p.likelihood, v,
                      counts ? "a non-negative whole count" : "finite"));
  }
  return {p.y.data(), p.y.data() + p.y.size()};
}

ParameterMarginal marginal(std::string name, Law law, std::array<double, 3> parameters, double mean,
                           double sd) {
  return {std::move(name), law, parameters, mean, sd};
}

}  // namespace

Interval ParameterMarginal::interval(double level) const {
  const auto& q = parameters;
  switch (law) {
    case Law::beta:
      return beta_interval(q[0], q[1], level);
    case Law::gamma:
      return gamma_interval(q[0], q[1], level);
    case Law::student_t:
      return student_t_interval(q[0], q[1], q[2], level);
    case Law::normal:
      return gaussian_interval(q[0], q[1], level);
  }
  return {};
}

std::vector<std::string> ConjugateSummary::names() const {
  std::vector<std::string> out;
  for (const auto& m : marginals_) out.push_back(m.name);
  return out;
}

CoefficientTable ConjugateSummary::parameters(double level) const {
  check_level(level);
  const auto k = static_cast<Index>(marginals_.size());
  CoefficientTable t;
  t.names = names();
  t.level = level;
  t.mean.resize(k);
  t.sd.resize(k);
  t.lower.resize(k);
  t.upper.resize(k);
  std::set<std::string> laws;
  for (Index j = 0; j < k; ++j) {
    const auto& m = marginals_[static_cast<std::size_t>(j)];
    const Interval ci = m.interval(level);
    t.mean[j] = m.mean;
    t.sd[j] = m.sd;
    t.lower[j] = ci.lower;
    t.upper[j] = ci.upper;
    laws.insert(law_name(m.law));
  }
  for (const auto& l : laws) t.distribution += (t.distribution.empty() ? "" : ",") + l;
  return t;
}

std::string ConjugateSummary::table(double level) const {
  const CoefficientTable c = parameters(level);
  std::size_t width = 12;
  for (const auto& n : c.names) width = std::max(width, n.size() + 1);
  const std::size_t rule_width = width + 4 * 12;
  const std::string rule(rule_width, '='), thin(rule_width, '-');
  std::string out =
      fmt::format("Conjugate {} model, {} posterior\n{}\n", likelihood_,
                  method_ == "exact" ? std::string("exact") : method_ + " (mean-field)", rule);
  const auto line = [&](const std::string& l, const std::string& lv, const std::string& r,
                        const std::string& rv) {
    out += fmt::format("{:<16}{:>12}     {:<20}{:>14}\n", l, lv, r, rv);
  };
  line("Observations:", std::to_string(observations_), log_evidence_ ? "Log evidence:" : "ELBO:",
       fmt::format("{:.4f}", log_evidence_ ? *log_evidence_ : elbo_.value_or(NAN)));
  line("Iterations:", std::to_string(iterations_), "Converged:",
       method_ == "svi" ? "fixed count"
       : converged_     ? "yes"
                        : "no");
  out += "Posterior:      " + description_ + '\n';
  out += rule + '\n';
  out += fmt::format("{:<{}}{:>12}{:>12}{:>12}{:>12}\n", "", width, "mean", "sd",
                     summary_json::tail_heading((1 - level) / 2),
                     summary_json::tail_heading((1 + level) / 2));
  out += thin + '\n';
  for (std::size_t j = 0; j < c.names.size(); ++j) {
    const auto k = static_cast<Index>(j);
    out += fmt::format("{:<{}}{:>12.5g}{:>12.5g}{:>12.5g}{:>12.5g}\n", c.names[j], width, c.mean[k],
                       c.sd[k], c.lower[k], c.upper[k]);
  }
  out += rule + '\n';
  return out;
}

nlohmann::json ConjugateSummary::to_json(double level) const {
  const CoefficientTable c = parameters(level);
  nlohmann::json j{{"method", method_},
                   {"likelihood", likelihood_},
                   {"observations", observations_},
                   {"names", c.names},
                   {"level", level},
                   {"mean", summary_json::vector(c.mean)},
                   {"sd", summary_json::vector(c.sd)},
                   {"lower", summary_json::vector(c.lower)},
                   {"upper", summary_json::vector(c.upper)},
                   {"distribution", c.distribution},
                   {"posterior", posterior_},
                   {"iterations", iterations_},
                   {"converged", converged_}};
  if (log_evidence_) j["log_evidence"] = *log_evidence_;
  if (elbo_) j["elbo"] = *elbo_;
  if (correlation_) j["correlation"] = summary_json::matrix(*correlation_);
  if (!classes_.empty()) j["classes"] = classes_;
  if (method_ == "svi") j["note"] = "SVI runs a fixed number of minibatch steps (--iterations).";
  return j;
}

ConjugateSummary fit_conjugate(const ConjugateProblem& p) {
  const std::string& lik = p.likelihood;
  check(lik == "bernoulli" || lik == "poisson" || lik == "normal" || lik == "categorical",
        fmt::format("A conjugate model's likelihood must be bernoulli, poisson, normal or "
                    "categorical; got '{}'.",
                    lik));
  check(p.method == "exact" || (lik == "normal" && (p.method == "vmp" || p.method == "svi")),
        fmt::format("Method '{}' does not apply to the {} model; it takes {}.", p.method, lik,
                    lik == "normal" ? "exact, vmp or svi" : "exact"));
  ConjugateSummary s;
  s.likelihood_ = lik;
  s.method_ = p.method;
  s.observations_ = p.y.size();
  if (lik == "bernoulli") {
    const auto prior = prior_or(p, {1, 1}, 2, "a,b of Beta(a, b)");
    const std::vector<int> data = indices(p, 2, "0 or 1");
    const BetaBernoulli m{prior[0], prior[1]};
    const Vector post = conjugate_posterior(m, data, m.prior_natural());
    const double a = m.a(post), b = m.b(post);
    s.marginals_ = {
        marginal("theta", Law::beta, {a, b, 0}, m.mean(post), std::sqrt(m.variance(post)))};
    s.log_evidence_ = conjugate_log_evidence(m, data, post);
    s.posterior_ = {{"a", a}, {"b", b}};
    s.description_ = fmt::format("Beta({:.6g}, {:.6g})", a, b);
  } else if (lik == "poisson") {
    const auto prior = prior_or(p, {1, 1}, 2, "shape,rate of the Gamma prior");
    const std::vector<double> data = reals(p, true);
    const GammaPoisson m{prior[0], prior[1]};
    const Vector post = conjugate_posterior(m, data, m.prior_natural());
    s.marginals_ = {marginal("rate", Law::gamma, {m.a(post), m.b(post), 0}, m.mean(post),
                             std::sqrt(m.variance(post)))};
    s.log_evidence_ = conjugate_log_evidence(m, data, post);
    s.posterior_ = {{"shape", m.a(post)}, {"rate", m.b(post)}};
    s.description_ = fmt::format("Gamma({:.6g}, rate {:.6g})", m.a(post), m.b(post));
  } else if (lik == "categorical") {
    check(!p.classes.empty(),
          "The categorical model needs the names of its classes (one per class index).");
    const auto k = p.classes.size();
    const auto prior = prior_or(p, std::vector<double>(k, 1.0), k, "one concentration per class");
    const std::vector<int> data =
        indices(p, static_cast<int>(k), "a class index below the number of classes");
    const DirichletCategorical m{Eigen::Map<const Vector>(prior.data(), static_cast<Index>(k))};
    const Vector post = conjugate_posterior(m, data, m.prior_natural());
    const Vector alpha = m.alpha(post);
    const double a0 = alpha.sum();
    const Vector mean = alpha / a0;
    const Vector sd = (alpha.array() * (a0 - alpha.array()) / (a0 * a0 * (a0 + 1))).sqrt();
    for (std::size_t c = 0; c < k; ++c) {
      const auto i = static_cast<Index>(c);
      s.marginals_.push_back(
          marginal(p.classes[c], Law::beta, {alpha[i], a0 - alpha[i], 0}, mean[i], sd[i]));
    }
    const Matrix cov =
        (a0 * Matrix(alpha.asDiagonal()) - alpha * alpha.transpose()) / (a0 * a0 * (a0 + 1));
    s.correlation_ = correlation(cov);
    s.log_evidence_ = conjugate_log_evidence(m, data, post);
    s.posterior_ = {{"alpha", summary_json::vector(alpha)}};
    s.classes_ = p.classes;
    s.description_ = fmt::format("Dirichlet over {} classes, α₀ = {:.6g}", k, a0);
  } else if (p.method == "exact") {  // normal
    const auto prior =
        prior_or(p, {0, 1, 1, 1}, 4, "mu0,kappa0,alpha0,beta0 of the Normal–Gamma prior");
    const std::vector<double> data = reals(p, false);
    const NormalGamma m{prior[0], prior[1], prior[2], prior[3]};
    const Vector post = conjugate_posterior(m, data, m.prior_natural());
    const auto q = NormalGamma::params(post);
    const double mu_sd = q.alpha > 1 ? std::sqrt(q.beta / ((q.alpha - 1) * q.kappa)) : INFINITY;
    s.marginals_ = {
        marginal("mu", Law::student_t, {2 * q.alpha, q.mu, std::sqrt(q.beta / (q.alpha * q.kappa))},
                 q.mu, mu_sd),
        marginal("tau", Law::gamma, {q.alpha, q.beta, 0}, q.alpha / q.beta,
                 std::sqrt(q.alpha) / q.beta)};
    s.correlation_ = Matrix::Identity(2, 2);
    s.log_evidence_ = conjugate_log_evidence(m, data, post);
    s.posterior_ = {{"mu", q.mu}, {"kappa", q.kappa}, {"alpha", q.alpha}, {"beta", q.beta}};
    s.description_ = fmt::format("NG(μ = {:.6g}, κ = {:.6g}, α = {:.6g}, β = {:.6g})", q.mu,
                                 q.kappa, q.alpha, q.beta);
  } else {  // normal, mean field
    const auto prior =
        prior_or(p, {0, 1, 1, 1}, 4, "mu0,kappa0,alpha0,beta0 of the Normal–Gamma prior");
    reals(p, false);
    const NormalGammaPrior np{prior[0], prior[1], prior[2], prior[3]};
    const NormalGammaResult r =
        p.method == "vmp" ? normal_gamma_vmp(np, p.y, p.vmp) : normal_gamma_svi(np, p.y, p.svi);
    const double a = r.q.shape(), b = r.q.rate();
    const double mu_sd = std::sqrt(r.q.mean_variance());
    s.marginals_ = {marginal("mu", Law::normal, {r.q.mean(), mu_sd, 0}, r.q.mean(), mu_sd),
                    marginal("tau", Law::gamma, {a, b, 0}, a / b, std::sqrt(a) / b)};
    s.correlation_ = Matrix::Identity(2, 2);
    s.elbo_ = r.elbo;
    s.iterations_ = r.iterations;
    s.converged_ = p.method == "vmp" && r.converged;
    s.posterior_ = {{"mu_mean", r.q.mean()},
                    {"mu_var", r.q.mean_variance()},
                    {"tau_shape", a},
                    {"tau_rate", b}};
    s.description_ = fmt::format("q(μ) = N({:.6g}, {:.6g}), q(τ) = Gamma({:.6g}, rate {:.6g})",
                                 r.q.mean(), r.q.mean_variance(), a, b);
  }
  return s;
}

void apply_options(ConjugateProblem& problem, const GivenOptions& given) {
  if (problem.method == "vmp") given.apply(VmpOptions::table(), problem.vmp);
  if (problem.method == "svi") given.apply(SviOptions::table(), problem.svi);
}

}  // namespace blr::inference
