// Exponential averaging of the gradient with optional debiasing (Adam's first moment; IVON's
// momentum; Khan & Rue 2023 App. F, eq. 77):
//
//     u_t = β u_{t−1} + (1 − β) ĝ_t,    û_t = u_t / (1 − β^t)   (debiased, t = 1, 2, ...).
#pragma once

#include <cmath>

#include "blr/core/types.hpp"

namespace blr::stage {

/// Updates `average` in place and returns the direction to use (debiased when asked).
inline Vector average_gradient(Vector& average, const Vector& gradient, double beta, bool debias,
                               long t /* 1-based */) {
  if (average.size() != gradient.size()) average = Vector::Zero(gradient.size());
  average = beta * average + (1.0 - beta) * gradient;
  if (!debias) return average;
  return average / (1.0 - std::pow(beta, static_cast<double>(t)));
}

}  // namespace blr::stage
