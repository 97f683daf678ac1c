// Exact per-example gradients of the layers VOGN/OGN support, the curvature statistic of
// Osawa et al. (2019): with the mean minibatch loss  l̄ = (1/M) Σ_i ℓ_i,
//
//   D = (1/M) Σ_i (∇_θ ℓ_i)²   (elementwise square; the diagonal empirical Fisher / GGN).
//
// Every function here receives grad_output = ∂l̄/∂z, the gradient of the MEAN loss w.r.t. the
// layer output, which for a row z_r owned by example i equals (1/M) ∂ℓ_i/∂z_r. What they return
// is at the same scale: G̃_i = (1/M) ∇ℓ_i restricted to one use of the parameter, the sum over
// the rows example i owns. So D = M Σ_i (Σ_uses G̃_i)²; the square is taken after summing the
// rows and the uses (weight tying), never before.
//
//   Linear z_r = W a_r + b:     G̃_i(W) = Σ_{r∈i} e_r a_rᵀ,   G̃_i(b) = Σ_{r∈i} e_r
//     one row per example:      D_W = M (e²)ᵀ(a²),   D_b = M Σ_r e_r²   (nothing materialised)
//   Conv (1-d, 2-d, groups):    G̃_i(W) = E_i P_iᵀ per group (P_i the unfolded input patches,
//                               E_i the output gradient, C·kh·kw × L and O × L);
//                               G̃_i(b) = Σ_l E_i[:, l]
//   Embedding z_r = W[k_r]:     G̃_i(W)[v] = Σ_{r∈i, k_r = v} e_r  (padding_idx rows excluded)
//   LayerNorm z = x̂ ⊙ γ + β:    G̃_i(γ) = Σ_{r∈i} e_r ⊙ x̂_r,   G̃_i(β) = Σ_{r∈i} e_r,
//                               x̂ = (x − mean)·rstd with LibTorch's saved mean and rstd
//   Broadcast z = y ± α·p:      G̃_i(p) = ±α · sum_to(e_i, shape(p))  (p without a batch dimension)
//             z = y ⊙ p:        G̃_i(p) = sum_to((e ⊙ y)_i, shape(p))
//
// Rows are grouped by example along the leading dimension (batch first): a tensor whose leading
// dimension is M, or a 2-D tensor of R = k·M rows where rows [i·k, (i+1)·k) belong to example i.
#pragma once

#include <ATen/Tensor.h>

#include <array>
#include <cstdint>
#include <vector>

namespace blr::torch {

struct SquaredGradients {
  ::at::Tensor weight;
  ::at::Tensor bias;  ///< undefined if the layer has no bias
};

/// Fast path of a Linear layer whose examples own one row each. input: M×in (layer input a_i),
/// grad_output: M×out (gradient of the MEAN minibatch loss w.r.t. the layer output z_i).
/// Returns (1/M)·Σ_i (∇ℓ_i)² for weight (out×in) and bias (out), exact.
SquaredGradients linear_squared_gradients(const ::at::Tensor& input,
                                          const ::at::Tensor& grad_output, bool bias);

/// Same for Conv2d (input M×C×H×W, grad_output M×O×H'×W'); exact for weight and bias
/// (groups = 1). Computed from conv_weight_per_example / conv_bias_per_example.
SquaredGradients conv2d_squared_gradients(const ::at::Tensor& input,
                                          const ::at::Tensor& grad_output,
                                          std::array<int64_t, 2> kernel,
                                          std::array<int64_t, 2> stride,
                                          std::array<int64_t, 2> padding,
                                          std::array<int64_t, 2> dilation, bool bias);

/// Σ_i G̃_i(W)² of a Linear weight whose examples own one row each: (e²)ᵀ(a²), out×in.
::at::Tensor linear_weight_squared_sum(const ::at::Tensor& input, const ::at::Tensor& grad_output);

/// Linear weight, rows grouped by example: input R×in, grad_output R×out with R = k·examples.
/// Returns G̃_i(W) for examples [begin, end): (end − begin)×out×in.
::at::Tensor linear_weight_per_example(const ::at::Tensor& input, const ::at::Tensor& grad_output,
                                       int64_t examples, int64_t begin, int64_t end);

/// Geometry of a (non-transposed) 1-d or 2-d convolution, as LibTorch saves it.
struct ConvGeometry {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
};

/// Conv1d/Conv2d weight: input M×C×L or M×C×H×W, grad_output M×O×L' or M×O×H'×W', weight shape
/// O×(C/groups)×k or O×(C/groups)×kh×kw. Returns G̃_i(W) for examples [begin, end).
::at::Tensor conv_weight_per_example(const ::at::Tensor& input, const ::at::Tensor& grad_output,
                                     ::at::IntArrayRef weight_shape, const ConvGeometry& geometry,
                                     int64_t begin, int64_t end);

/// Conv bias: Σ over positions of grad_output (M×O×...) for examples [begin, end): (end−begin)×O.
::at::Tensor conv_bias_per_example(const ::at::Tensor& grad_output, int64_t begin, int64_t end);

/// Embedding: indices M×... (example i owns indices[i]), grad_output (indices shape)×d,
/// `num_weights` rows V; rows equal to padding_idx (if ≥ 0) get no gradient. Returns
/// Σ_i G̃_i(W)², V×d, without materialising per-example tables (one scatter over the distinct
/// (example, index) pairs).
::at::Tensor embedding_squared_sum(const ::at::Tensor& indices, const ::at::Tensor& grad_output,
                                   int64_t num_weights, int64_t padding_idx);

/// Embedding, dense per-example tables for examples [begin, end): (end − begin)×V×d. Used when the
/// table is shared with another layer (weight tying).
::at::Tensor embedding_per_example(const ::at::Tensor& indices, const ::at::Tensor& grad_output,
                                   int64_t num_weights, int64_t padding_idx, int64_t begin,
                                   int64_t end);

/// LayerNorm weight γ: input M×...×(normalized dims), mean and rstd as saved by
/// native_layer_norm (broadcastable to input), grad_output like input, `normalized_shape` the
/// shape of γ. Returns G̃_i(γ) for examples [begin, end).
::at::Tensor layer_norm_weight_per_example(const ::at::Tensor& input, const ::at::Tensor& mean,
                                           const ::at::Tensor& rstd,
                                           const ::at::Tensor& grad_output,
                                           ::at::IntArrayRef normalized_shape, int64_t begin,
                                           int64_t end);

/// Whether a parameter of shape `shape` broadcasts against `batched` (leading dimension M) without
/// a batch dimension of its own: right-aligned with batched's trailing dimensions, leading 1s free.
bool broadcasts_per_example(::at::IntArrayRef shape, ::at::IntArrayRef batched);

/// A parameter p broadcast against a batch: grad (the output gradient, leading dimension M),
/// p's shape right-aligned with grad's trailing dimensions (p has no batch dimension of its own).
/// Returns G̃_i(p) = sum_to(grad[i], shape) for examples [begin, end): (end − begin)×shape.
/// Also the bias of Linear (grad viewed M×k×out) and LayerNorm.
::at::Tensor broadcast_per_example(const ::at::Tensor& grad, ::at::IntArrayRef shape, int64_t begin,
                                   int64_t end);

}  // namespace blr::torch
