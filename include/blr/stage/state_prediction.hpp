// The predict step of a Kalman filter on each coordinate, as a stage of the BLR step: the
// posterior of the last step is propagated through Ornstein–Uhlenbeck prior dynamics before the
// new data are added (Aitchison 2020, "Bayesian filtering unifies adaptive and non-adaptive neural
// network optimization methods", eqs. 1, 3b, 4a and 8–12).
//
// With the dynamics z(t+1) = √d·z(t) + noise of variance q, a variance s² becomes d·s² + q, so a
// precision S becomes S/(d + q·S). The stage adds that predicted precision to the curvature term:
//
//     S' = keep·S + rate·Ĥ + S/(d + q·S)      (the presets using it set keep = 0, rate = 1)
//
// so that with keep = 0, rate = 1 the step is the filter's correction, S' = Ĥ + S_prior (eq. 4a),
// and the mean step d/S' that follows is eq. 6. AdaBayes (blr/algorithms/adabayes.hpp) takes
// d = exp(−η²/σ²), q = σ²(1 − d), whose stationary variance is σ² (the reference code's form of
// eq. 11; the paper's first-order factor (1 − η²/2σ²)² and η² agree with it to O(η⁴)).
#pragma once

#include "blr/core/error.hpp"
#include "blr/stage/coordinate.hpp"

namespace blr::stage {

struct StatePrediction {
  /// In the precision phase, after the curvature stages (kCurvaturePhase) and before the iBLR
  /// correction (kCorrectionOrder).
  static constexpr int kOrder = kCurvaturePhase + 5;
  static constexpr bool kDiagonalOnly = true;
  double decay = 1.0;  ///< d ∈ (0, 1]: the factor on the variance
  double noise = 0.0;  ///< q ≥ 0: the variance added
  void validate() const {
    check_range("state_decay", decay, 0.0, 1.0, true, false);
    check_nonnegative("state_noise", noise);
  }

  template <class T>
  struct Step {
    T decay, noise;
    template <class V>
    void precision(Coordinate<V>& c) const {
      c.new_precision = c.new_precision + c.precision / (decay + noise * c.precision);
    }
  };
  template <class T>
  Step<T> at(const StepContext&) const {
    return {static_cast<T>(decay), static_cast<T>(noise)};
  }
};

}  // namespace blr::stage
