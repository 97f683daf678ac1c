// Linear regression with squared loss, ℓ̄(θ) = Σ_i β/2·(y_i − x_iᵀθ)² + δ/2·|θ|².
//
// The negative log-likelihood of y_i ~ N(x_iᵀθ, β⁻¹) without its normaliser, β the noise
// precision, plus an optional Gaussian prior of precision δ. It is quadratic in θ, so the
// Gaussian expectations of its gradient and Hessian are exact (Khan & Rue 2023, eqs. 13–14):
// E_q[∇ℓ̄] = βXᵀ(Xm − y) + δm and E_q[∇²ℓ̄] = βXᵀX + δI; one BLR step with ρ = 1 gives the
// conjugate posterior (peers.md 4(a) A1 is the oracle).
#pragma once

#include <vector>

#include "blr/core/types.hpp"
#include "blr/model/dataset.hpp"

namespace blr {

struct LinearRegressionOptions {
  double noise_precision = 1.0;  ///< β > 0
  double prior_precision = 0.0;  ///< δ ≥ 0
  /// Throws blr::Error naming the option when it is out of range.
  void validate() const;
};

class LinearRegression {
 public:
  using Options = LinearRegressionOptions;
  static constexpr bool kQuadratic = true;

  /// `inputs` is N×D (one example per row, include a column of ones for an intercept),
  /// `targets` has length N.
  LinearRegression(Matrix inputs, Vector targets, Options options = {});

  Index dimension() const { return data_.num_features(); }
  Index num_examples() const { return data_.num_examples(); }
  /// N/M on a minibatch, 1 on the full data.
  double example_scale() const { return data_.scale(); }

  double value(const Vector& theta) const;
  Vector gradient(const Vector& theta) const;
  double value_and_gradient(const Vector& theta, Vector& gradient) const;
  Matrix hessian(const Vector& theta) const;
  Vector hessian_diagonal(const Vector& theta) const;
  Vector hessian_vector_product(const Vector& theta, const Vector& v) const;
  /// Row i: ∇ℓ_i(θ) = −β(y_i − x_iᵀθ)x_iᵀ for the i-th row of the minibatch (unscaled).
  Matrix per_example_gradients(const Vector& theta) const;
  Vector regularizer_gradient(const Vector& theta) const;
  Vector regularizer_hessian_diagonal(const Vector& theta) const;

  /// The minibatch loss (N/M)Σ_{i∈rows} ℓ_i + R (eq. 34), sharing the data.
  LinearRegression with_rows(const std::vector<Index>& rows) const;

  const Options& options() const { return options_; }
  const DataTerm& data() const { return data_; }

 private:
  LinearRegression(DataTerm data, Options options) : data_(std::move(data)), options_(options) {}
  void check_theta(const Vector& theta) const;

  DataTerm data_;
  Options options_;
};

}  // namespace blr
