// Elementwise clipping of the preconditioned step (IVON, Shen et al. 2024; research/algorithms.md
// §1.2 step 10): Δ = clip(d/P, −r, r). With r = +∞ the stage changes nothing, exactly.
#pragma once

#include <limits>

#include "blr/core/error.hpp"
#include "blr/stage/coordinate.hpp"

namespace blr::stage {

struct Clip {
  static constexpr int kOrder = kClipOrder;
  static constexpr bool kDiagonalOnly = true;
  double radius = std::numeric_limits<double>::infinity();  ///< r > 0
  void validate() const {
    check(radius > 0.0, fmt::format("Option 'clip_radius' must be positive (+inf: no clipping); "
                                    "got {}.",
                                    radius));
  }
  template <class T>
  struct Step {
    T radius;
    template <class V>
    void step(Coordinate<V>& c) const { c.step = clip(c.step, radius); }
  };
  template <class T>
  Step<T> at(const StepContext&) const { return {static_cast<T>(radius)}; }
};

}  // namespace blr::stage
