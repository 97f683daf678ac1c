// Internal: a tensor as the value type of the per-coordinate BLR step (blr/stage/coordinate.hpp),
// so that the one step written for scalars also runs as tensor operations on any device and dtype
// (the LibTorch optimizers' path where the fused CPU loops do not apply: CUDA, half precision,
// non-contiguous parameters). Each operation is one out-of-place ATen call; scalars are doubles,
// which ATen rounds to the tensor's dtype as the fused loops round their coefficients.
#pragma once

#include <ATen/ATen.h>

namespace blr::torch::detail {

struct TensorValue {
  ::at::Tensor t;
  TensorValue() = default;
  TensorValue(::at::Tensor tensor) : t(std::move(tensor)) {}  // NOLINT: implicit by design
};

inline TensorValue operator+(const TensorValue& a, const TensorValue& b) { return a.t.add(b.t); }
inline TensorValue operator-(const TensorValue& a, const TensorValue& b) { return a.t.sub(b.t); }
inline TensorValue operator*(const TensorValue& a, const TensorValue& b) { return a.t.mul(b.t); }
inline TensorValue operator/(const TensorValue& a, const TensorValue& b) { return a.t.div(b.t); }
inline TensorValue operator+(const TensorValue& a, double b) { return a.t.add(b); }
inline TensorValue operator-(const TensorValue& a, double b) { return a.t.sub(b); }
inline TensorValue operator*(double a, const TensorValue& b) { return b.t.mul(a); }
inline TensorValue operator*(const TensorValue& a, double b) { return a.t.mul(b); }
inline TensorValue operator/(const TensorValue& a, double b) { return a.t.div(b); }
inline TensorValue operator+(double a, const TensorValue& b) { return b.t.add(a); }
inline TensorValue operator-(double a, const TensorValue& b) { return b.t.neg().add_(a); }
inline TensorValue sqrt_of(const TensorValue& a) { return a.t.sqrt(); }
inline TensorValue tanh_of(const TensorValue& a) { return a.t.tanh(); }
inline TensorValue log_of(const TensorValue& a) { return a.t.log(); }
inline TensorValue clip(const TensorValue& a, double r) {
  return std::isinf(r) ? a : TensorValue(a.t.clamp(-r, r));
}

}  // namespace blr::torch::detail
