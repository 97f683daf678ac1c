// Shared pieces of `blr infer`: the options of every model, data loading from CSV (missing values,
// categorical columns), tables with credible intervals and JSON helpers. The runners live in
// infer_glm.cpp (linreg, logistic, poisson, gpc), infer_gpr.cpp, infer_series.cpp (gmm,
// conjugate) and infer_kalman.cpp; predictions for `--predict` in infer_predict.cpp;
// cmd_infer.cpp registers the command.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "blr/core/types.hpp"
#include "blr/inference/conjugate.hpp"
#include "blr/inference/glm.hpp"
#include "blr/inference/glm_fit.hpp"
#include "blr/inference/gmm.hpp"
#include "blr/inference/gp_hyperparameters.hpp"
#include "blr/inference/intervals.hpp"
#include "blr/inference/kernels.hpp"
#include "blr/inference/lbfgs.hpp"
#include "blr/inference/mixture_vi.hpp"
#include "blr/inference/predictive_table.hpp"
#include "blr/inference/vmp.hpp"
#include "blr/io/csv.hpp"
#include "infer_plots.hpp"
#include "table_flags.hpp"
#include "result_document.hpp"

namespace CLI {
class App;
}

namespace blr::cli::infer {

struct Options {
  std::string model;   ///< linreg, logistic, poisson, kalman, gmm, gpc, gpr, conjugate
  std::string method;  ///< exact, laplace, em, vmp, svi, cvi (empty: the model's default)
  std::string family = "gaussian-full";  ///< gaussian-full, gaussian-diag, mixture:K
  // data
  std::string train, test, data, label, positive, features, column, json;
  bool standardize = false, no_intercept = false;
  std::vector<std::string> categorical;  ///< features to one-hot code (repeatable, comma lists)
  std::string missing = "error";         ///< error or drop
  std::string predict, predict_out;      ///< --predict FILE --predict-out FILE
  std::optional<int> forecast;           ///< kalman: outputs forecast this many steps ahead
  double level = 0.95;                   ///< credible level of every interval
  // priors and solver (empty: not given, the default assumed and said so in the output)
  std::optional<double> prior_precision;            ///< δ (default 1)
  std::optional<double> intercept_prior_precision;  ///< default inference::kInterceptPriorPrecision
  std::optional<double> noise_precision;  ///< linreg: a known β (default: the noise estimated)
  std::string noise_prior;  ///< linreg: "A,B", Gamma(A, rate B) on τ (default Jeffreys)
  bool optimize_evidence = false;
  /// The options of the inference methods' tables, one flag per key (table_flags.hpp): the
  /// runners apply them to the tables of the method that runs and refuse the rest.
  TableFlags flags;
  std::string cvi_start;  ///< cvi (GLMs, Gaussian family): prior or laplace (empty: poisson
                          ///< laplace, the others prior)
  // kalman
  std::string ssm = "local-level";
  std::optional<double> obs_var, state_var;
  std::optional<double> slope_var;  ///< default 0
  std::optional<double> init_mean;  ///< default: the first observation
  std::optional<double> init_var;   ///< default 1e7
  bool fit = false;
  std::string model_file;  ///< general A, C, Q, R (JSON)
  // gmm
  std::optional<double> alpha0;  ///< vmp/svi (default 1/K)
  // gpc
  std::string kernel = "rbf";  ///< an expression of base kernels (inference/kernels.hpp)
  double lengthscale = 1.0, variance = 1.0;
  bool ard = false;                    ///< one length-scale per feature in every stationary factor
  std::string out;                     ///< --out DIR: the pictures (infer_plots.hpp)
  bool learn_hyperparameters = false;  ///< maximise the evidence (laplace, gpr) or the ELBO (cvi)
  double noise_variance = 1.0;         ///< gpr: σₙ²
  // conjugate
  std::string likelihood, prior;
};

/// --prior-precision, --intercept-prior-precision, --noise-precision and --noise-prior (infer,
/// sensitivity).
void add_prior_options(CLI::App* cmd, Options& o);

/// Splits "a,b,c" (empty → empty list).
std::vector<std::string> split_list(const std::string& s);
/// Parses "1.5,2" into numbers; names the option on error.
std::vector<double> parse_numbers(const std::string& s, const std::string& option);

/// A supervised data set from CSV: design (with intercept unless disabled), labels, names; the
/// test and prediction files pass the same checks and get the training encoding.
struct Supervised {
  Matrix x_train, x_test, x_predict;
  std::vector<std::string> warnings;  ///< values that swamp their column (printed on stderr)
  Vector y_train, y_test;
  std::vector<std::string> names;  ///< column names of the design ("(intercept)" first)
  bool has_test = false, has_predict = false;
  std::vector<long> predict_lines;   ///< file line of each prediction row
  std::vector<long> train_lines;     ///< file line of each training row
  std::vector<std::string> classes;  ///< classification: {negative, positive}
  nlohmann::json dropped;            ///< --missing drop: rows dropped per file role
};
enum class Response { real, binary, count };
Supervised load_supervised(const Options& o, Response response, bool intercept);

/// Applies --missing to the columns `used` of a table: drops incomplete rows (reporting how many
/// under `role` in `dropped` and on stdout) or throws naming the first missing cell.
io::CsvTable handle_missing(const Options& o, io::CsvTable table,
                            const std::vector<std::string>& used, const std::string& role,
                            nlohmann::json& dropped);

/// Throws unless the method is one of `allowed` (the first is the default); returns the method.
std::string resolve_method(const Options& o, const std::vector<std::string>& allowed);

/// "mixture:K" → K, "gaussian-full" → 0, "gaussian-diag" → −1; throws on anything else.
int parse_family(const std::string& family);

nlohmann::json to_json(const Vector& v);
nlohmann::json to_json(const Matrix& m);  ///< array of rows

/// Posterior marginals: mean, sd and the equal-tailed interval at `level`.
struct Marginals {
  Vector mean, sd, lower, upper;
  double level = 0.95;
  /// Gaussian marginals N(mean, sd²).
  static Marginals gaussian(const Vector& mean, const Vector& sd, double level);
  /// Adds "level", "mean", "sd", "lower" and "upper" to a JSON object.
  void to(nlohmann::json& j) const;
};

/// name, mean, sd and the interval as an aligned table on stdout.
void print_table(const std::vector<std::string>& names, const Marginals& m,
                 const std::string& title);
/// "2.5%" / "97.5%": the tail probabilities of an interval at `level`, as column headings.
std::string lower_heading(double level);
std::string upper_heading(double level);


// ---- predictions (infer_predict.cpp) ------------------------------------------------------------
/// One row per predicted input: named numeric columns and, for classification, a class label.
struct PredictionTable {
  std::vector<std::string> columns;
  std::vector<long> lines;             ///< file line of each row
  Matrix values;                       ///< rows × columns
  std::vector<std::string> predicted;  ///< classification: the more probable class per row
};
/// The predictive of each row from its latent a* ~ Σ_k w_k N(m_ik, v_ik) (one column per
/// component; one component for a Gaussian posterior): the library's predictive_table, with_lines.
PredictionTable prediction_table(inference::Likelihood l, const Vector& weights,
                                 const Matrix& latent_mean, const Matrix& latent_variance,
                                 const Vector& probability, double noise_variance, double level,
                                 const std::vector<long>& lines,
                                 const std::vector<std::string>& classes);
/// The library's predictive table (inference/predictive_table.hpp) with the file line of each
/// row and, for a classifier, the more probable class (a "predicted" column).
PredictionTable with_lines(inference::PredictiveTable t, inference::Likelihood l,
                           const std::vector<long>& lines, const std::vector<std::string>& classes);
/// A one-line description of how the positive-class probability is computed.
std::string probability_method(const inference::PredictiveOptions& p);
/// Prints one line on what was predicted and returns the JSON "predict" object.
nlohmann::json report_predictions(const Options& o, const inference::PredictiveOptions& p,
                                  inference::Likelihood l, const PredictionTable& t,
                                  const std::vector<std::string>& classes);
/// Throws naming the line and column of the first entry that is not finite.
void require_finite_predictions(const PredictionTable& t, const std::string& file);
/// Writes the table as CSV ("line" first); throws naming the file when it cannot be written.
void write_predictions(const std::string& path, const PredictionTable& t);

// ---- GLMs with a Gaussian posterior (infer_glm.cpp; also `blr sensitivity`) ------------------

/// How linreg treats the noise precision β (logistic and poisson have none).
enum class Noise {
  none,          ///< logistic, poisson
  known,         ///< --noise-precision B
  normal_gamma,  ///< exact: the Normal–Gamma posterior (the default)
  evidence,      ///< exact with --optimize-evidence: β by type-II maximum likelihood
  plug_in,       ///< laplace, cvi: β = E[τ | y] of the Normal–Gamma posterior, then held fixed
};

/// linreg, logistic or poisson with its options checked, data loaded and model built.
struct RegressionProblem {
  inference::Likelihood likelihood = inference::Likelihood::gaussian;
  std::string method;  ///< exact, laplace or cvi
  int family = 0;      ///< as parse_family
  Supervised data;       ///< its x_train is moved into model.x (the design is held once)
  inference::Glm model;  ///< with Noise::normal_gamma/plug_in: conditional on τ = E[τ | y]
  Noise noise = Noise::none;
  double delta = 1;                 ///< --prior-precision (the slopes')
  std::optional<double> intercept;  ///< the intercept's prior precision (with an intercept)
  Vector precisions;                ///< δ per column, the intercept's first (units of τ: NG)
  inference::NormalGammaRegression normal_gamma;  ///< Noise::normal_gamma and plug_in
  std::vector<std::string> assumptions;  ///< one sentence per default assumed (printed, JSON)
  std::vector<std::string> warnings;     ///< e.g. a value that swamps its column (stderr, JSON)
  inference::GlmMethodOptions options;  ///< the method's, from the flags (glm_method_options)
  inference::PredictiveOptions predictive;
  std::string run;  ///< "blr infer logistic --method laplace": what the flags must apply to
};
/// Adds "assumptions", "warnings" (when any), the prior precisions and the noise to `j`.
void report_problem(const RegressionProblem& p, nlohmann::json& j);
/// Validates the options, loads the data and prints the header line "blr <command> <model> — ...".
/// What to change when an iterative fit stops at its --max-iterations cap (require_converged,
/// blr/core/convergence.hpp: `blr infer` prints no result of a fit that did not converge).
inline constexpr const char* kRaiseCap = "raise --max-iterations or loosen --tolerance";

/// Refuses a hyperparameter search (L-BFGS, gp_hyperparameters.hpp) that stopped at its cap on
/// iterations or evaluations, naming `start_options` as what to change (infer_gpr.cpp); its other
/// stop (no step meets the Wolfe conditions at the best point found) keeps its printed note.
void require_search_converged(int iterations, int evaluations, bool converged,
                              const inference::LbfgsOptions& options, const char* start_options);

RegressionProblem prepare_regression(const Options& o, const std::string& command);

struct GaussianPosterior {
  Vector mean;
  Matrix covariance;
  /// Noise::normal_gamma: the exact posterior (Student-t marginals); `covariance` is its
  /// covariance ν/(ν − 2)·S, and `p.model` the Gaussian conditional on τ = E[τ | y], N(m, S).
  std::optional<inference::NormalGammaFit> normal_gamma;
};
/// The exact, Laplace or CVI (full or diagonal) posterior; prints its summary lines and adds
/// method, evidence or ELBO, iterations and convergence to `j`. Evidence maximisation stores the
/// learned precisions in `p.model`.
GaussianPosterior fit_gaussian_posterior(const Options& o, RegressionProblem& p, nlohmann::json& j);

// ---- runners: each prints its human-readable report and returns the JSON object --------------
/// linreg, logistic, poisson; with --predict, fills `predictions`.
nlohmann::json run_regression(const Options& o, PredictionTable* predictions);
/// The kernel of --kernel, --lengthscale, --variance and --ard over `columns` features.
inference::Kernel kernel_of(const Options& o, Index columns);
/// A GP plot's frame: the training data, names and the grid (one input: 200 points; two: 80×80).
GpPlot gp_plot_frame(const Supervised& s, const Options& o, bool classification);
/// The grid's inputs as rows (one input: n×1; two: row r·nx + c is (grid_x[c], grid_y[r])).
Matrix gp_plot_inputs(const GpPlot& p);
nlohmann::json run_gpc(const Options& o, PredictionTable* predictions, InferPlots* plots = nullptr);
nlohmann::json run_gpr(const Options& o, PredictionTable* predictions,
                       InferPlots* plots = nullptr);                       ///< infer_gpr.cpp
ResultDocument run_kalman(const Options& o, InferPlots* plots = nullptr);  ///< arrays stay Eigen
nlohmann::json run_gmm(const Options& o, PredictionTable* predictions, InferPlots* plots = nullptr);
nlohmann::json run_conjugate(const Options& o);

}  // namespace blr::cli::infer
