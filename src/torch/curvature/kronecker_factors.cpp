// K-FAC and KFC factors of Linear and Conv2d weights (kronecker_factors.hpp).
#include "blr/torch/curvature/kronecker_factors.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "blr/core/error.hpp"

namespace blr::torch {

namespace {

/// A = (1/M) Σ_r a_r a_rᵀ and G = (1/M) Σ_r (M e_r)(M e_r)ᵀ / L from rows a (R×in) and mean-loss
/// output gradients e (R×out), R = M·L (L rows per example).
KroneckerFactors factors_of_rows(const ::at::Tensor& a, const ::at::Tensor& e, int64_t examples,
                                 int64_t rows_per_example) {
  const double m = static_cast<double>(examples);
  KroneckerFactors f;
  f.input = ::at::mm(a.t(), a).div_(m);
  f.output = ::at::mm(e.t(), e).mul_(m / static_cast<double>(rows_per_example));
  return f;
}

}  // namespace

KroneckerFactors linear_kronecker_factors(const ::at::Tensor& input,
                                          const ::at::Tensor& grad_output) {
  check(input.dim() == 2 && grad_output.dim() == 2 && input.size(0) == grad_output.size(0) &&
            input.size(0) >= 1,
        "Kronecker factors of a Linear layer need an M×in input and an M×out output gradient with "
        "M ≥ 1; got shapes {} and {}.",
        input.sizes(), grad_output.sizes());
  ::at::NoGradGuard no_grad;
  return factors_of_rows(input, grad_output, input.size(0), 1);
}

KroneckerFactors conv2d_kronecker_factors(const ::at::Tensor& input,
                                          const ::at::Tensor& grad_output,
                                          ::at::IntArrayRef weight_shape,
                                          const ConvGeometry& geometry) {
  check(input.dim() == 4 && grad_output.dim() == 4 && weight_shape.size() == 4 &&
            input.size(0) == grad_output.size(0) && geometry.groups == 1 &&
            geometry.stride.size() == 2 && geometry.padding.size() == 2 &&
            geometry.dilation.size() == 2,
        "Kronecker factors of a convolution need a Conv2d with one group (input M×C×H×W, output "
        "gradient M×O×H'×W'); got input and output gradient of shapes {} and {}.",
        input.sizes(), grad_output.sizes());
  ::at::NoGradGuard no_grad;
  const int64_t m = input.size(0);
  // Patches: M × (C·kh·kw) × L, channel-major (the weight's O×C×kh×kw layout flattened).
  const auto patches = ::at::im2col(input, {weight_shape[2], weight_shape[3]}, geometry.dilation,
                                    geometry.padding, geometry.stride);
  const int64_t positions = patches.size(2);
  check(grad_output.size(2) * grad_output.size(3) == positions,
        "Kronecker factors of a convolution: the output gradient has {} positions, the unfolded "
        "input {}.",
        grad_output.size(2) * grad_output.size(3), positions);
  const auto a = patches.transpose(1, 2).reshape({m * positions, patches.size(1)});
  const auto e = grad_output.flatten(2).transpose(1, 2).reshape({m * positions, grad_output.size(1)});
  return factors_of_rows(a, e, m, positions);
}

}  // namespace blr::torch
