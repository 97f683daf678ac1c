// Small tensor helpers shared by the LibTorch tests: double-precision tensors from values, a
// separable quadratic loss, the largest absolute value and difference (on any device).
#pragma once

#include <ATen/ATen.h>
#include <torch/types.h>

#include <limits>
#include <vector>

#include "blr/core/types.hpp"

namespace blr::torch::testing {

/// The machine epsilon of double.
inline constexpr double kEps = std::numeric_limits<double>::epsilon();

/// Options for float64 tensors.
inline const auto kF64 = ::torch::dtype(::torch::kFloat64);

/// A float64 tensor of the values `v`.
inline ::at::Tensor f64(std::vector<double> v) { return ::torch::tensor(v, kF64); }

/// An Eigen vector as a float64 tensor (a copy).
inline ::at::Tensor to_tensor(const blr::Vector& v) {
  return ::torch::from_blob(blr::Vector(v).data(), {v.size()}, kF64).clone();
}

/// A separable quadratic with varied curvature a ∈ [0.5, 3]: Σ_i ½ a_i (θ_i − 1)².
inline ::at::Tensor quadratic(const ::at::Tensor& theta) {
  const auto a = ::torch::linspace(0.5, 3.0, theta.numel(), theta.options());
  return (0.5 * a * (theta - 1).square()).sum();
}

/// max |t| over the entries.
inline double max_abs(const ::at::Tensor& t) { return t.abs().max().item<double>(); }

/// max |a − b| over the entries, compared on the CPU.
inline double max_abs_diff(const ::at::Tensor& a, const ::at::Tensor& b) {
  return (a.detach().cpu() - b.detach().cpu()).abs().max().item<double>();
}

}  // namespace blr::torch::testing
