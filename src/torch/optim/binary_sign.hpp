// Internal: the binary weights of BayesBiNN and STE, sign(x) with x ≤ 0 → −1 (the convention of
// the BayesBiNN reference code's test-time "mean mode"), in the dtype and device of x.
#pragma once

#include <ATen/ATen.h>

namespace blr::torch::detail {

inline ::at::Tensor binary_sign(const ::at::Tensor& x) {
  return x.gt(0).to(x.scalar_type()).mul_(2).sub_(1);
}

}  // namespace blr::torch::detail
