// What an estimator may ask of a loss.
//
// A loss is ℓ̄(θ) = Σ_i ℓ_i(θ) + R(θ) (Khan & Rue 2023, eq. 1: a sum over examples, not a mean,
// plus a regulariser R, usually the negative log prior). A type may expose any of
//   value ℓ̄(θ), gradient ∇ℓ̄, dense Hessian ∇²ℓ̄, its diagonal, Hessian-vector products,
//   per-example gradients ∇ℓ_i (rows of a matrix, the regulariser excluded) with the
//   regulariser's gradient and Hessian diagonal given apart,
// and estimators state, as the concepts below, which of these they need: a missing capability is
// a compile-time error naming the concept.
//
// Minibatches (eq. 34): a data loss offers `with_rows(rows)`, a loss of the same type that
// evaluates (N/M)·Σ_{i∈rows} ℓ_i(θ) + R(θ), an unbiased estimate of ℓ̄.
#pragma once

#include <concepts>
#include <vector>

#include "blr/core/types.hpp"

namespace blr {

/// Any loss: its dimension and value.
template <class L>
concept Loss = requires(const L& f, const Vector& theta) {
  { f.dimension() } -> std::convertible_to<Index>;
  { f.value(theta) } -> std::convertible_to<double>;
};

/// ∇ℓ̄(θ).
template <class L>
concept HasGradient = Loss<L> && requires(const L& f, const Vector& theta) {
  { f.gradient(theta) } -> std::convertible_to<Vector>;
};

/// Dense ∇²ℓ̄(θ).
template <class L>
concept HasHessian = HasGradient<L> && requires(const L& f, const Vector& theta) {
  { f.hessian(theta) } -> std::convertible_to<Matrix>;
};

/// diag ∇²ℓ̄(θ).
template <class L>
concept HasDiagonalHessian = HasGradient<L> && requires(const L& f, const Vector& theta) {
  { f.hessian_diagonal(theta) } -> std::convertible_to<Vector>;
};

/// ∇²ℓ̄(θ)·v.
template <class L>
concept HasHessianVectorProduct = HasGradient<L> && requires(const L& f, const Vector& theta,
                                                             const Vector& v) {
  { f.hessian_vector_product(theta, v) } -> std::convertible_to<Vector>;
};

/// Per-example gradients: row i of `per_example_gradients(θ)` is the gradient of the i-th
/// term of the (possibly minibatch-scaled) sum, *without* its scale factor; `example_scale()` is
/// that factor (N/M for a minibatch, 1 for the full data), so that
///   ∇ℓ̄ = example_scale()·Σ_i rows_i + regularizer_gradient(θ).
template <class L>
concept HasPerExampleGradients = HasGradient<L> && requires(const L& f, const Vector& theta) {
  { f.per_example_gradients(theta) } -> std::convertible_to<Matrix>;
  { f.example_scale() } -> std::convertible_to<double>;
  { f.regularizer_gradient(theta) } -> std::convertible_to<Vector>;
  { f.regularizer_hessian_diagonal(theta) } -> std::convertible_to<Vector>;
};

/// A loss over a data set that can be restricted to a minibatch (eq. 34).
template <class L>
concept DataLoss = Loss<L> && requires(const L& f, const std::vector<Index>& rows) {
  { f.num_examples() } -> std::convertible_to<Index>;
  { f.with_rows(rows) } -> std::convertible_to<L>;
};

/// Optional fast path: ℓ̄(θ) and ∇ℓ̄(θ) from one pass over the data. Estimators use it when present
/// and fall back to `value` + `gradient` otherwise (see `value_and_gradient` below).
template <class L>
concept HasValueAndGradient = HasGradient<L> && requires(const L& f, const Vector& theta,
                                                         Vector& gradient) {
  { f.value_and_gradient(theta, gradient) } -> std::convertible_to<double>;
};

/// Optional fast path for second-order estimators: ℓ̄(θ), ∇ℓ̄(θ) and the dense ∇²ℓ̄(θ) from one pass
/// over the data (a GLM forms its linear predictor Xθ once instead of three times). The delta
/// method uses it for full Gaussians when present, and `value_and_gradient` + `hessian` otherwise.
template <class L>
concept HasValueGradientAndHessian = HasHessian<L> && requires(const L& f, const Vector& theta,
                                                               Vector& gradient, Matrix& hessian) {
  { f.value_gradient_and_hessian(theta, gradient, hessian) } -> std::convertible_to<double>;
};

/// A loss that is quadratic in θ: its Hessian does not depend on θ, so for any Gaussian q
/// E_q[∇ℓ̄] = ∇ℓ̄(m) and E_q[∇²ℓ̄] = ∇²ℓ̄ exactly (eq. 14). A type opts in with
/// `static constexpr bool kQuadratic = true;`.
template <class L>
concept QuadraticLoss = HasHessian<L> && requires { requires L::kQuadratic; };

/// ℓ̄(θ), writing ∇ℓ̄(θ) into `gradient`, in one pass when the loss offers it.
template <HasGradient L>
double value_and_gradient(const L& f, const Vector& theta, Vector& gradient) {
  if constexpr (HasValueAndGradient<L>) {
    return f.value_and_gradient(theta, gradient);
  } else {
    gradient = f.gradient(theta);
    return f.value(theta);
  }
}

}  // namespace blr
