// `blr infer kalman`: the Kalman filter and smoother (each update one ρ = 1 BLR step,
// inference/kalman.hpp) for the built-in local-level and local-linear-trend models (variances from
// the options or fitted by maximum likelihood) or a general model A, C, Q, R from a JSON file
// (io/state_space.hpp). Intervals of each state are Gaussian: m ± z·√P.
#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "blr/core/convergence.hpp"
#include "blr/core/error.hpp"
#include "blr/inference/intervals.hpp"
#include "blr/inference/kalman.hpp"
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
    fmt::print("--missing drop: {} of {} steps of '{}' have a missing observation (no update there)\n",
               missing, t.rows(), t.source());
    j["missing_steps"] = missing;
  }
  return y;
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
  if (general) {
    check(o.ssm == "local-level" && !o.obs_var && !o.state_var && !o.slope_var && !o.init_mean &&
              !o.init_var && !o.fit,
          "Options --model, --obs-var, --state-var, --slope-var, --init-mean, --init-var and "
          "--fit do not apply with --model-file (the file fixes every matrix).");
    const auto file = io::read_state_space(o.model_file);
    model = file.model;
    states = file.states;
    const auto cols = observation_columns(o, table, model.obs_dim());
    y = observations(o, table, cols, j);
    j.update({{"state_model", "file"}, {"model_file", o.model_file}, {"columns", cols}});
    if (cols.size() == 1) j["column"] = cols[0];
    title = fmt::format("blr infer kalman — model file '{}' ({} state{}, {} output{}) on {}",
                        o.model_file, model.state_dim(), model.state_dim() == 1 ? "" : "s",
                        model.obs_dim(), model.obs_dim() == 1 ? "" : "s", o.data);
  } else {
    const bool trend = o.ssm == "local-linear-trend";
    check(trend || o.ssm == "local-level",
          fmt::format("Option '--model' must be local-level or local-linear-trend; got '{}'.",
                      o.ssm));
    const std::string col = observation_columns(o, table, 1)[0];
    y = observations(o, table, {col}, j);
    check(!o.slope_var || trend,
          "Option '--slope-var' applies only to --model local-linear-trend.");
    if (o.init_mean) {
      check(std::isfinite(*o.init_mean),
            fmt::format("Option '--init-mean' must be finite; got {}.", *o.init_mean));
    }
    check(o.init_mean || !std::isnan(y(0, 0)),
          "The first observation is missing, so the initial level cannot default to it; give "
          "--init-mean.");
    const double m0 = o.init_mean.value_or(y(0, 0));
    const double init_var = o.init_var.value_or(1e7);
    check_positive("init-var", init_var);
    auto build = [&](double v, double w, double z) {
      if (!trend) return inference::StateSpaceModel::local_level(v, w, m0, init_var);
      return inference::StateSpaceModel::local_linear_trend(
          v, w, z, (Vector(2) << m0, 0.0).finished(), init_var * Matrix::Identity(2, 2));
    };
    const bool has_v = o.obs_var.has_value(), has_w = o.state_var.has_value();
    if (has_v) check_positive("obs-var", *o.obs_var);
    if (has_w) check_nonnegative("state-var", *o.state_var);
    if (o.slope_var) check_nonnegative("slope-var", *o.slope_var);
    double v = o.obs_var.value_or(0), w = o.state_var.value_or(0), z = o.slope_var.value_or(0);
    if (o.fit) {
      // The variance of the observed values (all of them unless --missing drop left gaps).
      Vector observed(y.rows());
      Index count = 0;
      for (Index t = 0; t < y.rows(); ++t)
        if (!std::isnan(y(t, 0))) observed[count++] = y(t, 0);
      const Vector obs = observed.head(count);
      const double var_y = (obs.array() - obs.mean()).square().mean();
      check(var_y > 0,
            fmt::format("Column '{}' is constant; its noise variances cannot be fitted.", col));
      Vector start(trend ? 3 : 2);
      // Given variances are the fit's start, on log variances: a zero start has no logarithm.
      for (const auto& [name, value] : {std::pair{"--state-var", o.state_var},
                                        std::pair{"--slope-var", o.slope_var}}) {
        check(!value || *value > 0,
              fmt::format("Option '{}' is where --fit starts, on log variances, and must be "
                          "positive; got {}.",
                          name, value.value_or(0)));
      }
      start[0] = o.obs_var.value_or(var_y / 2);
      start[1] = o.state_var.value_or(var_y / 10);
      if (trend) start[2] = o.slope_var.value_or(var_y / 1000);
      inference::NelderMeadOptions nm;
      if (o.max_iterations > 0) nm.max_evaluations = o.max_iterations;
      const auto fit = inference::fit_variances(
          [&](const Vector& p) { return build(p[0], p[1], trend ? p[2] : 0.0); }, y, start, nm);
      v = fit.variances[0];
      w = fit.variances[1];
      if (trend) z = fit.variances[2];
      evaluations = fit.evaluations;
      converged = fit.converged;
      require_converged(converged, "Maximum likelihood by Nelder–Mead", fit.evaluations,
                        nm.max_evaluations, "evaluations",
                        "raise --max-iterations (it caps the evaluations) or give --obs-var and "
                        "--state-var");
      fmt::print(
          "maximum likelihood (Nelder–Mead on log variances): {} evaluations, converged: {}\n",
          fit.evaluations, fit.converged ? "yes" : "no");
    } else {
      check(has_v && has_w,
            "Model 'kalman' needs --obs-var V > 0 and --state-var W ≥ 0, or --fit to estimate "
            "them.");
    }
    model = build(v, w, z);
    states = trend ? std::vector<std::string>{"level", "slope"} : std::vector<std::string>{"level"};
    j.update({{"state_model", o.ssm},
              {"column", col},
              {"obs_var", v},
              {"state_var", w},
              {"init_mean", m0},
              {"init_var", init_var}});
    if (trend) j["slope_var"] = z;
    title = fmt::format("blr infer kalman — {} on {} ('{}', {} steps); V = {:.6g}, W = {:.6g}{}",
                        o.ssm, o.data, col, y.rows(), v, w,
                        trend ? fmt::format(", slope variance {:.6g}", z) : "");
  }
  auto r = inference::kalman_filter(model, y);  // each update one ρ = 1 BLR step
  inference::kalman_smooth(model, y, r);
  const Index n = model.state_dim(), T = y.rows();
  // Row t of *_cov is vec(P_t); the variance of state i is entry i·n + i.
  Vector fm = r.filtered_mean.col(0), fv = r.filtered_cov.col(0);
  Vector sm = r.smoothed_mean.col(0), sv = r.smoothed_cov.col(0);
  auto fmarg = Marginals::gaussian(fm, fv.cwiseMax(0.0).cwiseSqrt(), o.level);
  auto smarg = Marginals::gaussian(sm, sv.cwiseMax(0.0).cwiseSqrt(), o.level);
  fmt::print("{}\n", title);
  fmt::print("log-likelihood (prediction-error decomposition) {:.9g}\n", r.log_likelihood);
  if (n > 1) fmt::print("state '{}' (the first of {}):\n", states[0], n);
  fmt::print("{:>6}  {:>12}  {:>12}  {:>10}  {:>12}  {:>10}  {:>12}  {:>12}\n", "t", "y",
             "filtered", "sd", "smoothed", "sd", lower_heading(o.level), upper_heading(o.level));
  for (Index t = 0; t < T; ++t) {
    if (T > 12 && t == 5) fmt::print("{:>6}\n", "...");
    if (T > 12 && t >= 5 && t < T - 5) continue;
    fmt::print("{:>6}  {:>12.6g}  {:>12.6g}  {:>10.4g}  {:>12.6g}  {:>10.4g}  {:>12.6g}  {:>12.6g}\n",
               t + 1, y(t, 0), fm[t], fmarg.sd[t], sm[t], smarg.sd[t], smarg.lower[t],
               smarg.upper[t]);
  }
  Matrix smoothed_sd(T, n);
  for (Index i = 0; i < n; ++i)
    smoothed_sd.col(i) = r.smoothed_cov.col(i * n + i).cwiseMax(0.0).cwiseSqrt();
  j.update({{"converged", converged},
            {"iterations", o.fit ? evaluations : 1},
            {"log_likelihood", r.log_likelihood},
            {"level", o.level},
            {"states", states}});
  if (plots != nullptr) {
    plots->series = SeriesPlot{y.col(0), fm, sm, smarg.lower, smarg.upper, o.level, title};
  }
  // The per-step arrays stay Eigen vectors beside the small fields (result_document.hpp).
  ResultDocument doc(std::move(j));
  doc.add_vector("filtered_mean", std::move(fm));
  doc.add_vector("filtered_var", std::move(fv));
  doc.add_vector("filtered_lower", std::move(fmarg.lower));
  doc.add_vector("filtered_upper", std::move(fmarg.upper));
  doc.add_vector("smoothed_mean", std::move(sm));
  doc.add_vector("smoothed_var", std::move(sv));
  doc.add_vector("smoothed_lower", std::move(smarg.lower));
  doc.add_vector("smoothed_upper", std::move(smarg.upper));
  if (o.ssm == "local-linear-trend" && !general)
    doc.add_vector("smoothed_slope", r.smoothed_mean.col(1));
  doc.add_rows("smoothed_states", std::move(r.smoothed_mean));
  doc.add_rows("smoothed_states_sd", std::move(smoothed_sd));
  return doc;
}

}  // namespace blr::cli::infer
