// The preconditioner of the mean step, m' = m − α·d/P, and how deep-learning variants change it
// (Khan & Rue 2023, §4.2, eqs. 38 and 78; App. F):
//
//   P = S_{t+1}                      the BLR (eq. 12)
//   OldPrecision     P = S_t         the mean step with the precision before the update
//   PrecisionDebias  P ← P/(1 − keepᵗ)   Adam's second-moment correction (constant rate)
//   SqrtScaling      P ← √(P + c_in) + c_out   RMSprop (eq. 38: c_in = c), Adam (c_out = ε)
//
// The square root makes RMSprop/Adam approximations of the BLR, not instances. These stages are
// defined for diagonal Gaussians only.
#pragma once

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/stage/coordinate.hpp"

namespace blr::stage {

struct OldPrecision {
  static constexpr int kOrder = kOldPrecisionOrder;
  static constexpr bool kDiagonalOnly = false;
  void validate() const {}
  template <class T>
  struct Step {
    template <class V>
    void preconditioner(Coordinate<V>& c) const { c.preconditioner = c.precision; }
  };
  template <class T>
  Step<T> at(const StepContext&) const { return {}; }
};

struct PrecisionDebias {
  static constexpr int kOrder = kDebiasOrder;
  static constexpr bool kDiagonalOnly = true;
  void validate() const {}
  template <class T>
  struct Step {
    T scale;  ///< 1/(1 − keepᵗ)
    template <class V>
    void preconditioner(Coordinate<V>& c) const { c.preconditioner = c.preconditioner * scale; }
  };
  template <class T>
  Step<T> at(const StepContext& s) const {
    return {static_cast<T>(1.0 / (1.0 - std::pow(s.precision_keep, static_cast<double>(s.t))))};
  }
};

struct SqrtScaling {
  static constexpr int kOrder = kSqrtOrder;
  static constexpr bool kDiagonalOnly = true;
  double inner = 0.0;  ///< c_in ≥ 0
  double outer = 0.0;  ///< c_out ≥ 0
  void validate() const {
    check_nonnegative("sqrt_inner_offset", inner);
    check_nonnegative("sqrt_outer_offset", outer);
  }
  template <class T>
  struct Step {
    T inner, outer;
    template <class V>
    void preconditioner(Coordinate<V>& c) const {
      c.preconditioner = sqrt_of(c.preconditioner + inner) + outer;
    }
  };
  template <class T>
  Step<T> at(const StepContext&) const { return {static_cast<T>(inner), static_cast<T>(outer)}; }
};

}  // namespace blr::stage
