// A Gaussian prior N(0, δ⁻¹I) as stages of the BLR step (Khan & Rue 2023, §3: the prior is part
// of the loss ℓ̄ + (δ/2)‖θ‖², so it adds δm to the gradient and δ to the curvature).
//
// Where the δm term enters differs between methods, so each placement is its own stage:
//   PriorInGradient   g ← ĝ + δm before any averaging (L2 in the gradient: Adam-L2, Vadam, VOGN)
//   PriorInDirection  d ← d + δm after the average (IVON's coupled weight decay; the exact BLR)
//   PriorInCurvature  H ← Ĥ + δ (the exact BLR; IVON; VOGN's δ̃ + damping)
// A full prior is PriorInDirection + PriorInCurvature (or PriorInGradient + PriorInCurvature).
#pragma once

#include "blr/core/error.hpp"
#include "blr/stage/coordinate.hpp"

namespace blr::stage {

struct PriorInGradient {
  static constexpr int kOrder = kGradientPhase;
  static constexpr bool kDiagonalOnly = false;
  double precision = 0.0;  ///< δ ≥ 0
  void validate() const { check_nonnegative("prior_precision", precision); }

  template <class T>
  struct Step {
    T delta;
    template <class V>
    void gradient(Coordinate<V>& c) const { c.gradient = c.gradient + delta * c.mean; }
  };
  template <class T>
  Step<T> at(const StepContext&) const { return {static_cast<T>(precision)}; }
};

struct PriorInDirection {
  static constexpr int kOrder = kDirectionPhase;
  static constexpr bool kDiagonalOnly = false;
  double precision = 0.0;  ///< δ ≥ 0
  void validate() const { check_nonnegative("prior_precision", precision); }

  template <class T>
  struct Step {
    T delta;
    template <class V>
    void direction(Coordinate<V>& c) const { c.direction = c.direction + delta * c.mean; }
  };
  template <class T>
  Step<T> at(const StepContext&) const { return {static_cast<T>(precision)}; }
};

struct PriorInCurvature {
  static constexpr int kOrder = kCurvaturePhase;
  static constexpr bool kDiagonalOnly = false;
  double precision = 0.0;  ///< δ ≥ 0 added to Ĥ
  void validate() const { check_nonnegative("prior_precision", precision); }

  template <class T>
  struct Step {
    T delta;
    template <class V>
    void curvature(Coordinate<V>& c) const { c.curvature = c.curvature + delta; }
  };
  template <class T>
  Step<T> at(const StepContext&) const { return {static_cast<T>(precision)}; }
};

}  // namespace blr::stage
