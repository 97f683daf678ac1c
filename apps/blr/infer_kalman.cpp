// `blr infer kalman`: the Kalman filter and smoother (each update one ρ = 1 BLR step,
// inference/kalman.hpp) for the built-in local-level and local-linear-trend models (variances from
// the options or fitted by maximum likelihood) or a general model A, C, Q, R from a JSON file
// (io/state_space.hpp). Intervals of each state are Gaussian: m ± z·√P.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <utility>

#include "blr/core/convergence.hpp"
#include "blr/core/error.hpp"
#include "blr/inference/intervals.hpp"
#include "blr/inference/kalman_summary.hpp"
#include "blr/inference/nelder_mead.hpp"
#include "blr/io/state_space.hpp"
#include "infer_common.hpp"

namespace blr::cli::infer {
namespace {

/// The observation columns: --column (a comma list for several outputs) or the last column.
std::vector<std::string> observation_columns(const Options& o, const io::CsvTable& t, Index p) {
  std::vector<std::string> cols =
      o.column.empty() ? std::vector<std::string>{t.columns().back()} : split_list(o.column);
  check(static_cast<Index>(cols.size()) == p,
        fmt::format("The model observes {} output{} per step, so --column must name {} column{}; "
                    "it names {}.",
                    p, p == 1 ? "" : "s", p, p == 1 ? "" : "s", cols.size()));
  for (const auto& c : cols) t.column_index(c);
  return cols;
}

/// T×p observations; with --missing drop a row with a missing cell is NaN (no update there).
Matrix observations(const Options& o, const io::CsvTable& t, const std::vector<std::string>& cols,
                    nlohmann::json& j) {
  nlohmann::json unused;
  if (o.missing == "error") {
    handle_missing(o, t, cols, "data", unused);  // throws naming the cell
    try {
      return t.numeric_columns(cols);
    } catch (const Error&) {
      // The loop below names the first bad cell in row order.
    }
  }
  Matrix y(t.rows(), static_cast<Index>(cols.size()));
  Index missing = 0;
  for (Index i = 0; i < t.rows(); ++i) {
    bool row_missing = false;
    for (std::size_t k = 0; k < cols.size(); ++k)
      row_missing = row_missing || io::is_missing(t.cell(i, t.column_index(cols[k])));
    missing += row_missing;
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const auto c = static_cast<Index>(k);
      y(i, c) = row_missing ? std::nan("")
                            : io::parse_number(t.cell(i, t.column_index(cols[k])),
                                               fmt::format("File '{}', line {}, column '{}'",
                                                           t.source(), t.line_of(i), cols[k]));
    }
  }
  if (o.missing == "drop") {
    check(missing < t.rows(),
          fmt::format("Every step of '{}' has a missing observation; there is nothing to filter.",
                      t.source()));
    fmt::print(
        "--missing drop: {} of {} steps of '{}' have a missing observation (no update there)\n",
        missing, t.rows(), t.source());
    j["missing_steps"] = missing;
  }
  return y;
}

/// --forecast H: a table of every output's forecast h = 1..H steps past the data (the first and
/// last five steps of a long one), and its JSON: steps, level, outputs and per step the rows of
/// mean, sd, lower and upper (one entry per output, as blr.infer's KalmanResult.forecast).
nlohmann::json report_forecast(const inference::Forecast& f,
                               const std::vector<std::string>& outputs) {
  const Index steps = f.mean.rows();
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const auto c = static_cast<Index>(k);
    fmt::print("forecast of '{}' past the data:\n{:>6}  {:>12}  {:>10}  {:>12}  {:>12}\n",
               outputs[k], "h", "mean", "sd", lower_heading(f.level), upper_heading(f.level));
    for (Index h = 0; h < steps; ++h) {
      if (steps > 12 && h == 5) fmt::print("{:>6}\n", "...");
      if (steps > 12 && h >= 5 && h < steps - 5) continue;
      fmt::print("{:>6}  {:>12.6g}  {:>10.4g}  {:>12.6g}  {:>12.6g}\n", h + 1, f.mean(h, c),
                 f.sd(h, c), f.lower(h, c), f.upper(h, c));
    }
  }
  return {{"steps", steps},           {"level", f.level},    {"outputs", outputs},
          {"mean", to_json(f.mean)},  {"sd", to_json(f.sd)}, {"lower", to_json(f.lower)},
          {"upper", to_json(f.upper)}};
}

}  // namespace

ResultDocument run_kalman(const Options& o, InferPlots* plots) {
  const std::string method = resolve_method(o, {"exact"});
  check(!o.data.empty(), "Model 'kalman' needs a data file: --data FILE.");
  const auto table = io::CsvTable::read(o.data);
  const bool general = !o.model_file.empty();
  nlohmann::json j{{"method", method}};
  inference::StateSpaceModel model;
  std::vector<std::string> states;
  Matrix y;
  std::string title;
  int evaluations = 0;
  bool converged = true;
  std::vector<std::string> outputs;  ///< the observed columns
  if (general) {
    check(o.ssm == "local-level" && !o.obs_var && !o.state_var && !o.slope_var && !o.init_mean &&
              !o.init_var && !o.fit,
          "Options --model, --obs-var, --state-var, --slope-var, --init-mean, --init-var and "
          "--fit do not apply with --model-file (the file fixes every matrix).");
    o.flags.require_taken("blr infer kalman --model-file");
    const auto file = io::read_state_space(o.model_file);
    model = file.model;
    states = file.states;
    const auto cols = observation_columns(o, table, model.obs_dim());
    outputs = cols;
    y = observations(o, table, cols, j);
    j.update({{"state_model", "file"}, {"model_file", o.model_file}, {"columns", cols}});
    if (cols.size() == 1) j["column"] = cols[0];
    title = fmt::format("blr infer kalman — model file '{}' ({} state{}, {} output{}) on {}",
                        o.model_file, model.state_dim(), model.state_dim() == 1 ? "" : "s",
                        model.obs_dim(), model.obs_dim() == 1 ? "" : "s", o.data);
  } else {
    const bool trend = o.ssm == "local-linear-trend";
    const std::string col = observation_columns(o, table, 1)[0];
    outputs = {col};
    y = observations(o, table, {col}, j);
    inference::StructuralModelRequest request{o.ssm,       o.obs_var,  o.state_var, o.slope_var,
                                              o.init_mean, o.init_var, o.fit,       {}};
    if (o.fit) o.flags.apply(inference::NelderMeadOptions::table(), request.nelder_mead);
    o.flags.require_taken(o.fit ? "blr infer kalman --fit" : "blr infer kalman without --fit");
    const auto s = inference::structural_model(request, y);
    if (s.fit) {
      evaluations = s.fit->evaluations;
      converged = s.fit->converged;
      require_converged(converged, "Maximum likelihood by Nelder–Mead", evaluations,
                        request.nelder_mead.max_evaluations, "evaluations",
                        "raise --max-evaluations or give --obs-var and --state-var");
      fmt::print(
          "maximum likelihood (Nelder–Mead on log variances): {} evaluations, converged: {}\n",
          evaluations, converged ? "yes" : "no");
    }
    model = s.model;
    states = s.states;
    j.update({{"state_model", o.ssm},
              {"column", col},
              {"obs_var", s.obs_var},
              {"state_var", s.state_var},
              {"init_mean", s.init_mean},
              {"init_var", s.init_var}});
    if (trend) j["slope_var"] = s.slope_var;
    title = fmt::format("blr infer kalman — {} on {} ('{}', {} steps); V = {:.6g}, W = {:.6g}{}",
                        o.ssm, o.data, col, y.rows(), s.obs_var, s.state_var,
                        trend ? fmt::format(", slope variance {:.6g}", s.slope_var) : "");
  }
  const inference::KalmanSummary summary(std::move(model), y, states);
  const auto filtered = summary.filtered(0, o.level);
  const auto smoothed = summary.smoothed(0, o.level);
  const Index n = summary.model().state_dim(), T = y.rows();
  fmt::print("{}\n", title);
  fmt::print("log-likelihood (prediction-error decomposition) {:.9g}\n", summary.log_likelihood());
  if (n > 1) fmt::print("state '{}' (the first of {}):\n", states[0], n);
  fmt::print("{:>6}  {:>12}  {:>12}  {:>10}  {:>12}  {:>10}  {:>12}  {:>12}\n", "t", "y",
             "filtered", "sd", "smoothed", "sd", lower_heading(o.level), upper_heading(o.level));
  for (Index t = 0; t < T; ++t) {
    if (T > 12 && t == 5) fmt::print("{:>6}\n", "...");
    if (T > 12 && t >= 5 && t < T - 5) continue;
    fmt::print(
        "{:>6}  {:>12.6g}  {:>12.6g}  {:>10.4g}  {:>12.6g}  {:>10.4g}  {:>12.6g}  {:>12.6g}\n",
        t + 1, y(t, 0), filtered.mean[t], filtered.sd[t], smoothed.mean[t], smoothed.sd[t],
        smoothed.lower[t], smoothed.upper[t]);
  }
  j.update(summary.fields(o.level));
  j.update({{"converged", converged}, {"iterations", o.fit ? evaluations : 1}});
  if (o.forecast) j["forecast"] = report_forecast(summary.forecast(*o.forecast, o.level), outputs);
  if (plots != nullptr) {
    plots->series = SeriesPlot{y.col(0),       filtered.mean, smoothed.mean, smoothed.lower,
                               smoothed.upper, o.level,       title};
  }
  // The per-step arrays stay Eigen vectors beside the small fields (result_document.hpp).
  ResultDocument doc(std::move(j));
  auto arrays = summary.arrays(o.level);
  for (auto& [name, v] : arrays.vectors) doc.add_vector(name, std::move(v));
  if (o.ssm == "local-linear-trend" && !general)
    doc.add_vector("smoothed_slope", summary.result().smoothed_mean.col(1));
  for (auto& [name, m] : arrays.rows) doc.add_rows(name, std::move(m));
  return doc;
}

}  // namespace blr::cli::infer
