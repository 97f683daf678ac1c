// The posterior summary of a linear-Gaussian state-space model (issue 31, item 2), and the
// structural models a statistician starts from; what `blr infer kalman` prints and writes and
// what `blr.infer.kalman` and `blr.infer.structural` return.
//
// Structural models (Harvey 1989; Durbin & Koopman 2012, §2 and §3.2):
//   local level         y_t = μ_t + ε_t,  μ_{t+1} = μ_t + η_t,  ε ~ N(0, V), η ~ N(0, W)
//   local linear trend  y_t = μ_t + ε_t,  μ_{t+1} = μ_t + ν_t + η_t,  ν_{t+1} = ν_t + ζ_t,
//                       ζ ~ N(0, Z)
// with μ₁ ~ N(m₀, P₀) (m₀ the first observation and P₀ = 10⁷ unless given: a diffuse start, said
// in `assumptions`). Unknown variances are fitted by maximum likelihood, Nelder–Mead on their
// logarithms (kalman.hpp's fit_variances), started at V = s²/2, W = s²/10, Z = s²/1000 (s² the
// variance of the observed values) unless given.
//
// The summary holds the filter's and the smoother's marginals of each state, x_t | y_1:t and
// x_t | y_1:T, each N(m, P): intervals m ± z·√P_ii at any level (intervals.hpp); the
// log-likelihood by the prediction-error decomposition; and forecasts h steps past the data,
//   x_{T+k} | y_1:T ~ N(A^k m_T, A P Aᵀ + Q iterated),  y_{T+k} | y_1:T ~ N(C x̄, C P Cᵀ + R).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "blr/core/types.hpp"
#include "blr/inference/kalman.hpp"
#include "blr/inference/nelder_mead.hpp"

namespace blr::inference {

/// A local-level or local-linear-trend model: variances given, or fitted (`fit`) from the given
/// ones as starting values.
struct StructuralModelRequest {
  std::string kind = "local-level";  ///< local-level or local-linear-trend
  std::optional<double> obs_var, state_var, slope_var;  ///< V, W, Z (Z: the trend only)
  std::optional<double> init_mean;  ///< m₀ (default: the first observation)
  std::optional<double> init_var;   ///< P₀ (default 10⁷)
  bool fit = false;
  NelderMeadOptions nelder_mead;
};

struct StructuralModel {
  StateSpaceModel model;
  std::vector<std::string> states;  ///< level (and slope)
  double obs_var = 0, state_var = 0, slope_var = 0, init_mean = 0, init_var = 0;
  bool trend = false;
  std::optional<VarianceFit> fit;        ///< when the variances were fitted
  std::vector<std::string> assumptions;  ///< one sentence per default taken
};

/// The model of `request` for the observations y (one column; NaN: missing). Throws a sentence
/// naming the option when the request is incomplete or out of range (the CLI's flags and Python's
/// keywords share their names). A fit that stops at its evaluation cap is returned with
/// fit->converged false; the caller names its own option to raise.
StructuralModel structural_model(const StructuralModelRequest& request, const Matrix& y);

/// One state's marginals over the steps: mean, sd and the interval at `level`.
struct StateBands {
  std::string state;
  Vector mean, sd, lower, upper;
  double level = 0.95;
};

/// Forecasts of every output h = 1..steps past the data: one row per step, one column per output.
struct Forecast {
  Matrix mean, sd, lower, upper;
  double level = 0.95;
};

/// The per-step arrays of a summary by name: vectors over the steps, and matrices of one row per
/// step (every state).
struct KalmanArrays {
  std::vector<std::pair<std::string, Vector>> vectors;
  std::vector<std::pair<std::string, Matrix>> rows;
};

class KalmanSummary {
 public:
  /// Runs the filter and the smoother over the rows of y (T×p; a NaN row is missing) and keeps
  /// what they give; `states` names the states (default x0, x1, ...).
  KalmanSummary(StateSpaceModel model, const Matrix& y, std::vector<std::string> states = {});

  const StateSpaceModel& model() const { return model_; }
  const KalmanResult& result() const { return result_; }
  const std::vector<std::string>& states() const { return states_; }
  double log_likelihood() const { return result_.log_likelihood; }
  Index steps() const { return result_.steps(); }
  /// Steps with an observation (a NaN row has none).
  Index observed_steps() const { return observed_; }

  StateBands filtered(Index state = 0, double level = 0.95) const;
  StateBands smoothed(Index state = 0, double level = 0.95) const;
  /// T×n: the smoothed sd of every state.
  Matrix smoothed_sd() const;
  Forecast forecast(Index steps, double level = 0.95) const;
  /// The model, the log-likelihood and the first state's smoothed marginals at the first and
  /// last steps, as text.
  std::string table(double level = 0.95) const;
  /// log_likelihood, level, states and observed_steps.
  nlohmann::json fields(double level = 0.95) const;
  /// Per step: filtered_mean, filtered_var, filtered_lower, filtered_upper and smoothed_* of the
  /// first state; smoothed_states and smoothed_states_sd (rows of every state).
  KalmanArrays arrays(double level = 0.95) const;
  /// fields() and arrays() as one JSON object (the CLI writes the same keys, its arrays
  /// streamed: apps/blr/result_document.hpp).
  nlohmann::json to_json(double level = 0.95) const;

 private:
  StateSpaceModel model_;
  KalmanResult result_;
  std::vector<std::string> states_;
  Index observed_ = 0;
};

}  // namespace blr::inference
