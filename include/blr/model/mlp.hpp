// A small multilayer perceptron with one or two tanh hidden layers and a scalar output f(x; θ):
//
//     a_0 = x,  a_l = tanh(W_l a_{l−1} + b_l) (l = 1..L−1),  f = W_L a_{L−1} + b_L,
//     ℓ̄(θ) = Σ_i ℓ(y_i, f(x_i; θ)) + δ/2·|θ|²,
//
// with ℓ = β/2·(y − f)² for regression (β the noise precision) or ℓ = log(1 + eᶠ) − y·f for
// binary labels y ∈ {0,1} (f is the logit). It is the smallest non-convex model on which the
// estimators of blr differ (Khan & Rue 2023, §4.4: OGN/VOGN vs. exact Hessians).
//
// Everything is exact: per-example gradients by backpropagation written out layer by layer, the
// Hessian-vector product ∇²ℓ̄·v by the R-operator (Pearlmutter 1994: forward-mode derivative of
// backpropagation along v), and the dense Hessian as the P products ∇²ℓ̄·e_j (O(P) passes, so
// meant for small networks; its diagonal is taken from it).
//
// Parameter layout: layer by layer (l = 1..L), first W_l (n_l × n_{l−1}, column-major, so
// entry (r, c) sits at offset + c·n_l + r), then b_l (n_l); n_0 = D inputs, n_L = 1.
#pragma once

#include <vector>

#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"
#include "blr/model/dataset.hpp"

namespace blr {

enum class MlpOutput {
  regression,  ///< ℓ = β/2·(y − f)²
  binary,      ///< ℓ = log(1 + eᶠ) − y·f, y ∈ {0,1}
};

struct MlpOptions {
  std::vector<Index> hidden = {8};  ///< widths of the one or two tanh layers, each ≥ 1
  MlpOutput output = MlpOutput::regression;
  double noise_precision = 1.0;  ///< β > 0 (regression only)
  double prior_precision = 0.0;  ///< δ ≥ 0
  void validate() const;
};

class Mlp {
 public:
  using Options = MlpOptions;

  /// `inputs` N×D, `targets` N (0/1 labels for a binary output).
  Mlp(Matrix inputs, Vector targets, Options options = {});

  /// P, the number of weights and biases.
  Index dimension() const { return dimension_; }
  Index num_examples() const { return data_.num_examples(); }
  double example_scale() const { return data_.scale(); }

  double value(const Vector& theta) const;
  Vector gradient(const Vector& theta) const;
  double value_and_gradient(const Vector& theta, Vector& gradient) const;
  /// Exact dense Hessian from P exact Hessian-vector products (symmetrised).
  Matrix hessian(const Vector& theta) const;
  /// The diagonal of `hessian(θ)` (same cost).
  Vector hessian_diagonal(const Vector& theta) const;
  /// Exact ∇²ℓ̄(θ)·v by the R-operator, about twice the cost of a gradient.
  Vector hessian_vector_product(const Vector& theta, const Vector& v) const;
  /// Row i: ∇ℓ_i(θ) for the i-th row of the minibatch (unscaled).
  Matrix per_example_gradients(const Vector& theta) const;
  Vector regularizer_gradient(const Vector& theta) const;
  Vector regularizer_hessian_diagonal(const Vector& theta) const;

  Mlp with_rows(const std::vector<Index>& rows) const;

  /// The network output f(x; θ) for each row of `inputs` (a regression mean or a logit).
  Vector predict(const Vector& theta, const Matrix& inputs) const;
  /// Random initial parameters: weights N(0, 1/n_{l−1}), biases 0.
  Vector initial_parameters(Rng& rng) const;

  const Options& options() const { return options_; }
  const DataTerm& data() const { return data_; }

  /// Where layer l's weights and biases sit in θ.
  struct Layer {
    Index inputs = 0, outputs = 0, weight_offset = 0, bias_offset = 0;
  };
  const std::vector<Layer>& layers() const { return layers_; }

 private:
  struct Forward;
  Mlp(DataTerm data, Options options, std::vector<Layer> layers, Index p)
      : data_(std::move(data)),
        options_(std::move(options)),
        layers_(std::move(layers)),
        dimension_(p) {}
  void check_theta(const Vector& theta) const;
  Forward forward(const Vector& theta, const Matrix& inputs) const;
  /// Σ_i ℓ_i (unscaled) and, when asked, G_L = ∂ℓ_i/∂f_i and ∂²ℓ_i/∂f_i².
  double output_loss(const Vector& f, const Vector& y, Vector* first, Vector* second) const;
  /// Per-layer deltas G_l = ∂ℓ_i/∂z_l (M×n_l) by backpropagation.
  std::vector<Matrix> backward(const Vector& theta, const Forward& fw, const Vector& g_out) const;
  Vector hvp(const Vector& theta, const Forward& fw, const std::vector<Matrix>& deltas,
             const Vector& d2, const Vector& v) const;

  DataTerm data_;
  Options options_;
  std::vector<Layer> layers_;
  Index dimension_ = 0;
};

}  // namespace blr
