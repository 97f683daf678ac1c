// `blr sensitivity <linreg|logistic|poisson>`: how much each training example matters to a
// Bayesian GLM — the memory-perturbation equation (blr/inference/sensitivity.hpp) on the exact,
// Laplace or CVI posterior that `blr infer` fits (same data loading, options and checks,
// infer_common.hpp). Prints the leave-one-out estimates and the K most influential rows; --json
// writes every row's error, variance, deviations and score.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>

#include "blr/core/error.hpp"
#include "blr/core/option_table.hpp"
#include "blr/inference/methods.hpp"
#include "table_flags.hpp"
#include "blr/inference/sensitivity.hpp"
#include "checked_result.hpp"
#include "command.hpp"
#include "infer_common.hpp"
#include "json_output.hpp"

namespace blr::cli::sensitivity {
namespace {

using inference::Likelihood;

struct Options {
  infer::Options fit;  ///< model, data, prior and solver options, as `blr infer` reads them
  int top = 10;
};

nlohmann::json metrics_json(Likelihood l, const inference::TestMetrics& t) {
  nlohmann::json j{{"nll", t.nll}, {"rmse", t.rmse}};
  if (l == Likelihood::logistic) j["accuracy"] = t.accuracy;
  return j;
}

std::string metrics_text(Likelihood l, const inference::TestMetrics& t) {
  return l == Likelihood::logistic ? fmt::format("NLL {:.6f}, accuracy {:.4f}", t.nll, t.accuracy)
                                   : fmt::format("NLL {:.6f}, RMSE {:.6g}", t.nll, t.rmse);
}

/// Rows by decreasing score (ties: file order), the first k of them.
std::vector<Index> most_influential(const Vector& score, Index k) {
  std::vector<Index> order(static_cast<std::size_t>(score.size()));
  std::iota(order.begin(), order.end(), Index{0});
  k = std::min<Index>(k, score.size());
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](Index a, Index b) {
    return score[a] > score[b] || (score[a] == score[b] && a < b);
  });
  order.resize(static_cast<std::size_t>(k));
  return order;
}

nlohmann::json run_sensitivity(const Options& so) {
  check(so.top >= 1, "Option '--top' must be a positive integer; got {}.", so.top);
  const infer::Options& o = so.fit;
  infer::RegressionProblem p = infer::prepare_regression(o, "sensitivity");
  inference::SensitivityOptions sopt = inference::SensitivityOptions::after(p.method);
  o.flags.apply(inference::SensitivityOptions::table(), sopt);
  o.flags.require_taken(p.run);
  nlohmann::json j{{"method", p.method}, {"features", p.data.names}};
  const infer::GaussianPosterior post = infer::fit_gaussian_posterior(o, p, j);
  check(!j.contains("converged") || j["converged"].get<bool>(),
        "The {} fit did not converge; the sensitivities need the posterior at its fixed point "
        "(raise --max-iterations).",
        p.method);

  // Normal–Gamma (linreg's default): the Gaussian conditional on τ = E[τ | y], N(m, S), whose
  // model p.model is (prepare_regression/fit_gaussian_posterior).
  const Matrix& cov = post.normal_gamma ? post.normal_gamma->scale : post.covariance;
  const auto s = inference::glm_sensitivity(p.model, post.mean, cov, sopt);
  const inference::PredictiveOptions& popt = p.predictive;
  const auto loo = inference::loo_estimate(p.model, s, popt);
  const auto in_sample = inference::test_metrics(
      p.likelihood,
      inference::predict_latent(p.likelihood, s.latent_mean, s.variance, p.model.y, popt,
                                p.model.noise_precision),
      p.model.y);

  const Likelihood lik = p.likelihood;
  fmt::print("leave-one-out estimate (no refitting): {}\n", metrics_text(lik, loo));
  fmt::print("in-sample (every example in the fit):  {}\n", metrics_text(lik, in_sample));
  const auto top = most_influential(s.score, so.top);
  fmt::print(
      "the {} most influential rows (score = |change of E[y] when the row is removed|; "
      "deviation = change of its linear predictor):\n",
      top.size());
  fmt::print("{:>6} {:>7} {:>10} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}\n", "rank", "row", "y",
             "predictor", "error", "variance", "deviation", "first-ord.", "score");
  nlohmann::json top_json = nlohmann::json::array();
  for (std::size_t r = 0; r < top.size(); ++r) {
    const Index i = top[r];
    fmt::print("{:>6} {:>7} {:>10.4g} {:>11.4g} {:>11.4g} {:>11.4g} {:>11.4g} {:>11.4g} {:>11.4g}\n",
               r + 1, i + 1, p.model.y[i], s.latent_mean[i], s.error[i], s.variance[i],
               s.deviation[i], s.deviation_first_order[i], s.score[i]);
    top_json.push_back({{"row", i + 1},
                        {"line", p.data.train_lines[static_cast<std::size_t>(i)]},
                        {"score", s.score[i]}});
  }
  if (p.data.dropped.empty())
    fmt::print("(row: 1-based data row of {}, header excluded)\n", o.train);
  else
    fmt::print("(row: 1-based among the {} rows of {} kept by --missing drop; the JSON's 'top' "
               "gives each one's file line)\n",
               p.model.y.size(), o.train);

  using infer::report_problem;
  using infer::to_json;
  j.update({{"rows", s.error.size()},
            {"mean", to_json(post.mean)},
            {"sd", to_json(Vector(post.covariance.diagonal().cwiseSqrt()))},
            {"sites", p.method == "cvi" ? "expected" : "at-mean"},
            {"latent_mean", to_json(s.latent_mean)},
            {"error", to_json(s.error)},
            {"curvature", to_json(s.curvature)},
            {"variance", to_json(s.variance)},
            {"deviation", to_json(s.deviation)},
            {"deviation_first_order", to_json(s.deviation_first_order)},
            {"loo_variance", to_json(s.loo_variance)},
            {"score", to_json(s.score)},
            {"loo", metrics_json(lik, loo)},
            {"in_sample", metrics_json(lik, in_sample)},
            {"top", top_json}});
  report_problem(p, j);
  if (!p.data.dropped.empty()) j["dropped_rows"] = p.data.dropped;
  return j;
}

int run(const Options& o) {
  HeldStdout tables;  // shown only once the results are known to be finite
  nlohmann::json out = run_sensitivity(o);
  require_finite(out, fmt::format("blr sensitivity {}", o.fit.model));
  tables.release();
  out["model"] = o.fit.model;
  if (!o.fit.json.empty()) write_json_text(o.fit.json, out.dump(2));
  return 0;
}

void setup_sensitivity(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<Options>();
  infer::Options& f = o->fit;
  auto* cmd = app.add_subcommand(
      "sensitivity",
      "Sensitivity of a Bayesian GLM to each training example (memory-perturbation equation, "
      "Nickl et al. 2023): prediction error, variance, the change of each row's prediction when "
      "it is removed, scores and leave-one-out estimates without refitting. For a trained network: "
      "blr sensitivity --checkpoint C (see blr sensitivity --checkpoint C --help).");
  cmd->add_option("model", f.model, "linreg, logistic or poisson.")
      ->required()
      ->check(CLI::IsMember({"linreg", "logistic", "poisson"}));
  cmd->add_option("--method", f.method,
                  "exact (linreg only, its default), laplace (default for logistic and poisson) "
                  "or cvi.")
      ->check(CLI::IsMember({"exact", "laplace", "cvi"}));
  cmd->add_option("--train", f.train, "Training CSV (header row).")->required();
  cmd->add_option("--label", f.label, "Response column.")->required();
  cmd->add_option("--positive", f.positive,
                  "The positive class of a binary label (default 1 for 0/1 labels).");
  cmd->add_option("--features", f.features,
                  "Comma-separated feature columns (default: all but the label).");
  cmd->add_flag("--standardize", f.standardize,
                "Standardise features with training means and population sds.");
  cmd->add_flag("--no-intercept", f.no_intercept, "Do not prepend an intercept column.");
  // The same data options, read by the same code (infer::load_supervised), as `blr infer`.
  cmd->add_option("--categorical", f.categorical,
                  "Feature columns to one-hot code (repeatable or comma list): levels in sorted "
                  "order, the first the reference, columns named COL=level.")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--missing", f.missing,
                  "error: a missing cell (empty or NA) is an error naming its line and column; "
                  "drop: rows with one are left out and counted (rows are then numbered among "
                  "those kept).")
      ->capture_default_str();
  infer::add_prior_options(cmd, f);
  // The fit's, the sensitivities' and the leave-one-out predictive's options, one flag per key of
  // their tables (table_flags.hpp), as `blr infer` has them.
  const std::vector<FlagSource> sources = inference_flag_sources(
      [](const inference::InferenceMethod& m) {
        return m.model == "glm" && m.method != "mixture-vi";
      },
      {"predictive", "sensitivity"});
  f.flags.add_to(cmd, sources, {"family", "alpha", "beta"},
                 "Options of the fit, the sensitivities and the predictive (blr methods)");
  cmd->add_option("--top", o->top, "How many of the most influential rows to list.")
      ->capture_default_str();
  cmd->add_option("--json", f.json,
                  "Write every row's values as JSON to this file ('-' = stdout, the table then "
                  "goes to stderr).");
  cmd->callback([o, &exit_code] {
    // The option tables' messages name this command's flags (--max-iterations, not
    // max_iterations): every table key the command takes is a flag of that spelling.
    const OptionSpellingScope flags(OptionSpelling::kFlag);
    exit_code = run(*o);
  });
}

BLR_REGISTER_COMMAND("sensitivity", 25, setup_sensitivity);

}  // namespace
}  // namespace blr::cli::sensitivity
