// Internal: a Linear or Conv2d weight as the out×in matrix its Kronecker factors act on, for K-FAC
// (kfac.cpp) and the Kronecker Laplace (laplace.cpp): the weight's first dimension is the output,
// the rest (in, kh, kw) flattened row-major the input.
#pragma once

#include <ATen/ATen.h>

namespace blr::torch::detail {

inline ::at::Tensor as_matrix(const ::at::Tensor& t) {
  return t.reshape({t.size(0), -1});
}

}  // namespace blr::torch::detail
