// Decoupled weight decay applied after the mean step: m' ← (1 − c)·m'.
//
// In Bayesian filtering this is the mean part of the prior dynamics, μ_prior(t+1) = (1 − A)μ_post(t)
// (Aitchison 2020, eqs. 3a and 9): it is applied after the data update, so the next gradient is
// taken at the predicted mean, and it is not scaled by the preconditioner — AdamW's decoupling
// (Loshchilov & Hutter 2019), which multiplies the mean by (1 − ηλ) before the step instead. The
// two orders differ by c·(m − m') per step, a second-order term.
#pragma once

#include "blr/core/error.hpp"
#include "blr/stage/coordinate.hpp"

namespace blr::stage {

struct DecoupledDecay {
  /// In the mean phase, after every other stage (the last is Clip, kClipOrder).
  static constexpr int kOrder = kClipOrder + 10;
  static constexpr bool kDiagonalOnly = false;
  double rate = 0.0;  ///< c ∈ [0, 1)
  void validate() const { check_range("weight_drift", rate, 0.0, 1.0, false, true); }

  template <class T>
  struct Step {
    T keep;  ///< 1 − c
    template <class V>
    void mean(Coordinate<V>& c) const { c.new_mean = c.new_mean * keep; }
  };
  template <class T>
  Step<T> at(const StepContext&) const { return {static_cast<T>(1.0 - rate)}; }
};

}  // namespace blr::stage
