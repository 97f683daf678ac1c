// Averaging of the gradient (Adam's first moment, IVON's momentum; Khan & Rue 2023, App. F,
// eq. 77) and heavy-ball momentum (VOGN as in Osawa et al. 2019):
//
//     u_{t+1} = β u_t + w ĝ,   d = c·u_{t+1},
//     w = 1 − β (an exponential average) or 1 (heavy ball),  c = 1/(1 − βᵗ) if debiased, else 1.
//
// With β = 0 and w = 1 the stage passes ĝ through unchanged (d = ĝ), exactly.
#pragma once

#include <cmath>

#include "blr/core/error.hpp"
#include "blr/stage/coordinate.hpp"

namespace blr::stage {

struct GradientAverage {
  static constexpr int kOrder = kAverageOrder;
  static constexpr bool kDiagonalOnly = false;
  double beta = 0.9;        ///< β ∈ [0, 1)
  bool debias = false;      ///< divide by 1 − βᵗ
  bool heavy_ball = false;  ///< w = 1 instead of 1 − β
  void validate() const { check_range("beta1", beta, 0.0, 1.0, false, true); }

  template <class T>
  struct Step {
    T beta, weight, scale;
    template <class V>
    void direction(Coordinate<V>& c) const {
      c.new_average = beta * c.average + weight * c.gradient;
      c.direction = scale * c.new_average;
    }
  };
  template <class T>
  Step<T> at(const StepContext& s) const {
    const double weight = heavy_ball ? 1.0 : 1.0 - beta;
    const double scale = debias ? 1.0 / (1.0 - std::pow(beta, static_cast<double>(s.t))) : 1.0;
    return {static_cast<T>(beta), static_cast<T>(weight), static_cast<T>(scale)};
  }
};

}  // namespace blr::stage
