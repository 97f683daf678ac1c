// Logistic regression, ℓ̄(θ) = Σ_i [log(1 + exp(z_i)) − y_i z_i] + δ/2·|θ|², z_i = x_iᵀθ, y_i ∈
// {0,1}.
//
// The negative log-likelihood of y_i ~ Bernoulli(σ(z_i)) plus an optional Gaussian prior of
// precision δ (Khan & Rue 2023, §3 and eq. 34). log(1 + exp(z)) is evaluated as
// max(z, 0) + log1p(exp(−|z|)) and σ(z) without overflow, so any finite θ gives finite values.
// ∇ℓ̄ = Xᵀ(σ(z) − y) + δθ,  ∇²ℓ̄ = Xᵀdiag(σ(z)(1 − σ(z)))X + δI.
#pragma once

#include <vector>

#include "blr/core/types.hpp"
#include "blr/model/dataset.hpp"

namespace blr {

struct LogisticRegressionOptions {
  double prior_precision = 0.0;  ///< δ ≥ 0
  void validate() const;
};

class LogisticRegression {
 public:
  using Options = LogisticRegressionOptions;

  /// `inputs` N×D (add a column of ones for an intercept), `targets` N labels, each 0 or 1.
  LogisticRegression(Matrix inputs, Vector targets, Options options = {});

  Index dimension() const { return data_.num_features(); }
  Index num_examples() const { return data_.num_examples(); }
  double example_scale() const { return data_.scale(); }

  double value(const Vector& theta) const;
  Vector gradient(const Vector& theta) const;
  double value_and_gradient(const Vector& theta, Vector& gradient) const;
  Matrix hessian(const Vector& theta) const;
  Vector hessian_diagonal(const Vector& theta) const;
  Vector hessian_vector_product(const Vector& theta, const Vector& v) const;
  /// Row i: (σ(z_i) − y_i)·x_iᵀ (unscaled).
  Matrix per_example_gradients(const Vector& theta) const;
  Vector regularizer_gradient(const Vector& theta) const;
  Vector regularizer_hessian_diagonal(const Vector& theta) const;

  LogisticRegression with_rows(const std::vector<Index>& rows) const;

  /// σ(x_iᵀθ) for each row of `inputs` (any data, e.g. a test set).
  Vector predict_probability(const Vector& theta, const Matrix& inputs) const;

  const Options& options() const { return options_; }
  const DataTerm& data() const { return data_; }

 private:
  LogisticRegression(DataTerm data, Options options) : data_(std::move(data)), options_(options) {}
  void check_theta(const Vector& theta) const;

  DataTerm data_;
  Options options_;
};


}  // namespace blr
