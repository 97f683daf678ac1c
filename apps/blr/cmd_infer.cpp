// `blr infer <model>`: the probabilistic-inference rows of Table 1 on CSV data — conjugate Bayes,
// Kalman filtering and smoothing, Laplace, EM, VMP, SVI and CVI — all run by the one BLR step.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <optional>

#include "blr/core/error.hpp"
#include "blr/core/option_table.hpp"
#include "blr/io/design.hpp"
#include "checked_result.hpp"
#include "command.hpp"
#include "infer_common.hpp"
#include "table_flags.hpp"
#include "blr/inference/methods.hpp"
#include "json_output.hpp"

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

nlohmann::json to_json(const Vector& v) {
  nlohmann::json a = nlohmann::json::array();
  a.get_ref<nlohmann::json::array_t&>().reserve(static_cast<std::size_t>(v.size()));
  for (Index i = 0; i < v.size(); ++i) a.push_back(v[i]);
  return a;
}

nlohmann::json to_json(const Matrix& m) {
  nlohmann::json a = nlohmann::json::array();
  a.get_ref<nlohmann::json::array_t&>().reserve(static_cast<std::size_t>(m.rows()));
  for (Index i = 0; i < m.rows(); ++i) a.push_back(to_json(Vector(m.row(i).transpose())));
  return a;
}

Marginals Marginals::gaussian(const Vector& mean, const Vector& sd, double level) {
  inference::IntervalBands i = inference::gaussian_bands(mean, sd, level);
  return {mean, sd, std::move(i.lower), std::move(i.upper), level};
}

void Marginals::to(nlohmann::json& j) const {
  j.update({{"mean", to_json(mean)},
            {"sd", to_json(sd)},
            {"level", level},
            {"lower", to_json(lower)},
            {"upper", to_json(upper)}});
}

std::string lower_heading(double level) {
  return fmt::format("{:g}%", 50 * (1 - level));
}
std::string upper_heading(double level) {
  return fmt::format("{:g}%", 50 * (1 + level));
}

void print_table(const std::vector<std::string>& names, const Marginals& m,
                 const std::string& title) {
  std::size_t width = 9;
  for (const auto& n : names) width = std::max(width, n.size());
  fmt::print("{}\n{:<{}}  {:>12}  {:>12}  {:>12}  {:>12}\n", title, "parameter", width, "mean",
             "sd", lower_heading(m.level), upper_heading(m.level));
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto k = static_cast<Index>(i);
    fmt::print("{:<{}}  {:>12.6g}  {:>12.6g}  {:>12.6g}  {:>12.6g}\n", names[i], width, m.mean[k],
               m.sd[k], m.lower[k], m.upper[k]);
  }
}

io::CsvTable handle_missing(const Options& o, io::CsvTable table,
                            const std::vector<std::string>& used, const std::string& role,
                            nlohmann::json& dropped) {
  const Index before = table.rows();
  io::CsvTable kept = io::apply_missing_policy(std::move(table), used, o.missing);
  if (o.missing == "drop") {
    const Index n = before - kept.rows();
    dropped[role] = n;
    fmt::print(
        "--missing drop: {} of {} rows of '{}' dropped (a missing value in the columns used)\n", n,
        before, kept.source());
  }
  return kept;
}

Supervised load_supervised(const Options& o, Response response, bool intercept) {
  check(!o.train.empty(), fmt::format("Model '{}' needs a training file: --train FILE.", o.model));
  Supervised s;
  // The training file streams in: the numeric features are kept as numbers, the label and the
  // categorical features as text, other columns not at all (a 10⁵ × 51 table: 41 MB, not 142).
  std::string label;
  std::vector<std::string> features, categorical;
  // What each file keeps: the numeric features as numbers, the categorical ones (and the label,
  // in the training and test files) as text.
  const auto kept_columns = [&](bool with_label) {
    io::CsvColumns keep;
    for (const auto& f : features) {
      const bool text = std::find(categorical.begin(), categorical.end(), f) != categorical.end();
      (text ? keep.text : keep.numbers).push_back(f);
    }
    if (with_label) keep.text.push_back(label);
    return keep;
  };
  auto raw_train = io::CsvTable::read(o.train, [&](const std::vector<std::string>& header) {
    features.clear();  // (a column found to hold text makes the reader ask again)
    categorical.clear();
    label = o.label.empty() ? header.back() : o.label;
    check(std::find(header.begin(), header.end(), label) != header.end(),
          fmt::format("File '{}' has no column '{}'; its columns are: {}.", o.train, label,
                      fmt::join(header, ", ")));
    if (o.features.empty()) {
      for (const auto& h : header)
        if (h != label) features.push_back(h);
    } else {
      features = split_list(o.features);
    }
    check(!features.empty(),
          fmt::format("File '{}' has no feature columns besides the label '{}'.", o.train, label));
    for (const auto& f : features)
      check(f != label, fmt::format("Column '{}' cannot be both a feature and the label.", f));
    for (const auto& c : o.categorical)
      for (const auto& name : split_list(c)) {
        check(name != label,
              fmt::format("Column '{}' is the label; --categorical names feature columns.", name));
        categorical.push_back(name);
      }
    return kept_columns(true);
  });
  std::vector<std::string> used = features;
  used.push_back(label);
  const auto train = handle_missing(o, std::move(raw_train), used, "train", s.dropped);
  auto [encoder, x_train] =
      io::DesignEncoder::fit_transform(train, {features, categorical, o.standardize, intercept});
  s.names = encoder.names();
  s.x_train = std::move(x_train);
  for (Index i = 0; i < train.rows(); ++i) s.train_lines.push_back(train.line_of(i));
  for (const auto& v : encoder.dominant_values()) {
    s.warnings.push_back(fmt::format(
        "column '{}', line {} of '{}': the value {:g} swamps the column; standardised, its other "
        "{} rows agree to six digits, so the fit cannot tell them apart by '{}'",
        v.column, train.line_of(v.row), o.train, v.value, train.rows() - 1, v.column));
    std::cerr << fmt::format("blr: warning: {}.\n", s.warnings.back());
  }
  // Test and prediction files stream in the same way.
  const auto columns = [&](bool with_label) {
    return [&, with_label](const std::vector<std::string>&) { return kept_columns(with_label); };
  };
  std::optional<io::CsvTable> test;
  if (!o.test.empty()) {
    test = handle_missing(o, io::CsvTable::read(o.test, columns(true)), used, "test", s.dropped);
    s.x_test = encoder.transform(*test);
    s.has_test = true;
  }
  if (!o.predict.empty()) {
    const auto predict = handle_missing(o, io::CsvTable::read(o.predict, columns(false)), features,
                                        "predict", s.dropped);
    s.x_predict = encoder.transform(predict);
    for (Index i = 0; i < predict.rows(); ++i) s.predict_lines.push_back(predict.line_of(i));
    s.has_predict = true;
  }
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
      check(
          classes.size() == 2,
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

void add_prior_options(CLI::App* cmd, Options& o) {
  cmd->add_option(
      "--prior-precision", o.prior_precision,
      "Gaussian prior precision δ of the coefficients (default 1; linreg with the noise "
      "estimated: in units of the noise precision, w | τ ~ N(0, (δτ)⁻¹)).");
  cmd->add_option("--intercept-prior-precision", o.intercept_prior_precision,
                  fmt::format("Prior precision of the intercept (default {:g}: weak, a prior sd of "
                              "1000, so the intercept is not shrunk towards 0 like the "
                              "coefficients; give δ to treat it like them).",
                              inference::kInterceptPriorPrecision));
  cmd->add_option("--noise-precision", o.noise_precision,
                  "linreg: a known noise precision β (default: the noise is estimated, by the "
                  "exact Normal–Gamma posterior with Student-t coefficients).");
  cmd->add_option("--noise-prior", o.noise_prior,
                  "linreg: Gamma(A, rate B) prior A,B of the unknown noise precision τ (default "
                  "0,0: Jeffreys' p(τ) ∝ 1/τ).");
}

namespace {

bool supervised(const std::string& model) {
  return model == "linreg" || model == "logistic" || model == "poisson" || model == "gpc" ||
         model == "gpr";
}

void check_output_options(const Options& o) {
  inference::check_level(o.level);
  check(o.missing == "error" || o.missing == "drop",
        fmt::format("Option '--missing' must be error or drop; got '{}'.", o.missing));
  check(o.categorical.empty() || supervised(o.model),
        "Option '--categorical' applies to the models with --train (linreg, logistic, poisson, "
        "gpc, gpr).");
  check(o.predict.empty() || supervised(o.model) || o.model == "gmm",
        "Option '--predict' applies to linreg, logistic, poisson, gpc, gpr and gmm.");
  check(!o.forecast || o.model == "kalman", "Option '--forecast' applies only to model 'kalman'.");
  check(o.predict.empty() == o.predict_out.empty(),
        o.predict.empty() ? "Option '--predict-out' needs '--predict FILE' (the inputs to predict)."
                          : "Option '--predict' needs '--predict-out FILE' (where the CSV goes).");
  check(o.predict_out != "-",
        "Option '--predict-out' needs a file name; stdout carries the tables ('-' is not taken).");
  check(o.model_file.empty() || o.model == "kalman",
        "Option '--model-file' applies only to model 'kalman'.");
  check(!o.alpha0 || (o.model == "gmm" && (o.method == "vmp" || o.method == "svi")),
        "Option '--alpha0' applies only to model 'gmm' with method vmp or svi.");
  if (o.alpha0) check_positive("--alpha0", *o.alpha0);
  const bool glm = o.model == "linreg" || o.model == "logistic" || o.model == "poisson";
  check(!o.prior_precision || glm,
        "Option '--prior-precision' applies to models linreg, logistic and poisson.");
  check(!o.intercept_prior_precision || glm,
        "Option '--intercept-prior-precision' applies to models linreg, logistic and poisson.");
  check(!o.optimize_evidence || o.model == "linreg",
        "Option '--optimize-evidence' applies only to linreg with --method exact.");
  check(o.cvi_start.empty() || o.cvi_start == "prior" || o.cvi_start == "laplace",
        fmt::format("Option '--cvi-start' must be prior or laplace; got '{}'.", o.cvi_start));
}

/// The tables whose keys are `blr infer`'s method flags: every method's (with its preset), the
/// predictive's and the GP hyperparameters' search.
std::vector<FlagSource> method_flag_sources() {
  return inference_flag_sources([](const inference::InferenceMethod&) { return true; },
                                {"predictive", "hyperparameters"});
}

ResultDocument run_model(const Options& o, PredictionTable* predictions, InferPlots* plots) {
  if (o.model == "kalman") return run_kalman(o, plots);  // long arrays: kept beside the fields
  nlohmann::json out;
  if (o.model == "linreg" || o.model == "logistic" || o.model == "poisson") {
    out = run_regression(o, predictions);
  } else if (o.model == "gpc") {
    out = run_gpc(o, predictions, plots);
  } else if (o.model == "gpr") {
    out = run_gpr(o, predictions, plots);
  } else if (o.model == "gmm") {
    out = run_gmm(o, predictions, plots);
  } else if (o.model == "conjugate") {
    out = run_conjugate(o);
  } else {
    throw Error(fmt::format("Unknown model '{}'.", o.model));
  }
  return ResultDocument(std::move(out));
}

/// --out DIR: the pictures of infer_plots.hpp (a GLM's forest plot from its results' marginals).
void write_pictures(const Options& o, const nlohmann::json& fields, InferPlots& plots) {
  const bool glm = o.model == "linreg" || o.model == "logistic" || o.model == "poisson";
  if (glm && fields.contains("features") && fields.contains("lower")) {
    const auto vec = [&](const char* key) {
      const auto v = fields.at(key).get<std::vector<double>>();
      return Vector(Eigen::Map<const Vector>(v.data(), static_cast<Index>(v.size())));
    };
    plots.forest =
        ForestPlot{fields.at("features").get<std::vector<std::string>>(),
                   vec("mean"),
                   vec("lower"),
                   vec("upper"),
                   o.level,
                   fmt::format("blr infer {} — {} on {}", o.model,
                               fields.value("method", std::string()), o.train),
                   o.standardize ? " (standardised features)"
                                 : " (each feature on its own scale; --standardize compares them)"};
  }
  if (plots.empty()) {
    fmt::print(stderr, "blr: note: model '{}' has no picture; --out wrote nothing.\n", o.model);
    return;
  }
  const auto drawn = write_infer_plots(o.out, plots, std::cerr);
  if (!drawn.empty()) {
    fmt::print(stderr, "blr: pictures written to {}: {}\n", o.out, fmt::join(drawn, ", "));
  }
}

int run(const Options& o) {
  check_output_options(o);
  HeldStdout tables;                // shown only once the results are known to be finite
  PredictionTable predictions;
  InferPlots plots;
  ResultDocument out = run_model(o, &predictions, o.out.empty() ? nullptr : &plots);
  o.flags.require_taken(fmt::format("blr infer {}", o.model));  // each runner checks before its fit
  require_finite(out, fmt::format("blr infer {}", o.model));
  if (!o.predict.empty()) require_finite_predictions(predictions, o.predict);
  tables.release();
  out.fields["model"] = o.model;
  if (!o.predict.empty()) write_predictions(o.predict_out, predictions);
  if (!o.out.empty()) write_pictures(o, out.fields, plots);
  if (!o.json.empty()) write_json_text(o.json, out.dump());
  return 0;
}

void setup_infer(CLI::App& app, int& exit_code) {
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
  cmd->add_option("--categorical", o->categorical,
                  "Feature columns to one-hot code (repeatable or comma list): levels in sorted "
                  "order, the first the reference, columns named COL=level.")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--missing", o->missing,
                  "error: a missing cell (empty or NA) is an error naming its line and column; "
                  "drop: rows with one are left out and counted (kalman: no update at that step).")
      ->capture_default_str();
  cmd->add_option("--level", o->level,
                  "Credible level of every interval, in (0, 1) (equal-tailed; exact quantiles of "
                  "each posterior).")
      ->capture_default_str();
  cmd->add_option(
      "--predict", o->predict,
      "CSV of inputs without labels (the feature columns): writes the predictive of "
      "every row to --predict-out (linreg, logistic, poisson, gpc, gpr); gmm: each "
      "row's component (numbered from 1), every component's posterior probability "
      "p_k and the mixture's log density (of the standardised row with --standardize).");
  cmd->add_option("--predict-out", o->predict_out, "Where --predict writes its CSV.");
  cmd->add_option("--out", o->out,
                  "Directory for the pictures, drawn by gnuplot: coefficients.png (linreg, "
                  "logistic, poisson: a forest plot of the intervals), series.png (kalman), gp.png "
                  "(gpr, gpc on one or two inputs), mixture.png (gmm); their data and script in "
                  "DIR/plot-data.");
  cmd->add_option(
      "--json", o->json,
      "Write the results as JSON to this file ('-' = stdout, the table then goes to stderr).");
  // priors and solver
  add_prior_options(cmd, *o);
  cmd->add_flag(
      "--optimize-evidence", o->optimize_evidence,
      "linreg: maximise the evidence over δ and β (MacKay's fixed point; --prior-precision "
      "and --noise-precision give the start).");
  cmd->add_option("--cvi-start", o->cvi_start,
                  "cvi for linreg/logistic/poisson with a Gaussian family: start from the "
                  "Laplace posterior (laplace, the default: a few Newton steps) or from the prior "
                  "(prior; from the intercept's weak prior the first steps can fail on large "
                  "data); the fixed point is the same.");
  // kalman
  cmd->add_option("--model", o->ssm, "kalman: local-level or local-linear-trend.")
      ->capture_default_str();
  cmd->add_option("--obs-var", o->obs_var, "kalman: observation noise variance V.");
  cmd->add_option("--state-var", o->state_var, "kalman: level noise variance W.");
  cmd->add_option("--slope-var", o->slope_var,
                  "kalman: slope noise variance (local-linear-trend; default 0).");
  cmd->add_option("--init-mean", o->init_mean,
                  "kalman: prior mean of the first level (default: y₁).");
  cmd->add_option("--init-var", o->init_var,
                  "kalman: prior variance of the first state (default 1e7).");
  cmd->add_flag("--fit", o->fit, "kalman: maximum-likelihood noise variances (Nelder–Mead).");
  cmd->add_option("--forecast", o->forecast,
                  "kalman: forecast every output this many steps past the data (mean, sd and the "
                  "interval at --level; the prediction recursion from the last filtered state).");
  cmd->add_option("--model-file", o->model_file,
                  "kalman: a general linear-Gaussian model from JSON: A, C, Q, R (arrays of rows), "
                  "init_mean, init_cov, optional states (names); --column lists one column per "
                  "row of C.");
  // gmm
  cmd->add_option("--alpha0", o->alpha0, "vmp/svi: Dirichlet concentration (default 1/K).");
  // gpc
  cmd->add_option("--kernel", o->kernel,
                  "gpc, gpr: kernel, a sum of products of rbf, matern32, matern52, linear, white "
                  "and constant, each with optional starting values, e.g. "
                  "'rbf(l=2,v=1)*linear+white(v=0.1)'.")
      ->capture_default_str();
  cmd->add_flag("--ard", o->ard,
                "gpc, gpr: one length-scale per feature in every rbf/matern factor (automatic "
                "relevance determination).");
  cmd->add_option("--lengthscale", o->lengthscale,
                  "gpc, gpr: kernel length-scale ℓ of the factors that set none (the start with "
                  "--learn-hyperparameters).")
      ->capture_default_str();
  cmd->add_option("--variance", o->variance,
                  "gpc, gpr: kernel variance σ² of the factors that set none (the start with "
                  "--learn-hyperparameters).")
      ->capture_default_str();
  cmd->add_option("--noise-variance", o->noise_variance,
                  "gpr: noise variance σₙ² (the start with --learn-hyperparameters).")
      ->capture_default_str();
  cmd->add_flag("--learn-hyperparameters", o->learn_hyperparameters,
                "gpc: learn the kernel's ℓ and σ² by L-BFGS on the Laplace log marginal likelihood "
                "(--method laplace) or the CVI ELBO (--method cvi, with at least 100 "
                "quadrature nodes); gpr: those and σₙ² on the exact log marginal likelihood.");
  // conjugate
  cmd->add_option("--likelihood", o->likelihood,
                  "conjugate: bernoulli (Beta prior), poisson (Gamma), normal (Normal–Gamma) or "
                  "categorical (Dirichlet).");
  cmd->add_option("--prior", o->prior,
                  "conjugate: prior hyperparameters — bernoulli a,b; poisson shape,rate; normal "
                  "mu0,kappa0,alpha0,beta0; categorical α₁,…,α_K.");
  // The methods' options, one flag per key of their tables (table_flags.hpp); --family has its
  // own flag (it also names mixture VI), and the evidence's start is --prior-precision and
  // --noise-precision.
  o->flags.add_to(cmd, method_flag_sources(), {"family", "alpha", "beta"},
                  "Options of the inference methods (blr methods lists them per method)");
  cmd->callback([o, &exit_code] {
    // The option tables' messages name this command's flags (--max-iterations, not
    // max_iterations): every table key the command takes is a flag of that spelling.
    const OptionSpellingScope flags(OptionSpelling::kFlag);
    exit_code = run(*o);
  });
}

BLR_REGISTER_COMMAND("infer", 20, setup_infer);

}  // namespace
}  // namespace blr::cli::infer
