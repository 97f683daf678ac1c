// `blr infer gmm|conjugate`: EM/VMP/SVI for Gaussian mixtures, and one-step conjugate posteriors
// (with VMP/SVI for the Normal–Gamma model) with exact credible intervals. Kalman: infer_kalman.cpp.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "blr/core/convergence.hpp"
#include "blr/core/error.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/gmm.hpp"
#include "blr/inference/intervals.hpp"
#include "blr/inference/vmp.hpp"
#include "infer_common.hpp"

namespace blr::cli::infer {
namespace {

io::CsvTable read_data(const Options& o) {
  check(!o.data.empty(), fmt::format("Model '{}' needs a data file: --data FILE.", o.model));
  return io::CsvTable::read(o.data);
}

std::string series_column(const Options& o, const io::CsvTable& t) {
  const std::string c = o.column.empty() ? t.columns().back() : o.column;
  t.column_index(c);
  return c;
}

/// weights, means (one array per component) and covariances (arrays of rows) of a mixture.
nlohmann::json mixture_json(const inference::GaussianMixture& g) {
  nlohmann::json means = nlohmann::json::array(), covs = nlohmann::json::array();
  for (Index c = 0; c < g.components(); ++c) {
    means.push_back(to_json(Vector(g.means.row(c).transpose())));
    covs.push_back(to_json(g.covariances[static_cast<std::size_t>(c)]));
  }
  return {{"weights", to_json(g.weights)}, {"means", means}, {"covariances", covs}};
}

}  // namespace

nlohmann::json run_gmm(const Options& o, InferPlots* plots) {
  const std::string method = resolve_method(o, {"em", "vmp", "svi"});
  nlohmann::json dropped;
  auto raw = read_data(o);
  const auto cols = o.features.empty() ? raw.columns() : split_list(o.features);
  const auto table = handle_missing(o, std::move(raw), cols, "data", dropped);
  Matrix x = table.numeric_columns(cols);
  if (o.standardize) x = io::Standardizer::fit(x, cols).transform(x);
  check(o.components >= 1,
        fmt::format("Option '--components' must be at least 1; got {}.", o.components));
  check(o.components <= x.rows(),
        fmt::format("Option '--components' ({}) exceeds the number of data rows ({}).",
                    o.components, x.rows()));
  check(o.covariance == "full" || o.covariance == "diag",
        fmt::format("Option '--covariance' must be full or diag; got '{}'.", o.covariance));
  check(o.covariance == "full" || method == "em",
        "Methods vmp and svi use Normal–Wishart components: --covariance full.");
  const Index k = o.components, d = x.cols();
  Vector weights;
  Matrix means(k, d);
  std::vector<Matrix> covs;
  nlohmann::json j{
      {"method", method}, {"columns", cols}, {"components", k}, {"covariance", o.covariance}};
  if (!dropped.empty()) j["dropped_rows"] = dropped;
  if (method == "em") {
    inference::EmOptions eo;
    eo.components = o.components;
    eo.covariance = o.covariance == "full" ? inference::CovarianceType::full
                                           : inference::CovarianceType::diagonal;
    eo.reg_covar = o.reg_covar;
    eo.seed = o.seed;
    if (o.max_iterations > 0) eo.max_iterations = o.max_iterations;
    if (o.tolerance > 0) eo.tolerance = o.tolerance;
    if (o.parameter_tolerance) eo.parameter_tolerance = *o.parameter_tolerance;
    eo.fixed_iterations = o.fixed_iterations.value_or(0);
    const auto r = inference::em(x, eo);
    // A fixed count (--fixed-iterations) is the stopping rule itself, not a cap.
    if (eo.fixed_iterations == 0) {
      require_converged(r.converged, "EM", r.iterations, eo.max_iterations, "iterations",
                        "raise --max-iterations, loosen --tolerance or --parameter-tolerance, or "
                        "ask for a fixed count with --fixed-iterations");
    }
    weights = r.mixture.weights;
    means = r.mixture.means;
    covs = r.mixture.covariances;
    j.update({{"log_likelihood", r.log_likelihood},
              {"iterations", r.iterations},
              {"converged", r.converged},
              {"initial", mixture_json(r.initial)},
              {"stopping",
               {{"tolerance", eo.tolerance},
                {"parameter_tolerance", eo.parameter_tolerance},
                {"max_iterations", eo.max_iterations},
                {"fixed_iterations", eo.fixed_iterations}}}});
    fmt::print(
        "blr infer gmm — EM (coordinate-wise BLR, ρ = 1) on {}: {} components, {} covariances\n",
        o.data, k, o.covariance);
    fmt::print("{} iterations{}, converged: {}; log-likelihood {:.9g}\n", r.iterations,
               eo.fixed_iterations > 0 ? " (fixed)" : "", r.converged ? "yes" : "no",
               r.log_likelihood);
  } else {
    inference::BayesGmmPrior prior;
    if (o.alpha0) prior.alpha0 = *o.alpha0;  // otherwise the library's default, 1/K
    inference::BayesGmmResult r;
    if (method == "vmp") {
      inference::VmpOptions vo;
      if (o.max_iterations > 0) vo.max_iterations = o.max_iterations;
      if (o.tolerance > 0) vo.tolerance = o.tolerance;
      r = inference::bayes_gmm_vmp(x, o.components, prior, vo, o.seed);
      require_converged(r.converged, "VMP", r.iterations, vo.max_iterations, "sweeps", kRaiseCap);
      j["converged"] = r.converged;
    } else {
      inference::SviOptions so;
      so.batch_size = o.batch_size;
      so.iterations = o.iterations;
      so.seed = o.seed;
      r = inference::bayes_gmm_svi(x, o.components, prior, so);
      j["converged"] = false;
      j["note"] = "SVI runs a fixed number of minibatch steps (--iterations).";
      j["batch_size"] = o.batch_size;
    }
    weights = r.q.expected_weights();
    for (Index c = 0; c < k; ++c) {
      means.row(c) = r.q.mean(c).transpose();
      covs.push_back(r.q.expected_covariance(c));
    }
    j.update({{"elbo", r.elbo}, {"iterations", r.iterations}});
    fmt::print(
        "blr infer gmm — {} for a Bayesian mixture (Dirichlet weights, Normal–Wishart "
        "components) on {}: {} components\n",
        method == "vmp" ? "VMP" : "SVI", o.data, k);
    fmt::print("{} {}, ELBO {:.9g}\n", r.iterations, method == "vmp" ? "sweeps" : "minibatch steps",
               r.elbo);
  }
  fmt::print("{:>9}  {:>8}  {}\n", "component", "weight", "mean (sd) per column");
  nlohmann::json jm = nlohmann::json::array(), jc = nlohmann::json::array();
  for (Index c = 0; c < k; ++c) {
    std::string row;
    for (Index q = 0; q < d; ++q)
      row += fmt::format("  {}: {:.5g} ({:.4g})", cols[q], means(c, q), std::sqrt(covs[c](q, q)));
    fmt::print("{:>9}  {:>8.4f}{}\n", c + 1, weights[c], row);
    jm.push_back(to_json(Vector(means.row(c).transpose())));
    jc.push_back(to_json(covs[c]));
  }
  j.update({{"weights", to_json(weights)}, {"means", jm}, {"covariances", jc}});
  if (plots != nullptr) {
    plots->mixture = MixturePlot{
        cols, x, weights, means, covs,
        fmt::format("blr infer gmm — {} on {}: {} components{}", method, o.data, k,
                    o.standardize ? " (standardised columns)" : "")};
  }
  return j;
}

nlohmann::json run_conjugate(const Options& o) {
  const std::string& lik = o.likelihood;
  check(
      lik == "bernoulli" || lik == "poisson" || lik == "normal" || lik == "categorical",
      fmt::format("Model 'conjugate' needs --likelihood bernoulli, poisson, normal or categorical; "
                  "got '{}'.",
                  lik));
  const std::string method =
      lik == "normal" ? resolve_method(o, {"exact", "vmp", "svi"}) : resolve_method(o, {"exact"});
  nlohmann::json dropped;
  auto raw = read_data(o);
  const std::string col = series_column(o, raw);
  const auto table = handle_missing(o, std::move(raw), {col}, "data", dropped);
  std::vector<double> prior =
      o.prior.empty() ? std::vector<double>{} : parse_numbers(o.prior, "prior");
  auto need = [&](std::size_t n, std::vector<double> def, const char* what) {
    if (prior.empty()) prior = std::move(def);
    check(prior.size() == n,
          fmt::format("Option '--prior' for {} needs {} numbers ({}).", lik, n, what));
  };
  nlohmann::json j{{"method", method}, {"likelihood", lik}, {"column", col}};
  if (!dropped.empty()) j["dropped_rows"] = dropped;
  // Marginal intervals: exact quantiles of each posterior (intervals.hpp).
  Vector mean, sd, lower, upper;
  std::optional<Matrix> correlation;
  std::vector<std::string> names;
  if (lik == "bernoulli") {
    need(2, {1, 1}, "a,b of Beta(a, b)");
    const auto classes = table.distinct(col, 2);  // stops at a third class
    const std::string positive = o.positive.empty() ? "1" : o.positive;
    const std::vector<std::string> declared =
        o.positive.empty() ? std::vector<std::string>{"0", "1"} : classes;
    check(classes.size() <= 2, fmt::format("Column '{}' must hold at most two classes.", col));
    const Vector y = table.binary_labels(col, positive, declared);
    std::vector<int> data(y.data(), y.data() + y.size());
    const inference::BetaBernoulli m{prior[0], prior[1]};
    const Vector post = inference::conjugate_posterior(m, data, m.prior_natural());
    const double a = m.a(post), b = m.b(post);
    mean = Vector::Constant(1, m.mean(post));
    sd = Vector::Constant(1, std::sqrt(m.variance(post)));
    const auto ci = inference::beta_interval(a, b, o.level);
    lower = Vector::Constant(1, ci.lower);
    upper = Vector::Constant(1, ci.upper);
    names = {"theta"};
    j.update({{"log_evidence", inference::conjugate_log_evidence(m, data, post)},
              {"posterior", {{"a", a}, {"b", b}}}});
    fmt::print(
        "blr infer conjugate — Beta–Bernoulli on '{}' ({} observations, {} successes): "
        "posterior Beta({:.6g}, {:.6g})\n",
        col, y.size(), y.sum(), a, b);
  } else if (lik == "poisson") {
    need(2, {1, 1}, "shape,rate of the Gamma prior");
    const Vector y = table.count_column(col);
    std::vector<double> data(y.data(), y.data() + y.size());
    const inference::GammaPoisson m{prior[0], prior[1]};
    const Vector post = inference::conjugate_posterior(m, data, m.prior_natural());
    mean = Vector::Constant(1, m.mean(post));
    sd = Vector::Constant(1, std::sqrt(m.variance(post)));
    const auto ci = inference::gamma_interval(m.a(post), m.b(post), o.level);
    lower = Vector::Constant(1, ci.lower);
    upper = Vector::Constant(1, ci.upper);
    names = {"rate"};
    j.update({{"log_evidence", inference::conjugate_log_evidence(m, data, post)},
              {"posterior", {{"shape", m.a(post)}, {"rate", m.b(post)}}}});
    fmt::print(
        "blr infer conjugate — Gamma–Poisson on '{}' ({} counts): posterior Gamma({:.6g}, "
        "rate {:.6g})\n",
        col, y.size(), m.a(post), m.b(post));
  } else if (lik == "categorical") {
    const auto classes = table.distinct(col);
    need(classes.size(), std::vector<double>(classes.size(), 1.0), "one concentration per class");
    const auto idx = table.class_labels(col, classes);
    const inference::DirichletCategorical m{Eigen::Map<Vector>(prior.data(), prior.size())};
    const Vector post = inference::conjugate_posterior(m, idx, m.prior_natural());
    const Vector alpha = m.alpha(post);
    const double a0 = alpha.sum();
    mean = alpha / a0;
    sd = (alpha.array() * (a0 - alpha.array()) / (a0 * a0 * (a0 + 1))).sqrt();
    // Marginals Beta(α_k, α₀ − α_k); Cov = (α₀ diag α − ααᵀ) / (α₀²(α₀ + 1)).
    lower.resize(alpha.size());
    upper.resize(alpha.size());
    for (Index c = 0; c < alpha.size(); ++c) {
      const auto ci = inference::beta_interval(alpha[c], a0 - alpha[c], o.level);
      lower[c] = ci.lower;
      upper[c] = ci.upper;
    }
    const Matrix cov =
        (a0 * Matrix(alpha.asDiagonal()) - alpha * alpha.transpose()) / (a0 * a0 * (a0 + 1));
    correlation = inference::correlation(cov);
    names = classes;
    j.update({{"log_evidence", inference::conjugate_log_evidence(m, idx, post)},
              {"posterior", {{"alpha", to_json(alpha)}}},
              {"classes", classes}});
    fmt::print(
        "blr infer conjugate — Dirichlet–categorical on '{}' ({} observations, {} classes)\n", col,
        idx.size(), classes.size());
  } else {  // normal
    need(4, {0, 1, 1, 1}, "mu0,kappa0,alpha0,beta0 of the Normal–Gamma prior");
    const Vector y = table.numeric_column(col);
    names = {"mu", "tau"};
    if (method == "exact") {
      std::vector<double> data(y.data(), y.data() + y.size());
      const inference::NormalGamma m{prior[0], prior[1], prior[2], prior[3]};
      const Vector post = inference::conjugate_posterior(m, data, m.prior_natural());
      const auto p = inference::NormalGamma::params(post);
      mean = (Vector(2) << p.mu, p.alpha / p.beta).finished();
      sd = (Vector(2) << (p.alpha > 1 ? std::sqrt(p.beta / ((p.alpha - 1) * p.kappa)) : INFINITY),
            std::sqrt(p.alpha) / p.beta)
               .finished();
      // μ ~ t_{2α}(μ_N, β/(ακ)) and τ ~ Gamma(α, β) marginally; uncorrelated (E[μ | τ] = μ_N).
      const auto cm =
          inference::student_t_interval(2 * p.alpha, p.mu, std::sqrt(p.beta / (p.alpha * p.kappa)), o.level);
      const auto ct = inference::gamma_interval(p.alpha, p.beta, o.level);
      lower = (Vector(2) << cm.lower, ct.lower).finished();
      upper = (Vector(2) << cm.upper, ct.upper).finished();
      correlation = Matrix::Identity(2, 2);
      j.update({{"log_evidence", inference::conjugate_log_evidence(m, data, post)},
                {"posterior",
                 {{"mu", p.mu}, {"kappa", p.kappa}, {"alpha", p.alpha}, {"beta", p.beta}}}});
      fmt::print(
          "blr infer conjugate — Normal–Gamma on '{}' ({} observations): posterior NG(μ = {:.6g}, "
          "κ = {:.6g}, α = {:.6g}, β = {:.6g})\n",
          col, y.size(), p.mu, p.kappa, p.alpha, p.beta);
    } else {
      const inference::NormalGammaPrior np{prior[0], prior[1], prior[2], prior[3]};
      inference::NormalGammaResult r;
      if (method == "vmp") {
        inference::VmpOptions vo;
        if (o.max_iterations > 0) vo.max_iterations = o.max_iterations;
        if (o.tolerance > 0) vo.tolerance = o.tolerance;
        r = inference::normal_gamma_vmp(np, y, vo);
        // A non-finite ELBO never converges: the result check names it instead (checked_result).
        if (std::isfinite(r.elbo)) {
          require_converged(r.converged, "VMP", r.iterations, vo.max_iterations, "iterations",
                            kRaiseCap);
        }
        j["converged"] = r.converged;
      } else {
        inference::SviOptions so;
        so.batch_size = o.batch_size;
        so.iterations = o.iterations;
        so.seed = o.seed;
        r = inference::normal_gamma_svi(np, y, so);
        j["converged"] = false;
        j["note"] = "SVI runs a fixed number of minibatch steps (--iterations).";
      }
      const double a = r.q.shape(), b = r.q.rate();
      mean = (Vector(2) << r.q.mean(), a / b).finished();
      sd = (Vector(2) << std::sqrt(r.q.mean_variance()), std::sqrt(a) / b).finished();
      // Mean field: q(μ) = N, q(τ) = Gamma, independent by construction.
      const auto cm = inference::gaussian_interval(mean[0], sd[0], o.level);
      const auto ct = inference::gamma_interval(a, b, o.level);
      lower = (Vector(2) << cm.lower, ct.lower).finished();
      upper = (Vector(2) << cm.upper, ct.upper).finished();
      correlation = Matrix::Identity(2, 2);
      j.update({{"elbo", r.elbo},
                {"iterations", r.iterations},
                {"posterior",
                 {{"mu_mean", r.q.mean()},
                  {"mu_var", r.q.mean_variance()},
                  {"tau_shape", a},
                  {"tau_rate", b}}}});
      fmt::print(
          "blr infer conjugate — Normal–Gamma, mean-field {} on '{}' ({} observations): {} "
          "iterations, ELBO {:.9g}\n",
          method == "vmp" ? "VMP" : "SVI", col, y.size(), r.iterations, r.elbo);
    }
  }
  if (method == "exact") {
    j.update({{"converged", true}, {"iterations", 1}});
    fmt::print("log evidence {:.12g} (one BLR step with ρ = 1)\n", j["log_evidence"].get<double>());
  }
  const Marginals marginals{mean, sd, lower, upper, o.level};
  print_table(names, marginals, "posterior:");
  marginals.to(j);
  j["names"] = names;
  if (correlation) j["correlation"] = to_json(*correlation);
  return j;
}

}  // namespace blr::cli::infer
