// Structural models and the state-space posterior summary (kalman_summary.hpp).
#include "blr/inference/kalman_summary.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <utility>

#include "blr/core/error.hpp"
#include "blr/core/option_table.hpp"
#include "blr/inference/intervals.hpp"
#include "summary_json.hpp"

namespace blr::inference {
namespace {

/// Gaussian bands m ± z·sd over the steps.
StateBands bands(std::string state, Vector mean, const Vector& variance, double level) {
  StateBands b{std::move(state), std::move(mean), variance.cwiseMax(0.0).cwiseSqrt(), {}, {},
               level};
  IntervalBands i = gaussian_bands(b.mean, b.sd, level);
  b.lower = std::move(i.lower);
  b.upper = std::move(i.upper);
  return b;
}

}  // namespace

StructuralModel structural_model(const StructuralModelRequest& r, const Matrix& y) {
  const bool trend = r.kind == "local-linear-trend";
  check(trend || r.kind == "local-level",
        fmt::format("Option '{}' must be local-level or local-linear-trend; got '{}'.",
                    spelled("model"), r.kind));
  check(y.cols() == 1 && y.rows() >= 1,
        fmt::format("A structural model observes one series: y must be one column of at least one "
                    "step; got {}×{}.",
                    y.rows(), y.cols()));
  check(!r.slope_var || trend, fmt::format("Option '{}' applies only to {} local-linear-trend.",
                                           spelled("slope_var"), spelled("model")));
  if (r.init_mean) {
    check(std::isfinite(*r.init_mean),
          fmt::format("Option '{}' must be finite; got {}.", spelled("init_mean"), *r.init_mean));
  }
  check(r.init_mean || !std::isnan(y(0, 0)),
        fmt::format("The first observation is missing, so the initial level cannot default to "
                    "it; give {}.",
                    spelled("init_mean")));
  StructuralModel s;
  s.trend = trend;
  s.init_mean = r.init_mean.value_or(y(0, 0));
  s.init_var = r.init_var.value_or(1e7);
  check_positive(spelled("init_var"), s.init_var);
  if (!r.init_mean) {
    s.assumptions.push_back(fmt::format(
        "the initial level's prior mean is the first observation, {:.6g} (give {})", s.init_mean,
        spelled("init_mean")));
  }
  if (!r.init_var) {
    s.assumptions.push_back(fmt::format(
        "the initial state's prior variance is 1e7, a diffuse start (give {})", spelled("init_var")));
  }
  const auto build = [&](double v, double w, double z) {
    if (!trend) return StateSpaceModel::local_level(v, w, s.init_mean, s.init_var);
    return StateSpaceModel::local_linear_trend(v, w, z, (Vector(2) << s.init_mean, 0.0).finished(),
                                               s.init_var * Matrix::Identity(2, 2));
  };
  if (r.obs_var) check_positive(spelled("obs_var"), *r.obs_var);
  if (r.state_var) check_nonnegative(spelled("state_var"), *r.state_var);
  if (r.slope_var) check_nonnegative(spelled("slope_var"), *r.slope_var);
  s.obs_var = r.obs_var.value_or(0);
  s.state_var = r.state_var.value_or(0);
  s.slope_var = r.slope_var.value_or(0);
  if (r.fit) {
    // The variance of the observed values (the missing ones left out).
    Vector observed(y.rows());
    Index count = 0;
    for (Index t = 0; t < y.rows(); ++t)
      if (!std::isnan(y(t, 0))) observed[count++] = y(t, 0);
    const Vector obs = observed.head(count);
    const double var_y = count > 0 ? (obs.array() - obs.mean()).square().mean() : 0.0;
    check(var_y > 0, "The observed values are constant; their noise variances cannot be fitted.");
    // Given variances are the fit's start, on log variances: a zero start has no logarithm.
    for (const auto& [name, value] :
         {std::pair{"state_var", r.state_var}, std::pair{"slope_var", r.slope_var}}) {
      check(!value || *value > 0,
            fmt::format("Option '{}' is where {} starts, on log variances, and must be positive; "
                        "got {}.",
                        spelled(name), spelled("fit"), value.value_or(0)));
    }
    Vector start(trend ? 3 : 2);
    start[0] = r.obs_var.value_or(var_y / 2);
    start[1] = r.state_var.value_or(var_y / 10);
    if (trend) start[2] = r.slope_var.value_or(var_y / 1000);
    s.fit = fit_variances([&](const Vector& p) { return build(p[0], p[1], trend ? p[2] : 0.0); },
                          y, start, r.nelder_mead);
    s.obs_var = s.fit->variances[0];
    s.state_var = s.fit->variances[1];
    if (trend) s.slope_var = s.fit->variances[2];
  } else {
    check(r.obs_var && r.state_var,
          fmt::format("A structural model needs {} V > 0 and {} W ≥ 0, or {} to estimate them.",
                      spelled("obs_var"), spelled("state_var"), spelled("fit")));
  }
  s.model = build(s.obs_var, s.state_var, s.slope_var);
  s.states = trend ? std::vector<std::string>{"level", "slope"} : std::vector<std::string>{"level"};
  return s;
}

KalmanSummary::KalmanSummary(StateSpaceModel model, const Matrix& y,
                             std::vector<std::string> states)
    : model_(std::move(model)), states_(std::move(states)) {
  model_.validate();
  check(y.cols() == model_.obs_dim(),
        fmt::format("y has {} columns but the observation matrix has {} rows; they must match.",
                    y.cols(), model_.obs_dim()));
  const Index n = model_.state_dim();
  if (states_.empty())
    for (Index i = 0; i < n; ++i) states_.push_back(fmt::format("x{}", i));
  check(static_cast<Index>(states_.size()) == n,
        fmt::format("The model has {} states but {} names were given.", n, states_.size()));
  result_ = kalman_filter(model_, y);  // each update one ρ = 1 BLR step
  kalman_smooth(model_, y, result_);
  for (Index t = 0; t < y.rows(); ++t) observed_ += y.row(t).array().isNaN().any() ? 0 : 1;
}

StateBands KalmanSummary::filtered(Index state, double level) const {
  check(state >= 0 && state < model_.state_dim(),
        fmt::format("State {} is not one of the model's {}.", state, model_.state_dim()));
  // Row t of *_cov is vec(P_t); the variance of state i is entry i·n + i.
  const Index n = model_.state_dim();
  return bands(states_[static_cast<std::size_t>(state)], result_.filtered_mean.col(state),
               result_.filtered_cov.col(state * n + state), level);
}

StateBands KalmanSummary::smoothed(Index state, double level) const {
  check(state >= 0 && state < model_.state_dim(),
        fmt::format("State {} is not one of the model's {}.", state, model_.state_dim()));
  const Index n = model_.state_dim();
  return bands(states_[static_cast<std::size_t>(state)], result_.smoothed_mean.col(state),
               result_.smoothed_cov.col(state * n + state), level);
}

Matrix KalmanSummary::smoothed_sd() const {
  const Index n = model_.state_dim();
  Matrix sd(steps(), n);
  for (Index i = 0; i < n; ++i)
    sd.col(i) = result_.smoothed_cov.col(i * n + i).cwiseMax(0.0).cwiseSqrt();
  return sd;
}

Forecast KalmanSummary::forecast(Index steps, double level) const {
  check_level(level);
  check(steps >= 1 && steps <= 1000000,
        fmt::format("A forecast needs between 1 and 10^6 steps; got {}.", steps));
  const Index p = model_.obs_dim(), last = result_.steps() - 1;
  const Matrix& a = model_.transition;
  const Matrix& c = model_.observation;
  Vector m = result_.filtered_mean.row(last).transpose();
  Matrix cov = result_.filtered_covariance(last);
  check_level(level);
  Forecast f{Matrix(steps, p), Matrix(steps, p), Matrix(steps, p), Matrix(steps, p), level};
  for (Index k = 0; k < steps; ++k) {
    m = a * m;
    cov = a * cov * a.transpose() + model_.state_noise;
    const Vector mean = c * m;
    const Vector var = (c * cov * c.transpose() + model_.obs_noise).diagonal();
    for (Index j = 0; j < p; ++j) {
      f.mean(k, j) = mean[j];
      f.sd(k, j) = std::sqrt(std::max(var[j], 0.0));
    }
  }
  IntervalBands i = gaussian_bands(f.mean, f.sd, level);
  f.lower = std::move(i.lower);
  f.upper = std::move(i.upper);
  return f;
}

std::string KalmanSummary::table(double level) const {
  const StateBands s = smoothed(0, level);
  std::string out = fmt::format(
      "Linear-Gaussian state-space model, Kalman filter and smoother\n"
      "Steps: {} ({} observed)   States: {}   Outputs: {}   Log-likelihood: {:.4f}\n",
      steps(), observed_, model_.state_dim(), model_.obs_dim(), log_likelihood());
  out += fmt::format("Smoothed '{}':\n{:>8}{:>14}{:>12}{:>14}{:>14}\n", s.state, "step", "mean",
                     "sd", summary_json::tail_heading((1 - level) / 2),
                     summary_json::tail_heading((1 + level) / 2));
  const Index t_max = s.mean.size();
  for (Index t = 0; t < t_max; ++t) {
    if (t_max > 12 && t == 5) out += fmt::format("{:>8}\n", "...");
    if (t_max > 12 && t >= 5 && t < t_max - 5) continue;
    out += fmt::format("{:>8}{:>14.6g}{:>12.4g}{:>14.6g}{:>14.6g}\n", t + 1, s.mean[t], s.sd[t],
                       s.lower[t], s.upper[t]);
  }
  return out;
}

nlohmann::json KalmanSummary::fields(double level) const {
  check_level(level);
  return {{"log_likelihood", log_likelihood()},
          {"level", level},
          {"states", states_},
          {"observed_steps", observed_}};
}

KalmanArrays KalmanSummary::arrays(double level) const {
  StateBands f = filtered(0, level), s = smoothed(0, level);
  KalmanArrays a;
  a.vectors = {{"filtered_mean", std::move(f.mean)},
               {"filtered_var", result_.filtered_cov.col(0)},
               {"filtered_lower", std::move(f.lower)},
               {"filtered_upper", std::move(f.upper)},
               {"smoothed_mean", std::move(s.mean)},
               {"smoothed_var", result_.smoothed_cov.col(0)},
               {"smoothed_lower", std::move(s.lower)},
               {"smoothed_upper", std::move(s.upper)}};
  a.rows = {{"smoothed_states", result_.smoothed_mean}, {"smoothed_states_sd", smoothed_sd()}};
  return a;
}

nlohmann::json KalmanSummary::to_json(double level) const {
  nlohmann::json j = fields(level);
  const KalmanArrays a = arrays(level);
  for (const auto& [name, v] : a.vectors) j[name] = summary_json::vector(v);
  for (const auto& [name, m] : a.rows) j[name] = summary_json::matrix(m);
  return j;
}

}  // namespace blr::inference
