// Exact per-example squared gradients of Linear and Conv2d layers, the curvature statistic of
// VOGN/OGN (Osawa et al. 2019): with the mean minibatch loss  l̄ = (1/M) Σ_i ℓ_i,
//
//   D = (1/M) Σ_i (∇_W ℓ_i)²   (elementwise square; the diagonal empirical Fisher / GGN).
//
// A layer z_i = W a_i + b sees grad_output e_i = ∂l̄/∂z_i = (1/M) ∂ℓ_i/∂z_i, so the gradient of
// example i's own loss is ∇_W ℓ_i = M e_i a_iᵀ and D_W = M Σ_i (e_i)² (a_i²)ᵀ, D_b = M Σ_i e_i².
// For Conv2d the per-example weight gradient is G_i = M E_i P_iᵀ with P_i the unfolded input
// patches (C·kh·kw × L) and E_i the output gradient (O × L); the bias gradient is M Σ_l E_i[:, l]
// (the square of the sum over positions, exact — not torchsso's sum of squares).
#pragma once

#include <ATen/Tensor.h>

#include <array>
#include <cstdint>

namespace blr::torch {

struct SquaredGradients {
  ::at::Tensor weight;
  ::at::Tensor bias;  ///< undefined if the layer has no bias
};

/// input: M×in (layer input a_i), grad_output: M×out (gradient of the MEAN minibatch loss w.r.t.
/// the layer output z_i). Returns (1/M)·Σ_i (∇ℓ_i)² for weight (out×in) and bias (out), exact.
SquaredGradients linear_squared_gradients(const ::at::Tensor& input,
                                          const ::at::Tensor& grad_output, bool bias);

/// Same for Conv2d (input M×C×H×W, grad_output M×O×H'×W'); exact for weight and bias
/// (groups = 1).
SquaredGradients conv2d_squared_gradients(const ::at::Tensor& input,
                                          const ::at::Tensor& grad_output,
                                          std::array<int64_t, 2> kernel,
                                          std::array<int64_t, 2> stride,
                                          std::array<int64_t, 2> padding,
                                          std::array<int64_t, 2> dilation, bool bias);

}  // namespace blr::torch
