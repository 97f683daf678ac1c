// `blr infer gmm|conjugate`: EM/VMP/SVI for Gaussian mixtures, and one-step conjugate posteriors
// (with VMP/SVI for the Normal–Gamma model) with exact credible intervals. Kalman:
// infer_kalman.cpp.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>

#include "blr/core/convergence.hpp"
#include "blr/core/error.hpp"
#include "blr/inference/conjugate_summary.hpp"
#include "blr/inference/mixture_summary.hpp"
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

/// --predict: each row's most probable component (numbered from 1, as the components table),
/// the posterior probability of every component (MixtureSummary::predict_proba) and the log
/// density of the mixture, the rows read with the training columns and standardisation.
PredictionTable mixture_predictions(const Options& o, const inference::MixtureSummary& s,
                                    const std::vector<std::string>& cols,
                                    const std::optional<io::Standardizer>& standardizer,
                                    nlohmann::json& dropped) {
  const auto table = handle_missing(o, io::CsvTable::read(o.predict), cols, "predict", dropped);
  Matrix x = table.numeric_columns(cols);
  if (standardizer) x = standardizer->transform(x);
  const Matrix proba = s.predict_proba(x);
  const Vector log_density = s.log_density(x);
  const std::vector<int> best = s.predict(x);
  PredictionTable t;
  for (Index c = 0; c < proba.cols(); ++c) t.columns.push_back(fmt::format("p_{}", c + 1));
  t.columns.push_back("log_density");
  t.columns.push_back("component");
  t.values.resize(x.rows(), proba.cols() + 1);
  t.values << proba, log_density;
  for (Index i = 0; i < x.rows(); ++i) {
    t.lines.push_back(table.line_of(i));
    t.predicted.push_back(std::to_string(best[static_cast<std::size_t>(i)] + 1));
  }
  return t;
}

}  // namespace

nlohmann::json run_gmm(const Options& o, PredictionTable* predictions, InferPlots* plots) {
  inference::MixtureRequest request;
  request.method = resolve_method(o, {"em", "vmp", "svi"});
  nlohmann::json dropped;
  auto raw = read_data(o);
  const auto cols = o.features.empty() ? raw.columns() : split_list(o.features);
  const auto table = handle_missing(o, std::move(raw), cols, "data", dropped);
  Matrix x = table.numeric_columns(cols);
  std::optional<io::Standardizer> standardizer;
  if (o.standardize) {
    standardizer = io::Standardizer::fit(x, cols);
    x = standardizer->transform(x);
  }
  auto& eo = request.em;
  const std::string& method = request.method;
  // The method's table (VMP and SVI take the mixture's shape from EM's: apply_options).
  inference::apply_options(request, o.flags.given());
  check(!(o.flags.given("fixed_iterations") && o.flags.given("max_iterations")),
        "Options '--fixed-iterations' and '--max-iterations' exclude each other: a fixed count "
        "has no limit to stop at.");
  o.flags.require_taken(fmt::format("blr infer gmm --method {}", method));
  if (o.alpha0) request.prior.alpha0 = *o.alpha0;  // otherwise the library's default, 1/K
  const auto s = inference::fit_mixture(x, request);
  const Index k = eo.components;
  // A fixed count (--fixed-iterations) is the stopping rule itself, not a cap.
  if (method == "em" && eo.fixed_iterations == 0) {
    require_converged(s.converged(), "EM", s.iterations(), eo.max_iterations, "iterations",
                      "raise --max-iterations, loosen --tolerance or --parameter-tolerance, or "
                      "ask for a fixed count with --fixed-iterations");
  }
  if (method == "vmp") {
    require_converged(s.converged(), "VMP", s.iterations(), request.vmp.max_iterations, "sweeps",
                      kRaiseCap);
  }
  nlohmann::json j = s.to_json();
  j["columns"] = cols;
  if (!dropped.empty()) j["dropped_rows"] = dropped;
  if (method == "svi") j["batch_size"] = request.svi.batch_size;
  if (method == "em") {
    fmt::print(
        "blr infer gmm — EM (coordinate-wise BLR, ρ = 1) on {}: {} components, {} covariances\n",
        o.data, k, std::get<std::string>(inference::EmOptions::table().get(eo, "covariance")));
    fmt::print("{} iterations{}, converged: {}; log-likelihood {:.9g}\n", s.iterations(),
               eo.fixed_iterations > 0 ? " (fixed)" : "", s.converged() ? "yes" : "no",
               s.log_likelihood());
  } else {
    fmt::print(
        "blr infer gmm — {} for a Bayesian mixture (Dirichlet weights, Normal–Wishart "
        "components) on {}: {} components\n",
        method == "vmp" ? "VMP" : "SVI", o.data, k);
    fmt::print("{} {}, ELBO {:.9g}\n", s.iterations(),
               method == "vmp" ? "sweeps" : "minibatch steps", *s.elbo());
  }
  fmt::print("{}", s.components_table(cols));
  if (!o.predict.empty()) {
    *predictions = mixture_predictions(o, s, cols, standardizer, dropped);
    j["predict"] = {{"file", o.predict},
                    {"rows", predictions->values.rows()},
                    {"columns", predictions->columns}};
    if (!dropped.empty()) j["dropped_rows"] = dropped;
    fmt::print(
        "predicted: the component of each of the {} rows of '{}' (its posterior "
        "probabilities and the mixture's log density) to '{}'\n",
        predictions->values.rows(), o.predict, o.predict_out);
  }
  const auto& g = s.mixture();
  if (plots != nullptr) {
    plots->mixture =
        MixturePlot{cols,
                    x,
                    g.weights,
                    g.means,
                    g.covariances,
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
  }
  inference::apply_options(problem, o.flags.given());
  o.flags.require_taken(fmt::format("blr infer conjugate --likelihood {} --method {}", lik,
                                    problem.method));
  const auto s = inference::fit_conjugate(problem);
  // A non-finite ELBO never converges: the result check names it instead (checked_result).
  if (problem.method == "vmp" && std::isfinite(*s.elbo())) {
    require_converged(s.converged(), "VMP", s.iterations(), problem.vmp.max_iterations,
                      "iterations", kRaiseCap);
  }
  const auto y = problem.y;
  const std::string& method = problem.method;
  if (lik == "bernoulli") {
    fmt::print(
        "blr infer conjugate — Beta–Bernoulli on '{}' ({} observations, {} successes): "
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
