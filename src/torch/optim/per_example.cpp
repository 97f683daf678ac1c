// Exact per-example squared gradients of Linear and Conv2d layers (see per_example.hpp).
#include "blr/torch/optim/per_example.hpp"

#include <torch/nn/functional/fold.h>

#include "blr/core/error.hpp"

namespace blr::torch {

SquaredGradients linear_squared_gradients(const ::at::Tensor& input,
                                          const ::at::Tensor& grad_output, bool bias) {
  check(input.dim() == 2 && grad_output.dim() == 2 && input.size(0) == grad_output.size(0),
        fmt::format("linear_squared_gradients needs input M×in and grad_output M×out with the same "
                    "M; got {} and {} dimensions.",
                    input.dim(), grad_output.dim()));
  ::at::NoGradGuard no_grad;
  const double m = static_cast<double>(input.size(0));
  const ::at::Tensor e2 = grad_output.square();
  SquaredGradients out;
  // (1/M) Σ_i (M e_i a_iᵀ)² = M Σ_i e_i² (a_i²)ᵀ.
  out.weight = ::at::matmul(e2.t(), input.square()).mul_(m);
  if (bias) out.bias = e2.sum(0).mul_(m);
  return out;
}

SquaredGradients conv2d_squared_gradients(const ::at::Tensor& input,
                                          const ::at::Tensor& grad_output,
                                          std::array<int64_t, 2> kernel,
                                          std::array<int64_t, 2> stride,
                                          std::array<int64_t, 2> padding,
                                          std::array<int64_t, 2> dilation, bool bias) {
  check(input.dim() == 4 && grad_output.dim() == 4 && input.size(0) == grad_output.size(0),
        fmt::format("conv2d_squared_gradients needs input M×C×H×W and grad_output M×O×H'×W' with "
                    "the same M; got {} and {} dimensions.",
                    input.dim(), grad_output.dim()));
  ::at::NoGradGuard no_grad;
  namespace F = ::torch::nn::functional;
  const int64_t m = input.size(0);
  const int64_t channels_out = grad_output.size(1);
  // Patches P_i: M × (C·kh·kw) × L.
  const ::at::Tensor patches = F::unfold(input, F::UnfoldFuncOptions({kernel[0], kernel[1]})
                                                    .dilation({dilation[0], dilation[1]})
                                                    .padding({padding[0], padding[1]})
                                                    .stride({stride[0], stride[1]}));
  const ::at::Tensor e = grad_output.reshape({m, channels_out, -1});  // M × O × L
  check(e.size(2) == patches.size(2),
        "conv2d_squared_gradients: grad_output does not match the convolution geometry.");
  // Per-example weight gradients (up to the factor M): G_i = E_i P_iᵀ, M × O × (C·kh·kw).
  const ::at::Tensor g = ::at::bmm(e, patches.transpose(1, 2));
  const double scale = static_cast<double>(m);
  SquaredGradients out;
  out.weight =
      g.square().sum(0).mul_(scale).reshape({channels_out, input.size(1), kernel[0], kernel[1]});
  if (bias) out.bias = e.sum(2).square().sum(0).mul_(scale);
  return out;
}

}  // namespace blr::torch
