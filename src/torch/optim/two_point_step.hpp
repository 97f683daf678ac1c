// Internal: the updates of SAM and bSAM (blr/torch/optim/sam.hpp), written once for a scalar (the
// fused CPU loop of sam.cpp) and a TensorValue (every other device and dtype):
//
//   SAM    m' = β·m + g̃ + δ·μ,                   μ' = μ − α·m'
//   bSAM   m' = β₁·m + (1 − β₁)(g̃ + δ·μ),        μ' = μ − α·m'/s,
//          s' = β₂·s + (1 − β₂)(√s·|g| + damping + δ)
//
// with g the gradient at the first point and g̃ the gradient at the ascent point (Foret et al.
// 2021; Möllenhoff & Khan 2023; research/algorithms.md §8.2).
#pragma once

#include <cmath>

#include "blr/stage/coordinate.hpp"
#include "tensor_value.hpp"

namespace blr::torch::detail {

using ::blr::stage::sqrt_of;  // the scalars'; TensorValue's is tensor_value.hpp's
inline float abs_of(float x) {
  return std::abs(x);
}
inline double abs_of(double x) {
  return std::abs(x);
}

struct SamCoefficients {
  double momentum, weight_decay, lr;
};

template <class V>
[[gnu::always_inline]] inline void sam_coordinate(const V& mean, const V& average,
                                                  const V& ascent_grad, const SamCoefficients& k,
                                                  V& new_mean, V& new_average) {
  new_average = k.momentum * average + ascent_grad + k.weight_decay * mean;
  new_mean = mean - k.lr * new_average;
}

struct BsamCoefficients {
  double beta1, beta2, delta, damping, lr;
};

template <class V>
[[gnu::always_inline]] inline void bsam_coordinate(const V& mean, const V& average,
                                                   const V& precision, const V& grad,
                                                   const V& ascent_grad, const BsamCoefficients& k,
                                                   V& new_mean, V& new_average, V& new_precision) {
  new_average = k.beta1 * average + (1.0 - k.beta1) * (ascent_grad + k.delta * mean);
  new_mean = mean - k.lr * new_average / precision;
  new_precision = k.beta2 * precision +
                  (1.0 - k.beta2) * (sqrt_of(precision) * abs_of(grad) + (k.damping + k.delta));
}

}  // namespace blr::torch::detail
