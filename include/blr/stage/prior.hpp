// A Gaussian prior N(m₀, diag(δ)⁻¹) as stages of the BLR step (Khan & Rue 2023, §3: the prior is
// part of the loss ℓ̄ + ½(θ − m₀)ᵀdiag(δ)(θ − m₀), so it adds δ⊙(m − m₀) to the gradient and δ to
// the curvature).
//
// Where the δ⊙(m − m₀) term enters differs between methods, so each placement is its own stage:
//   PriorInGradient   g ← ĝ + δ(m − m₀) before any averaging (L2 in the gradient: Adam-L2, Vadam,
//                     VOGN)
//   PriorInDirection  d ← d + δ(m − m₀) after the average (IVON's coupled weight decay; the exact
//                     BLR)
//   PriorInCurvature  H ← Ĥ + δ (the exact BLR; IVON; VOGN's δ̃ + damping)
// A full prior is PriorInDirection + PriorInCurvature (or PriorInGradient + PriorInCurvature).
//
// By default the prior is N(0, δ⁻¹I): δ is the stage's scalar and m₀ = 0, for which m − m₀ is m
// itself (no operation: the step is bitwise what it is without m₀). A coordinate with a prior of
// its own (PriorCoordinate: δ and m₀ per coordinate, e.g. the previous task's posterior as the
// next task's prior in continual learning, blr/torch/posterior/continual.hpp) makes the same stages read
// δ and m₀ from it instead. The equations are written once below.
#pragma once

#include "blr/core/error.hpp"
#include "blr/stage/coordinate.hpp"

namespace blr::stage {

/// A coordinate whose prior is its own: N(m₀, δ⁻¹) per coordinate (inputs, like the others).
template <class V>
struct PriorCoordinate : Coordinate<V> {
  V prior_mean;       ///< m₀
  V prior_precision;  ///< δ (per coordinate, ≥ 0)
};

/// The mean m₀ = 0 of the default prior N(0, δ⁻¹I).
struct ZeroMean {};

template <class V>
const V& deviation(const V& mean, ZeroMean) { return mean; }
template <class V>
auto deviation(const V& mean, const V& prior_mean) { return mean - prior_mean; }

/// δ and m₀ of a coordinate: the stage's scalar δ and m₀ = 0, or the coordinate's own.
template <class T, class V>
const T& prior_precision_of(const T& delta, const Coordinate<V>&) { return delta; }
template <class T, class V>
const V& prior_precision_of(const T&, const PriorCoordinate<V>& c) { return c.prior_precision; }
template <class V>
ZeroMean prior_mean_of(const Coordinate<V>&) { return {}; }
template <class V>
const V& prior_mean_of(const PriorCoordinate<V>& c) { return c.prior_mean; }

/// The prior's gradient δ⊙(m − m₀) at coordinate c (δ: the stage's, unless c has its own).
template <class T, class C>
auto prior_gradient(const T& delta, const C& c) {
  return prior_precision_of(delta, c) * deviation(c.mean, prior_mean_of(c));
}

struct PriorInGradient {
  static constexpr int kOrder = kGradientPhase;
  static constexpr bool kDiagonalOnly = false;
  double precision = 0.0;  ///< δ ≥ 0
  void validate() const { check_nonnegative("prior_precision", precision); }

  template <class T>
  struct Step {
    T delta;
    template <class C>
    void gradient(C& c) const { c.gradient = c.gradient + prior_gradient(delta, c); }
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
    template <class C>
    void direction(C& c) const { c.direction = c.direction + prior_gradient(delta, c); }
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
    template <class C>
    void curvature(C& c) const { c.curvature = c.curvature + prior_precision_of(delta, c); }
  };
  template <class T>
  Step<T> at(const StepContext&) const { return {static_cast<T>(precision)}; }
};

}  // namespace blr::stage
