// Natural momentum (Khan & Rue 2023, eq. 80): λ_{t+1} = λ_t − ρ∇_μ… + γ(λ_t − λ_{t−1}), written in
// the (m, S) coordinates of the Gaussian step:
//
//     S_{t+1} = … + γ(S_t − S_{t−1}),     m_{t+1} = m_t − ρP⁻¹ĝ + γP⁻¹S_{t−1}(m_t − m_{t−1}).
//
// (Eq. 81 of the paper prints the mean term without γ; we follow eq. 80.) Before the first step
// the previous values equal the current ones, so the terms vanish.
#pragma once

#include "blr/core/error.hpp"
#include "blr/stage/coordinate.hpp"

namespace blr::stage {

struct NaturalMomentum {
  static constexpr int kOrder = kMomentumOrder;
  static constexpr bool kDiagonalOnly = false;
  double gamma = 0.0;  ///< γ ∈ [0, 1)
  void validate() const { check_range("natural_momentum", gamma, 0.0, 1.0, false, true); }

  template <class T>
  struct Step {
    T gamma;
    template <class V>
    void precision(Coordinate<V>& c) const {
      c.new_precision = c.new_precision + gamma * (c.precision - c.precision_prev);
    }
    template <class V>
    void mean(Coordinate<V>& c) const {
      c.new_mean = c.new_mean + gamma * c.precision_prev * (c.mean - c.mean_prev) / c.preconditioner;
    }
  };
  template <class T>
  Step<T> at(const StepContext&) const { return {static_cast<T>(gamma)}; }
};

}  // namespace blr::stage
