// Multinomial (softmax) logistic regression with K classes,
//     ℓ̄(θ) = Σ_i [log Σ_k exp(z_ik) − z_{i,y_i}] + δ/2·|θ|²,   z_i = Wᵀx_i ∈ ℝ^K, y_i ∈ {0,…,K−1}.
//
// Parameter layout: θ stacks the K class weight vectors, θ = (w_0; w_1; …; w_{K−1}), w_k ∈ ℝ^D,
// so θ[k·D + j] is the weight of feature j for class k; Eigen::Map<const Matrix>(θ.data(), D, K)
// is W with column k = w_k. With p_i = softmax(z_i) and e_y the one-hot label:
//   ∇ℓ_i = (p_i − e_{y_i}) ⊗ x_i,   ∇²ℓ_i = (diag(p_i) − p_i p_iᵀ) ⊗ x_i x_iᵀ   (class-major
//   blocks).
// The model is over-parameterised (adding a vector to every w_k changes nothing), so without a
// prior (δ = 0) the Hessian is singular.
#pragma once

#include <vector>

#include "blr/core/types.hpp"
#include "blr/model/dataset.hpp"

namespace blr {

struct SoftmaxRegressionOptions {
  double prior_precision = 0.0;  ///< δ ≥ 0
  void validate() const;
};

class SoftmaxRegression {
 public:
  using Options = SoftmaxRegressionOptions;

  /// `inputs` N×D, `labels` N class indices stored as doubles (0, 1, …, K−1), `num_classes` K ≥ 2.
  SoftmaxRegression(Matrix inputs, Vector labels, Index num_classes, Options options = {});

  /// K·D.
  Index dimension() const { return num_classes_ * data_.num_features(); }
  Index num_classes() const { return num_classes_; }
  Index num_features() const { return data_.num_features(); }
  Index num_examples() const { return data_.num_examples(); }
  double example_scale() const { return data_.scale(); }

  double value(const Vector& theta) const;
  Vector gradient(const Vector& theta) const;
  double value_and_gradient(const Vector& theta, Vector& gradient) const;
  /// Dense KD×KD Hessian, O(N·K²·D²).
  Matrix hessian(const Vector& theta) const;
  Vector hessian_diagonal(const Vector& theta) const;
  Vector hessian_vector_product(const Vector& theta, const Vector& v) const;
  /// Row i: vec((p_i − e_{y_i}) ⊗ x_i) in the layout above (unscaled).
  Matrix per_example_gradients(const Vector& theta) const;
  Vector regularizer_gradient(const Vector& theta) const;
  Vector regularizer_hessian_diagonal(const Vector& theta) const;

  SoftmaxRegression with_rows(const std::vector<Index>& rows) const;

  /// Class probabilities, one row per row of `inputs`.
  Matrix predict_probability(const Vector& theta, const Matrix& inputs) const;

  const Options& options() const { return options_; }
  const DataTerm& data() const { return data_; }

 private:
  SoftmaxRegression(DataTerm data, Index k, Options options)
      : data_(std::move(data)), num_classes_(k), options_(options) {}
  void check_theta(const Vector& theta) const;
  /// Softmax probabilities of the minibatch (M×K) and, when asked, Σ_i ℓ_i (unscaled).
  Matrix probabilities(const Vector& theta, double* loss_sum) const;

  DataTerm data_;
  Index num_classes_ = 0;
  Options options_;
};

}  // namespace blr
