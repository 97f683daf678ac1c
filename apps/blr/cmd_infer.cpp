// `blr infer <model>`: the probabilistic-inference rows of Table 1 on CSV data — conjugate Bayes,
// Kalman filtering and smoothing, Laplace, EM, VMP, SVI and CVI — all run by the one BLR step.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <optional>

#include "blr/core/error.hpp"
#include "checked_result.hpp"
#include "command.hpp"
#include "json_output.hpp"
#include "infer_common.hpp"

namespace blr::cli::infer {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty() || !out.empty()) out.push_back(cur);
  for (auto& x : out) {
    const auto b = x.find_first_not_of(' '), e = x.find_last_not_of(' ');
    x = b == std::string::npos ? "" : x.substr(b, e - b + 1);
    check(!x.empty(), fmt::format("The list '{}' has an empty entry.", s));
  }
  return out;
}

std::vector<double> parse_numbers(const std::string& s, const std::string& option) {
  std::vector<double> out;
  for (const auto& item : split_list(s))
    out.push_back(io::parse_number(item, "Option '" + option + "'"));
  return out;
}

std::string resolve_method(const Options& o, const std::vector<std::string>& allowed) {
  if (o.method.empty()) return allowed.front();
  for (const auto& m : allowed)
    if (m == o.method) return m;
  std::string list;
  for (std::size_t i = 0; i < allowed.size(); ++i) list += (i ? ", " : "") + allowed[i];
  throw Error(fmt::format("Method '{}' does not apply to model '{}'; use one of: {}.", o.method,
                          o.model, list));
}

int parse_family(const std::string& family) {
  if (family == "gaussian-full") return 0;
  if (family == "gaussian-diag") return -1;
  if (family.rfind("mixture:", 0) == 0) {
    const std::string k = family.substr(8);
    char* end = nullptr;
    const long v = std::strtol(k.c_str(), &end, 10);
    check(!k.empty() && end == k.c_str() + k.size() && v >= 1 && v <= 100,
          fmt::format("Family '{}' needs a number of components between 1 and 100, as in "
                      "mixture:2.",
                      family));
    return static_cast<int>(v);
  }
  throw Error(fmt::format(
      "Option '--family' must be gaussian-full, gaussian-diag or mixture:K; got '{}'.", family));
}

inference::PredictiveMethod predictive_method(const std::string& name) {
  if (name == "quadrature") return inference::PredictiveMethod::quadrature;
  if (name == "monte-carlo") return inference::PredictiveMethod::monte_carlo;
  if (name == "probit") return inference::PredictiveMethod::probit;
  throw Error(fmt::format(
      "Option '--predictive' must be quadrature, monte-carlo or probit; got '{}'.", name));
}

nlohmann::json to_json(const Vector& v) {
  nlohmann::json a = nlohmann::json::array();
  for (Index i = 0; i < v.size(); ++i) a.push_back(v[i]);
  return a;
}

nlohmann::json to_json(const Matrix& m) {
  nlohmann::json a = nlohmann::json::array();
  for (Index i = 0; i < m.rows(); ++i) a.push_back(to_json(Vector(m.row(i).transpose())));
  return a;
}

void print_table(const std::vector<std::string>& names, const Vector& mean, const Vector& sd,
                 const std::string& title) {
  std::size_t width = 9;
  for (const auto& n : names) width = std::max(width, n.size());
  fmt::print("{}\n{:<{}}  {:>12}  {:>12}\n", title, "parameter", width, "mean", "sd");
  for (std::size_t i = 0; i < names.size(); ++i)
    fmt::print("{:<{}}  {:>12.6g}  {:>12.6g}\n", names[i], width, mean[static_cast<Index>(i)],
               sd[static_cast<Index>(i)]);
}

Supervised load_supervised(const Options& o, Response response, bool intercept) {
  check(!o.train.empty(), fmt::format("Model '{}' needs a training file: --train FILE.", o.model));
  const auto train = io::CsvTable::read(o.train);
  const std::string label = o.label.empty() ? train.columns().back() : o.label;
  train.column_index(label);  // names the file and its columns when missing
  std::vector<std::string> features =
      o.features.empty() ? train.columns_except({label}) : split_list(o.features);
  check(!features.empty(),
        fmt::format("File '{}' has no feature columns besides the label '{}'.", o.train, label));
  for (const auto& f : features)
    check(f != label, fmt::format("Column '{}' cannot be both a feature and the label.", f));
  Supervised s;
  Matrix x = train.numeric_columns(features);
  std::optional<io::CsvTable> test;
  Matrix xt;
  if (!o.test.empty()) {
    test = io::CsvTable::read(o.test);
    xt = test->numeric_columns(features);
    test->column_index(label);
    s.has_test = true;
  }
  if (o.standardize) {
    const auto st = io::Standardizer::fit(x, features);
    x = st.transform(x);
    if (s.has_test) xt = st.transform(xt);
  }
  s.names = features;
  if (intercept) {
    x = io::with_intercept(x);
    if (s.has_test) xt = io::with_intercept(xt);
    s.names.insert(s.names.begin(), "(intercept)");
  }
  s.x_train = x;
  s.x_test = xt;
  switch (response) {
    case Response::real:
      s.y_train = train.numeric_column(label);
      if (s.has_test) s.y_test = test->numeric_column(label);
      break;
    case Response::count:
      s.y_train = train.count_column(label);
      if (s.has_test) s.y_test = test->count_column(label);
      break;
    case Response::binary: {
      const auto classes = train.distinct(label, 2);  // stops at a third class
      std::string list;
      for (std::size_t i = 0; i < classes.size(); ++i) list += (i ? ", " : "") + classes[i];
      check(classes.size() == 2,
            fmt::format("The label column '{}' of '{}' must hold exactly two classes; it holds {} "
                        "({}).",
                        label, o.train, classes.size() > 2 ? "more" : std::to_string(classes.size()),
                        classes.size() > 2 ? list + ", ..." : list));
      std::string positive = o.positive;
      if (positive.empty()) {
        const bool zero_one =
            (io::same_label(classes[0], "0") && io::same_label(classes[1], "1")) ||
            (io::same_label(classes[0], "1") && io::same_label(classes[1], "0"));
        check(zero_one, fmt::format("The label column '{}' has classes {}; name the positive one "
                                    "with --positive.",
                                    label, list));
        positive = "1";
      }
      check(io::same_label(classes[0], positive) || io::same_label(classes[1], positive),
            fmt::format("The positive class '{}' is not one of the classes of '{}' ({}).", positive,
                        label, list));
      s.classes = io::same_label(classes[0], positive)
                      ? std::vector<std::string>{classes[1], classes[0]}
                      : std::vector<std::string>{classes[0], classes[1]};
      s.y_train = train.binary_labels(label, positive, classes);
      if (s.has_test) s.y_test = test->binary_labels(label, positive, classes);
      break;
    }
  }
  return s;
}

namespace {

nlohmann::json run_model(const Options& o) {
  nlohmann::json out;
  if (o.model == "linreg" || o.model == "logistic" || o.model == "poisson") {
    out = run_regression(o);
  } else if (o.model == "gpc") {
    out = run_gpc(o);
  } else if (o.model == "gpr") {
    out = run_gpr(o);
  } else if (o.model == "kalman") {
    out = run_kalman(o);
  } else if (o.model == "gmm") {
    out = run_gmm(o);
  } else if (o.model == "conjugate") {
    out = run_conjugate(o);
  } else {
    throw Error(fmt::format("Unknown model '{}'.", o.model));
  }
  return out;
}

int run(const Options& o) {
  HeldStdout tables;  // shown only once the results are known to be finite
  nlohmann::json out = run_model(o);
  require_finite(out, fmt::format("blr infer {}", o.model));
  tables.release();
  out["model"] = o.model;
  if (!o.json.empty()) write_json_text(o.json, out.dump(2));
  return 0;
}

void setup(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "infer",
      "Bayesian inference by the BLR on CSV data: conjugate Bayes, Kalman filter/smoother, "
      "Laplace, EM, VMP, SVI and CVI (Table 1, §5 of Khan & Rue 2023).");
  cmd->add_option("model", o->model,
                  "linreg, logistic, poisson, kalman, gmm, gpc, gpr or conjugate.")
      ->required()
      ->check(CLI::IsMember(
          {"linreg", "logistic", "poisson", "kalman", "gmm", "gpc", "gpr", "conjugate"}));
  cmd->add_option("--method", o->method,
                  "exact, laplace, em, vmp, svi or cvi (default: exact for linreg, kalman, gpr "
                  "and conjugate; laplace for logistic and poisson; em for gmm; cvi for gpc, "
                  "which also takes laplace).")
      ->check(CLI::IsMember({"exact", "laplace", "em", "vmp", "svi", "cvi"}));
  cmd->add_option("--family", o->family,
                  "Posterior family for cvi: gaussian-full, gaussian-diag or mixture:K.")
      ->capture_default_str();
  // data
  cmd->add_option("--train", o->train,
                  "Training CSV (header row) for linreg, logistic, poisson, gpc, gpr.");
  cmd->add_option("--test", o->test, "Test CSV with the same columns: adds accuracy and NLL.");
  cmd->add_option("--data", o->data, "CSV for kalman, gmm and conjugate.");
  cmd->add_option("--label", o->label, "Response column (default: the last column).");
  cmd->add_option("--positive", o->positive,
                  "The positive class of a binary label (default 1 for 0/1 labels).");
  cmd->add_option(
      "--features", o->features,
      "Comma-separated feature columns (default: all but the label); gmm: the columns.");
  cmd->add_option("--column", o->column,
                  "The series column (kalman) or observation column (conjugate).");
  cmd->add_flag("--standardize", o->standardize,
                "Standardise features with training means and population sds.");
  cmd->add_flag("--no-intercept", o->no_intercept, "Do not prepend an intercept column.");
  cmd->add_option("--json", o->json, "Write the results as JSON to this file ('-' = stdout, the table then goes to stderr).");
  // priors and solver
  cmd->add_option("--prior-precision", o->prior_precision,
                  "Gaussian prior precision δ of the weights.")
      ->capture_default_str();
  cmd->add_option("--noise-precision", o->noise_precision, "linreg: known noise precision β.")
      ->capture_default_str();
  cmd->add_flag("--optimize-evidence", o->optimize_evidence,
                "linreg: maximise the evidence over δ and β (MacKay's fixed point).");
  cmd->add_option("--seed", o->seed, "Random seed (k-means++, Monte Carlo, minibatches).")
      ->capture_default_str();
  cmd->add_option("--max-iterations", o->max_iterations,
                  "Iteration limit, a positive integer (default: the method's).");
  cmd->add_option("--tolerance", o->tolerance,
                  "Convergence tolerance, a positive number (default: the method's).");
  cmd->add_option("--rho", o->rho,
                  "BLR step size ρ ∈ (0, 1] (default: 1 for laplace and cvi, 0.1 for mixture VI).");
  cmd->add_option("--predictive", o->predictive, "quadrature, monte-carlo or probit (logistic).")
      ->capture_default_str();
  cmd->add_option("--samples", o->samples, "Monte Carlo samples (predictive, mixture VI).")
      ->capture_default_str();
  cmd->add_option("--quadrature-nodes", o->quadrature_nodes, "Gauss–Hermite nodes.")
      ->capture_default_str();
  // kalman
  cmd->add_option("--model", o->ssm, "kalman: local-level or local-linear-trend.")
      ->capture_default_str();
  cmd->add_option("--obs-var", o->obs_var, "kalman: observation noise variance V.");
  cmd->add_option("--state-var", o->state_var, "kalman: level noise variance W.");
  cmd->add_option("--slope-var", o->slope_var,
                  "kalman: slope noise variance (local-linear-trend).");
  cmd->add_option("--init-mean", o->init_mean,
                  "kalman: prior mean of the first level (default: y₁).");
  cmd->add_option("--init-var", o->init_var, "kalman: prior variance of the first state.")
      ->capture_default_str();
  cmd->add_flag("--fit", o->fit, "kalman: maximum-likelihood noise variances (Nelder–Mead).");
  // gmm
  cmd->add_option("--components", o->components, "gmm: number of components K.")
      ->capture_default_str();
  cmd->add_option("--covariance", o->covariance, "gmm: full or diag.")->capture_default_str();
  cmd->add_option("--batch-size", o->batch_size, "svi: minibatch size.")->capture_default_str();
  cmd->add_option("--iterations", o->iterations, "svi and mixture VI: number of steps.")
      ->capture_default_str();
  cmd->add_option("--reg-covar", o->reg_covar, "em: added to covariance diagonals.")
      ->capture_default_str();
  cmd->add_option("--alpha0", o->alpha0, "vmp/svi: Dirichlet concentration (default 1/K).");
  // gpc
  cmd->add_option("--kernel", o->kernel, "gpc, gpr: kernel (rbf, matern32 or matern52).")
      ->capture_default_str();
  cmd->add_option("--lengthscale", o->lengthscale,
                  "gpc, gpr: kernel length-scale ℓ (the start with --learn-hyperparameters).")
      ->capture_default_str();
  cmd->add_option("--variance", o->variance,
                  "gpc, gpr: kernel signal variance σ² (the start with --learn-hyperparameters).")
      ->capture_default_str();
  cmd->add_option("--noise-variance", o->noise_variance,
                  "gpr: noise variance σₙ² (the start with --learn-hyperparameters).")
      ->capture_default_str();
  cmd->add_flag("--learn-hyperparameters", o->learn_hyperparameters,
                "gpc: learn ℓ and σ² by L-BFGS on the Laplace log marginal likelihood "
                "(--method laplace) or the CVI ELBO (--method cvi, with at least 100 "
                "quadrature nodes); gpr: ℓ, σ² and σₙ² on the exact log marginal likelihood.");
  // conjugate
  cmd->add_option("--likelihood", o->likelihood,
                  "conjugate: bernoulli (Beta prior), poisson (Gamma), normal (Normal–Gamma) or "
                  "categorical (Dirichlet).");
  cmd->add_option("--prior", o->prior,
                  "conjugate: prior hyperparameters — bernoulli a,b; poisson shape,rate; normal "
                  "mu0,kappa0,alpha0,beta0; categorical α₁,…,α_K.");
  cmd->callback([o, &exit_code] { exit_code = run(*o); });
}

BLR_REGISTER_COMMAND("infer", 20, setup);

}  // namespace
}  // namespace blr::cli::infer
