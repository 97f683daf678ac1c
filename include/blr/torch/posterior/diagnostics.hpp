// What a mean-field Gaussian posterior has learned so far, read the way a user tuning IVON needs
// it (the "Hessian stays at h₀" question of the ivon package's users, ivon#1).
//
// For an optimizer with a diagonal Gaussian posterior kept as a curvature h per coordinate (IVON's
// Hessian estimate, VOGN's and Vadam's s; MeanFieldOptimizer), after t steps:
//   - quantiles of h and of the standard deviation σ = 1/√(posterior precision) it implies;
//   - the share of coordinates with |h − h₀| ≤ 1 % · h₀: the posterior has not moved from its
//     initial value there. h is an average with weight 1 − β₂ per step, so after t steps at most
//     1 − β₂ᵗ of it can come from the data (β₂ = 0.99999, t = 2 345: 2.3 %); σ is then set by h₀;
//   - the share with |h − h₀β₂ᵗ| ≤ 1 % · h₀β₂ᵗ: where h goes when the estimates ĥ are far below
//     it (h ← β₂h + (1 − β₂)ĥ with ĥ ≈ 0), so that h₀ and β₂ act as a schedule of σ;
//   - with a finite clip radius ξ (IVON's clip_radius), the share of coordinates whose
//     preconditioned step |m̂ + δμ|/(h + δ) reaches ξ and is clipped (m̂ the debiased momentum).
// A run warns once when, after a set share of its steps, most coordinates are still at h₀, and
// names the options to change (posterior_warning).
#pragma once

#include <torch/optim/optimizer.h>
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace blr::torch {

/// The quantile levels reported for h and σ.
inline const std::vector<double>& diagnostic_levels() {
  static const std::vector<double> levels = {0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 1.0};
  return levels;
}

struct PosteriorDiagnostics {
  int64_t steps = 0;        ///< t: updates made so far
  int64_t coordinates = 0;  ///< number of scalar parameters
  std::vector<double> curvature_quantiles;  ///< h at diagnostic_levels()
  std::vector<double> sigma_quantiles;      ///< σ at diagnostic_levels()
  double initial_curvature = std::numeric_limits<double>::quiet_NaN();  ///< h₀ (first group)
  double share_at_initial = 0.0;  ///< share of coordinates with |h − h₀| ≤ 1 % · h₀
  /// Share of coordinates whose h is within 1 % of h₀·β₂ᵗ, where h goes when every estimate ĥ is
  /// far below it: the prior's decay rather than the data sets their σ (NaN without a β₂).
  double share_decaying = std::numeric_limits<double>::quiet_NaN();
  /// Share of coordinates whose step reaches the clip radius (NaN: no finite clip radius).
  double share_clipped = std::numeric_limits<double>::quiet_NaN();
  double beta2 = std::numeric_limits<double>::quiet_NaN();  ///< β₂ when the options have one

  nlohmann::json to_json() const;
  static PosteriorDiagnostics from_json(const nlohmann::json& j);
};

/// The share of coordinates still at h₀ above which a run is warned (posterior_warning).
inline constexpr double kStuckShare = 0.9;
/// The share of the run's steps after which the warning may be given.
inline constexpr double kStuckAfterShare = 0.25;

/// The diagnostics of `optimizer` (registered as `name`), or nothing when it keeps no
/// mean-field Gaussian posterior (point estimates, K-FAC, BayesBiNN, MC dropout).
std::optional<PosteriorDiagnostics> posterior_diagnostics(::torch::optim::Optimizer& optimizer,
                                                          const std::string& name);

/// A one-sentence warning when the posterior has not moved from its initial value — at least
/// kStuckShare of the coordinates within 1 % of h₀ once `run_share` ≥ kStuckAfterShare of the
/// run's steps are done — naming the options to change; empty otherwise.
std::string posterior_warning(const PosteriorDiagnostics& d, double run_share,
                              const std::string& name);

}  // namespace blr::torch
