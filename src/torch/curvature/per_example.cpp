// Exact per-example gradients of Linear, Conv1d/2d, Embedding, LayerNorm and broadcast
// parameters (see per_example.hpp).
#include "blr/torch/curvature/per_example.hpp"

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <c10/util/accumulate.h>
#include <fmt/ranges.h>

#include "blr/core/error.hpp"

namespace blr::torch {

namespace {

void check_examples(const ::at::Tensor& batched, int64_t begin, int64_t end, const char* what) {
  check(batched.dim() >= 1 && 0 <= begin && begin < end && end <= batched.size(0),
        "{}: the example range [{}, {}) does not lie in a batch of {}.", what, begin, end,
        batched.dim() >= 1 ? batched.size(0) : 0);
}

}  // namespace

::at::Tensor linear_weight_squared_sum(const ::at::Tensor& input, const ::at::Tensor& grad_output) {
  check(input.dim() == 2 && grad_output.dim() == 2 && input.size(0) == grad_output.size(0),
        "The Linear squared-gradient sum needs input M×in and grad_output M×out with the same M; "
        "got {} and {} dimensions.",
        input.dim(), grad_output.dim());
  ::at::NoGradGuard no_grad;
  // Σ_i (e_i a_iᵀ)² = (e²)ᵀ(a²).
  return ::at::matmul(grad_output.square().t(), input.square());
}

SquaredGradients linear_squared_gradients(const ::at::Tensor& input,
                                          const ::at::Tensor& grad_output, bool bias) {
  check(input.dim() == 2 && grad_output.dim() == 2 && input.size(0) == grad_output.size(0),
        "linear_squared_gradients needs input M×in and grad_output M×out with the same M; got {} "
        "and {} dimensions.",
        input.dim(), grad_output.dim());
  ::at::NoGradGuard no_grad;
  const double m = static_cast<double>(input.size(0));
  SquaredGradients out;
  // (1/M) Σ_i (M e_i a_iᵀ)² = M Σ_i e_i² (a_i²)ᵀ.
  out.weight = linear_weight_squared_sum(input, grad_output).mul_(m);
  if (bias) out.bias = grad_output.square().sum(0).mul_(m);
  return out;
}

::at::Tensor linear_weight_per_example(const ::at::Tensor& input, const ::at::Tensor& grad_output,
                                       int64_t examples, int64_t begin, int64_t end) {
  check(input.dim() == 2 && grad_output.dim() == 2 && input.size(0) == grad_output.size(0) &&
            examples >= 1 && input.size(0) % examples == 0,
        "Linear per-example gradients need input R×in and grad_output R×out with R a multiple of "
        "the {} examples; got {}×{} and {}×{}.",
        examples, input.size(0), input.dim() == 2 ? input.size(1) : 0, grad_output.size(0),
        grad_output.dim() == 2 ? grad_output.size(1) : 0);
  check(0 <= begin && begin < end && end <= examples,
        "Linear per-example gradients: the example range [{}, {}) does not lie in {} examples.",
        begin, end, examples);
  ::at::NoGradGuard no_grad;
  const int64_t rows = input.size(0) / examples;
  const int64_t count = end - begin;
  const auto a = input.narrow(0, begin * rows, count * rows).reshape({count, rows, -1});
  const auto e = grad_output.narrow(0, begin * rows, count * rows).reshape({count, rows, -1});
  // Σ_{r∈i} e_r a_rᵀ for each example: count × out × in.
  return ::at::bmm(e.transpose(1, 2), a);
}

::at::Tensor conv_weight_per_example(const ::at::Tensor& input, const ::at::Tensor& grad_output,
                                     ::at::IntArrayRef weight_shape, const ConvGeometry& geometry,
                                     int64_t begin, int64_t end) {
  const int64_t spatial = input.dim() - 2;
  check((spatial == 1 || spatial == 2) && grad_output.dim() == input.dim() &&
            static_cast<int64_t>(weight_shape.size()) == input.dim() &&
            input.size(0) == grad_output.size(0) &&
            static_cast<int64_t>(geometry.stride.size()) == spatial &&
            static_cast<int64_t>(geometry.padding.size()) == spatial &&
            static_cast<int64_t>(geometry.dilation.size()) == spatial,
        "Convolution per-example gradients need a 1-d or 2-d convolution with input M×C×..., "
        "grad_output M×O×... and a matching geometry; got input and grad_output of {} and {} "
        "dimensions.",
        input.dim(), grad_output.dim());
  check_examples(input, begin, end, "Convolution per-example gradients");
  ::at::NoGradGuard no_grad;
  const int64_t count = end - begin;
  const int64_t groups = geometry.groups;
  const int64_t channels_out = grad_output.size(1);
  check(groups >= 1 && input.size(1) % groups == 0 && channels_out % groups == 0,
        "Convolution per-example gradients: {} groups do not divide {} input and {} output "
        "channels.",
        groups, input.size(1), channels_out);
  auto x = input.narrow(0, begin, count);
  auto e = grad_output.narrow(0, begin, count);
  // A 1-d convolution is a 2-d one over a 1×L image.
  std::vector<int64_t> kernel(weight_shape.begin() + 2, weight_shape.end());
  std::vector<int64_t> stride = geometry.stride, padding = geometry.padding,
                       dilation = geometry.dilation;
  if (spatial == 1) {
    x = x.unsqueeze(2);
    e = e.unsqueeze(2);
    kernel.insert(kernel.begin(), 1);
    stride.insert(stride.begin(), 1);
    padding.insert(padding.begin(), 0);
    dilation.insert(dilation.begin(), 1);
  }
  // Patches P_i: count × (C·kh·kw) × L, channel-major, so each group's rows are contiguous.
  const auto patches = ::at::im2col(x, kernel, dilation, padding, stride);
  const int64_t positions = patches.size(2);
  check(e.size(2) * e.size(3) == positions,
        "Convolution per-example gradients: grad_output has {} positions where the geometry "
        "gives {}.",
        e.size(2) * e.size(3), positions);
  const auto p = patches.reshape({count, groups, -1, positions});
  const auto eg = e.reshape({count, groups, channels_out / groups, positions});
  // G̃_i = E_i P_iᵀ per group: count × groups × (O/groups) × (C/groups·kh·kw).
  std::vector<int64_t> shape{count};
  shape.insert(shape.end(), weight_shape.begin(), weight_shape.end());
  return ::at::matmul(eg, p.transpose(2, 3)).reshape(shape);
}

::at::Tensor conv_bias_per_example(const ::at::Tensor& grad_output, int64_t begin, int64_t end) {
  check(grad_output.dim() >= 3,
        "Convolution bias per-example gradients need grad_output M×O×...; "
        "got {} dimensions.",
        grad_output.dim());
  check_examples(grad_output, begin, end, "Convolution bias per-example gradients");
  ::at::NoGradGuard no_grad;
  return grad_output.narrow(0, begin, end - begin).flatten(2).sum(2);
}

namespace {

/// Rows of an embedding lookup: indices flattened to examples × k, output gradient to
/// (examples·k) × d with the padding rows zeroed.
struct EmbeddingRows {
  ::at::Tensor indices;  // count × k
  ::at::Tensor grad;     // (count·k) × d
};

EmbeddingRows embedding_rows(const ::at::Tensor& indices, const ::at::Tensor& grad_output,
                             int64_t padding_idx, int64_t begin, int64_t end) {
  check(indices.dim() >= 1 && grad_output.dim() == indices.dim() + 1 &&
            grad_output.sizes().slice(0, indices.dim()) == indices.sizes(),
        "Embedding per-example gradients need grad_output of the indices' shape times the "
        "embedding width; got {} and {} dimensions.",
        indices.dim(), grad_output.dim());
  check_examples(indices, begin, end, "Embedding per-example gradients");
  const int64_t count = end - begin;
  EmbeddingRows rows;
  rows.indices = indices.narrow(0, begin, count).reshape({count, -1});
  rows.grad = grad_output.narrow(0, begin, count).reshape({rows.indices.numel(), -1});
  if (padding_idx >= 0) {
    rows.grad = rows.grad.masked_fill(rows.indices.reshape({-1, 1}).eq(padding_idx), 0);
  }
  return rows;
}

/// Key example·V + index of every row (example counted from the range's start).
::at::Tensor embedding_keys(const ::at::Tensor& indices, int64_t num_weights) {
  const int64_t count = indices.size(0);
  const auto example = ::at::arange(count, indices.options().dtype(::at::kLong)).unsqueeze(1);
  return (example * num_weights + indices.to(::at::kLong)).reshape({-1});
}

}  // namespace

::at::Tensor embedding_squared_sum(const ::at::Tensor& indices, const ::at::Tensor& grad_output,
                                   int64_t num_weights, int64_t padding_idx) {
  ::at::NoGradGuard no_grad;
  const auto rows = embedding_rows(indices, grad_output, padding_idx, 0, indices.size(0));
  const auto keys = embedding_keys(rows.indices, num_weights);
  // Sum the rows of each distinct (example, index) pair, square, and add into the table.
  const auto [distinct, position] = ::at::_unique(keys, /*sorted=*/false, /*return_inverse=*/true);
  const auto sums = ::at::zeros({distinct.size(0), rows.grad.size(1)}, rows.grad.options())
                        .index_add_(0, position, rows.grad);
  return ::at::zeros({num_weights, rows.grad.size(1)}, rows.grad.options())
      .index_add_(0, distinct.remainder(num_weights), sums.square());
}

::at::Tensor embedding_per_example(const ::at::Tensor& indices, const ::at::Tensor& grad_output,
                                   int64_t num_weights, int64_t padding_idx, int64_t begin,
                                   int64_t end) {
  ::at::NoGradGuard no_grad;
  const auto rows = embedding_rows(indices, grad_output, padding_idx, begin, end);
  const int64_t count = end - begin;
  const int64_t width = rows.grad.size(1);
  return ::at::zeros({count * num_weights, width}, rows.grad.options())
      .index_add_(0, embedding_keys(rows.indices, num_weights), rows.grad)
      .view({count, num_weights, width});
}

::at::Tensor layer_norm_weight_per_example(const ::at::Tensor& input, const ::at::Tensor& mean,
                                           const ::at::Tensor& rstd,
                                           const ::at::Tensor& grad_output,
                                           ::at::IntArrayRef normalized_shape, int64_t begin,
                                           int64_t end) {
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  check(axis >= 1 && grad_output.sizes() == input.sizes() &&
            input.sizes().slice(axis) == normalized_shape && mean.numel() == rstd.numel() &&
            mean.numel() * ::c10::multiply_integers(normalized_shape) == input.numel(),
        "LayerNorm per-example gradients need input M×...×(normalized shape), a matching "
        "grad_output and one mean and rstd per normalised row; got input of {} dimensions.",
        input.dim());
  check_examples(input, begin, end, "LayerNorm per-example gradients");
  ::at::NoGradGuard no_grad;
  const int64_t count = end - begin;
  // mean and rstd: one value per normalised row, shaped input's leading dims × 1 × ... × 1.
  std::vector<int64_t> stat_shape(input.sizes().begin(), input.sizes().begin() + axis);
  stat_shape.resize(input.dim(), 1);
  const auto x = input.narrow(0, begin, count);
  const auto normalized = (x - mean.reshape(stat_shape).narrow(0, begin, count)) *
                          rstd.reshape(stat_shape).narrow(0, begin, count);
  return broadcast_per_example(grad_output.narrow(0, begin, count) * normalized, normalized_shape,
                               0, count);
}

namespace {

/// The parameter's shape without the leading 1s that stand for missing dimensions.
::at::IntArrayRef trailing_shape(::at::IntArrayRef shape, int64_t batched_rank) {
  size_t lead = 0;
  while (lead < shape.size() && shape[lead] == 1 &&
         static_cast<int64_t>(shape.size() - lead) > batched_rank - 1) {
    ++lead;
  }
  return shape.slice(lead);
}

}  // namespace

bool broadcasts_per_example(::at::IntArrayRef shape, ::at::IntArrayRef batched) {
  const auto rank = static_cast<int64_t>(batched.size());
  const auto trailing = trailing_shape(shape, rank);
  const int64_t offset = rank - static_cast<int64_t>(trailing.size());
  if (offset < 1) return false;
  for (size_t d = 0; d < trailing.size(); ++d) {
    if (trailing[d] != 1 && trailing[d] != batched[offset + d]) return false;
  }
  return true;
}

::at::Tensor broadcast_per_example(const ::at::Tensor& grad, ::at::IntArrayRef shape, int64_t begin,
                                   int64_t end) {
  check_examples(grad, begin, end, "Per-example gradients of a broadcast parameter");
  check(broadcasts_per_example(shape, grad.sizes()),
        "A parameter of shape {} does not broadcast against an output of shape {} without a "
        "batch dimension of its own.",
        shape, grad.sizes());
  ::at::NoGradGuard no_grad;
  const int64_t count = end - begin;
  const auto trailing = trailing_shape(shape, grad.dim());
  const int64_t offset = grad.dim() - static_cast<int64_t>(trailing.size());
  std::vector<int64_t> target(grad.dim(), 1);
  target[0] = count;
  for (size_t d = 0; d < trailing.size(); ++d) target[offset + d] = trailing[d];
  std::vector<int64_t> result{count};
  result.insert(result.end(), shape.begin(), shape.end());
  return ::at::sum_to(grad.narrow(0, begin, count), target).reshape(result);
}

SquaredGradients conv2d_squared_gradients(const ::at::Tensor& input,
                                          const ::at::Tensor& grad_output,
                                          std::array<int64_t, 2> kernel,
                                          std::array<int64_t, 2> stride,
                                          std::array<int64_t, 2> padding,
                                          std::array<int64_t, 2> dilation, bool bias) {
  check(input.dim() == 4 && grad_output.dim() == 4 && input.size(0) == grad_output.size(0),
        "conv2d_squared_gradients needs input M×C×H×W and grad_output M×O×H'×W' with the same M; "
        "got {} and {} dimensions.",
        input.dim(), grad_output.dim());
  ::at::NoGradGuard no_grad;
  const int64_t m = input.size(0);
  const ConvGeometry geometry{
      {stride[0], stride[1]}, {padding[0], padding[1]}, {dilation[0], dilation[1]}, 1};
  const std::vector<int64_t> weight_shape{grad_output.size(1), input.size(1), kernel[0], kernel[1]};
  const double scale = static_cast<double>(m);
  SquaredGradients out;
  out.weight = conv_weight_per_example(input, grad_output, weight_shape, geometry, 0, m)
                   .square()
                   .sum(0)
                   .mul_(scale);
  if (bias) out.bias = conv_bias_per_example(grad_output, 0, m).square().sum(0).mul_(scale);
  return out;
}

}  // namespace blr::torch
