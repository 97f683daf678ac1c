// The step policy of a Gaussian BLR step: which stages run, with which rates.
//
// algorithm = family × estimator × step policy (DESIGN §1). The policy holds the step sizes of
// the mean and of the precision (ρ_m, ρ_S; eq. 12 uses one ρ for both, Adam-like methods use
// α and 1−β₂), the prior precision δ (a Gaussian prior N(0, δ⁻¹I) added to the loss:
// ĝ += δm, Ĥ += δI), gradient averaging (β₁, debiasing), natural momentum γ (eq. 80),
// precision debiasing and square-root scaling (RMSprop/Adam, eqs. 38, 78), the improved-BLR
// positive-definite correction (Lin et al. 2020), elementwise clipping (IVON) and whether the mean
// step uses the new precision S_{t+1} (eq. 12) or the old one S_t.
#pragma once

#include <limits>

#include "blr/core/error.hpp"
#include "blr/stage/schedule.hpp"

namespace blr {

struct StepPolicy {
  Schedule mean_rate = Schedule::constant(0.1);       ///< ρ_m (α), > 0
  Schedule precision_rate = Schedule::constant(0.1);  ///< ρ_S (β), in [0, 1]; 0 keeps S fixed
  double prior_precision = 0.0;                       ///< δ ≥ 0
  bool prior_in_average = false;   ///< δm enters the gradient average (Adam-L2, Vadam) or is added after it (IVON)
  bool prior_in_curvature = true;  ///< δ is added to Ĥ (false: Vadam keeps the prior out of its second moment)
  double gradient_averaging = 0.0;                    ///< β₁ ∈ [0, 1)
  bool debias_gradient = false;
  double natural_momentum = 0.0;  ///< γ ∈ [0, 1) of eq. 80
  bool debias_precision = false;
  bool sqrt_scaling = false;
  double sqrt_inner_offset = 0.0;  ///< c_in ≥ 0
  double sqrt_outer_offset = 0.0;  ///< c_out ≥ 0
  bool pd_correction = false;
  double clip_radius = std::numeric_limits<double>::infinity();  ///< > 0
  bool use_new_precision = true;
  bool check_finite = true;

  void validate() const {
    mean_rate.validate("mean_rate");
    precision_rate.validate("precision_rate");
    check(mean_rate.initial > 0.0, "Option 'mean_rate' must be positive.");
    check_range("precision_rate", precision_rate.initial, 0.0, 1.0);
    check_nonnegative("prior_precision", prior_precision);
    check_range("gradient_averaging", gradient_averaging, 0.0, 1.0, false, true);
    check_range("natural_momentum", natural_momentum, 0.0, 1.0, false, true);
    check_nonnegative("sqrt_inner_offset", sqrt_inner_offset);
    check_nonnegative("sqrt_outer_offset", sqrt_outer_offset);
    check(clip_radius > 0.0, "Option 'clip_radius' must be positive (use infinity for no clipping).");
    check(!debias_precision || precision_rate.kind == Schedule::Kind::constant,
          "Option 'debias_precision' needs a constant precision_rate.");
    check(!debias_precision || precision_rate.initial > 0.0,
          "Option 'debias_precision' needs a positive precision_rate.");
  }
};

}  // namespace blr
