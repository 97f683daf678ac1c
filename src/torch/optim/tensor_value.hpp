// Internal: a tensor as the value type of the per-coordinate BLR step (blr/stage/coordinate.hpp),
// so that the one step written for scalars also runs as tensor operations on any device and dtype
// (the LibTorch optimizers' path where the fused CPU loops do not apply: CUDA, half precision,
// non-contiguous parameters). Scalars are doubles, which ATen rounds to the tensor's dtype as the
// fused loops round their coefficients.
//
// Each operation is one ATen call. Its result is marked `fresh`: a new tensor nobody else holds.
// An operation whose left operand (or only operand) is such a temporary — `a * b + c` — writes
// into it (add_, mul_, tanh_, …) instead of allocating, when the result has its shape and dtype.
// Anything else is never overwritten: a value made from an existing tensor, and every copy of a
// value (a copy shares the tensor), are not fresh; only a moved-from temporary keeps the mark.
// In-place and out-of-place ATen kernels compute the same values, so results do not change.
#pragma once

#include <ATen/ATen.h>

#include <cmath>
#include <utility>

namespace blr::torch::detail {

struct TensorValue {
  ::at::Tensor t;
  bool fresh = false;  ///< t is an operation's new tensor, held by this value only

  TensorValue() = default;
  TensorValue(::at::Tensor tensor) : t(std::move(tensor)) {}  // NOLINT: implicit by design
  TensorValue(const TensorValue& other) : t(other.t) {}       // shares t: not fresh
  TensorValue(TensorValue&& other) noexcept = default;
  TensorValue& operator=(const TensorValue& other) {
    t = other.t;
    fresh = false;
    return *this;
  }
  TensorValue& operator=(TensorValue&& other) noexcept = default;

  /// The result of an operation.
  static TensorValue made(::at::Tensor tensor) {
    TensorValue v(std::move(tensor));
    v.fresh = true;
    return v;
  }
  /// True when this (a temporary) can hold the result of an operation with `other` in place.
  bool reusable_with(const ::at::Tensor& other) const {
    return fresh && (other.dim() == 0 || other.sizes() == t.sizes()) &&
           ::at::result_type(t, other) == t.scalar_type();
  }

  // The arithmetic, as hidden friends: found only for a TensorValue operand, so that an
  // `at::Tensor * double` elsewhere in the namespace keeps meaning ATen's operator.

#define BLR_TENSOR_VALUE_BINARY(op, name)                                      \
  friend TensorValue operator op(const TensorValue& a, const TensorValue& b) { \
    return TensorValue::made(a.t.name(b.t));                                   \
  }                                                                            \
  friend TensorValue operator op(TensorValue&& a, const TensorValue& b) {      \
    if (!a.reusable_with(b.t)) return TensorValue::made(a.t.name(b.t));        \
    a.t.name##_(b.t);                                                          \
    return std::move(a);                                                       \
  }                                                                            \
  friend TensorValue operator op(const TensorValue& a, double b) {             \
    return TensorValue::made(a.t.name(b));                                     \
  }                                                                            \
  friend TensorValue operator op(TensorValue&& a, double b) {                  \
    if (!a.fresh) return TensorValue::made(a.t.name(b));                       \
    a.t.name##_(b);                                                            \
    return std::move(a);                                                       \
  }
  BLR_TENSOR_VALUE_BINARY(+, add)
  BLR_TENSOR_VALUE_BINARY(-, sub)
  BLR_TENSOR_VALUE_BINARY(*, mul)
  BLR_TENSOR_VALUE_BINARY(/, div)
#undef BLR_TENSOR_VALUE_BINARY

  friend TensorValue operator*(double a, const TensorValue& b) {
    return TensorValue::made(b.t.mul(a));
  }
  friend TensorValue operator*(double a, TensorValue&& b) {
    if (!b.fresh) return TensorValue::made(b.t.mul(a));
    b.t.mul_(a);
    return std::move(b);
  }
  friend TensorValue operator+(double a, const TensorValue& b) {
    return TensorValue::made(b.t.add(a));
  }
  friend TensorValue operator+(double a, TensorValue&& b) {
    if (!b.fresh) return TensorValue::made(b.t.add(a));
    b.t.add_(a);
    return std::move(b);
  }
  friend TensorValue operator-(double a, const TensorValue& b) {
    return TensorValue::made(b.t.neg().add_(a));
  }
  friend TensorValue operator-(double a, TensorValue&& b) {
    if (!b.fresh) return TensorValue::made(b.t.neg().add_(a));
    b.t.neg_().add_(a);
    return std::move(b);
  }
};

#define BLR_TENSOR_VALUE_UNARY(fn, name)                \
  inline TensorValue fn(const TensorValue& a) {         \
    return TensorValue::made(a.t.name());               \
  }                                                     \
  inline TensorValue fn(TensorValue&& a) {              \
    if (!a.fresh) return TensorValue::made(a.t.name()); \
    a.t.name##_();                                      \
    return std::move(a);                                \
  }
BLR_TENSOR_VALUE_UNARY(sqrt_of, sqrt)
BLR_TENSOR_VALUE_UNARY(abs_of, abs)
BLR_TENSOR_VALUE_UNARY(tanh_of, tanh)
BLR_TENSOR_VALUE_UNARY(log_of, log)
#undef BLR_TENSOR_VALUE_UNARY

inline TensorValue clip(const TensorValue& a, double r) {
  return std::isinf(r) ? a : TensorValue::made(a.t.clamp(-r, r));
}

}  // namespace blr::torch::detail
