// `blr infer gmm|conjugate`: EM/VMP/SVI for Gaussian mixtures, and one-step conjugate posteriors
// (with VMP/SVI for the Normal–Gamma model) with exact credible intervals. Kalman: infer_kalman.cpp.
#include <fmt/format.h>

#include <cmath>

#include "blr/core/convergence.hpp"
#include "blr/core/error.hpp"
#include "blr/inference/conjugate_summary.hpp"
#include "blr/inference/gmm.hpp"
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
  inference::ConjugateProblem problem;
  problem.likelihood = lik;
  problem.method =
      lik == "normal" ? resolve_method(o, {"exact", "vmp", "svi"}) : resolve_method(o, {"exact"});
  nlohmann::json dropped;
  auto raw = read_data(o);
  const std::string col = series_column(o, raw);
  const auto table = handle_missing(o, std::move(raw), {col}, "data", dropped);
  if (!o.prior.empty()) problem.prior = parse_numbers(o.prior, "prior");
  if (lik == "bernoulli") {
    const auto classes = table.distinct(col, 2);  // stops at a third class
    const std::string positive = o.positive.empty() ? "1" : o.positive;
    const std::vector<std::string> declared =
        o.positive.empty() ? std::vector<std::string>{"0", "1"} : classes;
    check(classes.size() <= 2, fmt::format("Column '{}' must hold at most two classes.", col));
    problem.y = table.binary_labels(col, positive, declared);
  } else if (lik == "poisson") {
    problem.y = table.count_column(col);
  } else if (lik == "categorical") {
    problem.classes = table.distinct(col);
    const auto idx = table.class_labels(col, problem.classes);
    problem.y = Eigen::Map<const Eigen::VectorXi>(idx.data(), static_cast<Index>(idx.size()))
                    .cast<double>();
  } else {
    problem.y = table.numeric_column(col);
    if (o.max_iterations > 0) problem.vmp.max_iterations = o.max_iterations;
    if (o.tolerance > 0) problem.vmp.tolerance = o.tolerance;
    problem.svi.batch_size = o.batch_size;
    problem.svi.iterations = o.iterations;
    problem.svi.seed = o.seed;
  }
  const auto s = inference::fit_conjugate(problem);
  // A non-finite ELBO never converges: the result check names it instead (checked_result).
  if (problem.method == "vmp" && std::isfinite(*s.elbo())) {
    require_converged(s.converged(), "VMP", s.iterations(), problem.vmp.max_iterations,
                      "iterations", kRaiseCap);
  }
  const auto y = problem.y;
  const std::string& method = problem.method;
  if (lik == "bernoulli") {
    fmt::print("blr infer conjugate — Beta–Bernoulli on '{}' ({} observations, {} successes): "
               "posterior {}\n",
               col, y.size(), y.sum(), s.description());
  } else if (lik == "poisson") {
    fmt::print("blr infer conjugate — Gamma–Poisson on '{}' ({} counts): posterior {}\n", col,
               y.size(), s.description());
  } else if (lik == "categorical") {
    fmt::print(
        "blr infer conjugate — Dirichlet–categorical on '{}' ({} observations, {} classes)\n", col,
        y.size(), problem.classes.size());
  } else if (method == "exact") {
    fmt::print("blr infer conjugate — Normal–Gamma on '{}' ({} observations): posterior {}\n", col,
               y.size(), s.description());
  } else {
    fmt::print(
        "blr infer conjugate — Normal–Gamma, mean-field {} on '{}' ({} observations): {} "
        "iterations, ELBO {:.9g}\n",
        method == "vmp" ? "VMP" : "SVI", col, y.size(), s.iterations(), *s.elbo());
  }
  if (method == "exact")
    fmt::print("log evidence {:.12g} (one BLR step with ρ = 1)\n", *s.log_evidence());
  nlohmann::json j = s.to_json(o.level);
  j["column"] = col;
  if (!dropped.empty()) j["dropped_rows"] = dropped;
  const auto c = s.parameters(o.level);
  print_table(c.names, Marginals{c.mean, c.sd, c.lower, c.upper, o.level}, "posterior:");
  return j;
}

}  // namespace blr::cli::infer
