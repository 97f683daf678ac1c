// The improved-BLR positive-definite correction (Lin, Schmidt & Khan, ICML 2020).
//
// The plain precision step S' = (1−ρ)S + ρĤ can leave the cone of positive-definite matrices
// when Ĥ is indefinite. The Riemannian step with a second-order retraction adds
// (ρ²/2)(S − Ĥ)S⁻¹(S − Ĥ):
//
//     S' = (1−ρ)S + ρĤ + (ρ²/2)(S − Ĥ) S⁻¹ (S − Ĥ) = ½S + ½(S − ρG)S⁻¹(S − ρG),  G = S − Ĥ,
//
// positive definite for any symmetric Ĥ and ρ > 0. For a diagonal S it is IVON's Hessian update
// (research/algorithms.md §1.2 step 7, §9). `enabled = false` keeps the stage in a policy's type
// with a zero coefficient (the term is then exactly 0), for presets that switch it at run time.
#pragma once

#include "blr/stage/coordinate.hpp"

namespace blr::stage {

struct IblrCorrection {
  static constexpr int kOrder = kCorrectionOrder;
  static constexpr bool kDiagonalOnly = false;
  bool enabled = true;
  void validate() const {}

  template <class T>
  struct Step {
    T half_rate2;  ///< ρ²/2
    template <class V>
    void precision(Coordinate<V>& c) const {
      const V gap = c.precision - c.curvature;
      c.new_precision = c.new_precision + half_rate2 * gap * gap / c.precision;
    }
  };
  template <class T>
  Step<T> at(const StepContext& s) const {
    return {static_cast<T>(enabled ? 0.5 * s.precision_rate * s.precision_rate : 0.0)};
  }
};

}  // namespace blr::stage
