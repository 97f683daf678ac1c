// Shared pieces of `blr infer`: the options of every model, data loading from CSV, tables and
// JSON helpers. The runners live in infer_glm.cpp (linreg, logistic, poisson, gpc) and
// infer_series.cpp (kalman, gmm, conjugate); cmd_infer.cpp registers the command.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "blr/core/types.hpp"
#include "blr/inference/glm.hpp"
#include "blr/io/csv.hpp"

namespace blr::cli::infer {

struct Options {
  std::string model;   ///< linreg, logistic, poisson, kalman, gmm, gpc, gpr, conjugate
  std::string method;  ///< exact, laplace, em, vmp, svi, cvi (empty: the model's default)
  std::string family = "gaussian-full";  ///< gaussian-full, gaussian-diag, mixture:K
  // data
  std::string train, test, data, label, positive, features, column, json;
  bool standardize = false, no_intercept = false;
  // priors and solver
  double prior_precision = 1.0;
  double noise_precision = 1.0;  ///< linreg: known β
  bool optimize_evidence = false;
  std::uint64_t seed = 0;
  int max_iterations = 0;                 ///< 0: not given (the method's default)
  double tolerance = 0;                   ///< 0: not given (the method's default)
  double rho = 0;                         ///< 0: the method's default (1; mixture VI 0.1)
  std::string predictive = "quadrature";  ///< quadrature, monte-carlo, probit
  int samples = 2000;
  int quadrature_nodes = 32;
  // kalman
  std::string ssm = "local-level";
  double obs_var = std::numeric_limits<double>::quiet_NaN();    ///< NaN: not given
  double state_var = std::numeric_limits<double>::quiet_NaN();  ///< NaN: not given
  double slope_var = 0;
  double init_mean = std::numeric_limits<double>::quiet_NaN(), init_var = 1e7;
  bool fit = false;
  // gmm
  int components = 2;
  std::string covariance = "full";
  int batch_size = 20, iterations = 2000;
  double reg_covar = 1e-6, alpha0 = -1;
  // gpc
  std::string kernel = "rbf";  ///< rbf, matern32, matern52
  double lengthscale = 1.0, variance = 1.0;
  bool learn_hyperparameters = false;  ///< maximise the evidence (laplace, gpr) or the ELBO (cvi)
  double noise_variance = 1.0;         ///< gpr: σₙ²
  // conjugate
  std::string likelihood, prior;
};

/// Splits "a,b,c" (empty → empty list).
std::vector<std::string> split_list(const std::string& s);
/// Parses "1.5,2" into numbers; names the option on error.
std::vector<double> parse_numbers(const std::string& s, const std::string& option);

/// A supervised data set from CSV: design (with intercept unless disabled), labels, names.
struct Supervised {
  Matrix x_train, x_test;
  Vector y_train, y_test;
  std::vector<std::string> names;  ///< column names of the design ("(intercept)" first)
  bool has_test = false;
  std::vector<std::string> classes;  ///< classification: {negative, positive}
};
enum class Response { real, binary, count };
Supervised load_supervised(const Options& o, Response response, bool intercept);

/// Throws unless the method is one of `allowed` (the first is the default); returns the method.
std::string resolve_method(const Options& o, const std::vector<std::string>& allowed);

/// "mixture:K" → K, "gaussian-full" → 0, "gaussian-diag" → −1; throws on anything else.
int parse_family(const std::string& family);

nlohmann::json to_json(const Vector& v);
nlohmann::json to_json(const Matrix& m);  ///< array of rows

/// name, mean, sd as an aligned table on stdout.
void print_table(const std::vector<std::string>& names, const Vector& mean, const Vector& sd,
                 const std::string& title);

inference::PredictiveMethod predictive_method(const std::string& name);

// ---- GLMs with a Gaussian posterior (infer_glm.cpp; also `blr sensitivity`) ------------------

/// linreg, logistic or poisson with its options checked, data loaded and model built.
struct RegressionProblem {
  inference::Likelihood likelihood = inference::Likelihood::gaussian;
  std::string method;  ///< exact, laplace or cvi
  int family = 0;      ///< as parse_family
  Supervised data;
  inference::Glm model;
};
/// Validates the options, loads the data and prints the header line "blr <command> <model> — ...".
RegressionProblem prepare_regression(const Options& o, const std::string& command);

struct GaussianPosterior {
  Vector mean;
  Matrix covariance;
};
/// The exact, Laplace or CVI (full or diagonal) posterior; prints its summary lines and adds
/// method, evidence or ELBO, iterations and convergence to `j`. Evidence maximisation stores the
/// learned precisions in `p.model`.
GaussianPosterior fit_gaussian_posterior(const Options& o, RegressionProblem& p,
                                         nlohmann::json& j);

// ---- runners: each prints its human-readable report and returns the JSON object --------------
nlohmann::json run_regression(const Options& o);  ///< linreg, logistic, poisson
nlohmann::json run_gpc(const Options& o);
nlohmann::json run_gpr(const Options& o);  ///< infer_gpr.cpp
nlohmann::json run_kalman(const Options& o);
nlohmann::json run_gmm(const Options& o);
nlohmann::json run_conjugate(const Options& o);

}  // namespace blr::cli::infer
