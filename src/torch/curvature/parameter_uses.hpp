// The uses of a parameter that the per-example squared-gradient engine recognises
// (squared_gradients.cpp): each turns the saved input of one operation and the output gradient
// captured during backward() into the per-example gradients G̃_i of per_example.hpp. Internal.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/accumulate.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/torch/curvature/kronecker_factors.hpp"
#include "blr/torch/curvature/per_example.hpp"

namespace torch::autograd {
struct Node;
}  // namespace torch::autograd

namespace blr::torch::detail {

/// The gradient flowing into one consumer node, filled by a pre-hook during backward().
struct Capture {
  std::shared_ptr<::torch::autograd::Node> node;
  ::at::Tensor grad;
};

/// One use of a parameter by a supported operation: its per-example gradients G̃_i.
class ParameterUse {
 public:
  ParameterUse(std::string parameter, std::string operation, std::shared_ptr<Capture> capture)
      : parameter_(std::move(parameter)),
        operation_(std::move(operation)),
        capture_(std::move(capture)) {}
  virtual ~ParameterUse() = default;

  /// False when no gradient reached the operation (it then contributes nothing).
  bool received() const { return capture_->grad.defined(); }
  /// Checks (and prepares) what only the output gradient shows, after backward().
  virtual void after_backward() {}
  /// Elements of the per-example gradient of one example and of its temporaries.
  virtual int64_t elements_per_example() const = 0;
  /// G̃_i for examples [begin, end): (end − begin) × parameter shape.
  virtual ::at::Tensor per_example(int64_t begin, int64_t end) const = 0;
  /// Σ_i G̃_i² where a formula avoids materialising G̃_i; undefined otherwise.
  virtual ::at::Tensor squared_sum() const { return {}; }
  /// K-FAC/KFC factors (A, G) where this use is a Linear weight with one row per example or an
  /// ungrouped Conv2d weight (kronecker_factors.hpp); undefined otherwise.
  virtual KroneckerFactors kronecker_factors() const { return {}; }
  /// Per example Σ_j w_j G̃_ij² (an M-vector) where a formula avoids materialising G̃_i, for
  /// weights w of the parameter's shape; with a basis Σ w ⊙ (U_outᵀ G̃_i U_in)² (G̃_i viewed
  /// out×in; squared_gradients.hpp); undefined otherwise.
  virtual ::at::Tensor weighted_norms(const ::at::Tensor& weights,
                                      const GradientBasis* basis = nullptr) const {
    (void)weights;
    (void)basis;
    return {};
  }
  /// True when weighted_norms() has a formula that needs only the saved input and the output
  /// gradient (not the parameter's own gradient).
  virtual bool has_weighted_norms_formula() const { return false; }

 protected:
  const ::at::Tensor& grad() const { return capture_->grad; }
  /// Throws blr::Error naming the parameter and the operation.
  template <class... Args>
  void require(bool condition, fmt::format_string<Args...> format, Args&&... args) const {
    if (!condition) {
      throw Error(fmt::format("Per-example squared gradients: parameter '{}' (used by {}) {}",
                              parameter_, operation_,
                              fmt::format(format, std::forward<Args>(args)...)));
    }
  }

 private:
  std::string parameter_, operation_;
  std::shared_ptr<Capture> capture_;
};

/// Linear weight: the second factor of mm/addmm, or of bmm broadcast over a batch (matmul of an
/// input of rank ≥ 3), possibly through a transpose. `input` is the layer input flattened to
/// R×in; the output gradient is flattened to R×out.
class LinearWeightUse final : public ParameterUse {
 public:
  LinearWeightUse(std::string parameter, std::string operation, std::shared_ptr<Capture> capture,
                  ::at::Tensor input, double alpha, bool transposed, int64_t examples,
                  int64_t rows_per_example)
      : ParameterUse(std::move(parameter), std::move(operation), std::move(capture)),
        input_(std::move(input)),
        alpha_(alpha),
        transposed_(transposed),
        examples_(examples),
        rows_(rows_per_example) {}

  int64_t elements_per_example() const override {
    return 2 * input_.size(1) * grad_columns() + rows_ * (input_.size(1) + grad_columns());
  }
  ::at::Tensor per_example(int64_t begin, int64_t end) const override {
    auto g = linear_weight_per_example(input_, rows_of(grad()), examples_, begin, end);
    if (alpha_ != 1.0) g.mul_(alpha_);
    // Through a transpose the parameter is W (out×in); used directly it is Wᵀ (in×out).
    return transposed_ ? g : g.transpose(1, 2);
  }
  ::at::Tensor squared_sum() const override {
    if (rows_ != 1) return {};
    auto s = linear_weight_squared_sum(input_, rows_of(grad()));
    if (alpha_ != 1.0) s.mul_(alpha_ * alpha_);
    return transposed_ ? s : s.t().contiguous();
  }
  KroneckerFactors kronecker_factors() const override {
    if (rows_ != 1 || !transposed_) return {};  // sequences, or a weight stored as Wᵀ: diagonal
    auto f = linear_kronecker_factors(input_, rows_of(grad()));
    if (alpha_ != 1.0) f.output.mul_(alpha_ * alpha_);
    return f;
  }
  bool has_weighted_norms_formula() const override { return rows_ == 1; }
  // One row per example: G̃_i = e_i a_iᵀ (through the transpose, W out×in), so
  // Σ_{o,j} w_oj e_io² a_ij² = Σ_j ((e²) w)_ij a_ij²; used directly (Wᵀ, in×out) the roles swap.
  // With a basis, U_rowsᵀ G̃_i U_cols = (U_rowsᵀ r_i)(U_colsᵀ c_i)ᵀ is still of rank one: the same
  // formula on the rotated rows r_i U_rows and c_i U_cols.
  ::at::Tensor weighted_norms(const ::at::Tensor& weights,
                              const GradientBasis* basis) const override {
    if (rows_ != 1) return {};
    auto rows = transposed_ ? rows_of(grad()) : input_;
    auto cols = transposed_ ? input_ : rows_of(grad());
    if (basis != nullptr) {
      rows = rows.mm(basis->output);
      cols = cols.mm(basis->input);
    }
    auto r = (rows.square().mm(weights) * cols.square()).sum(1);
    if (alpha_ != 1.0) r.mul_(alpha_ * alpha_);
    return r;
  }

 private:
  static ::at::Tensor rows_of(const ::at::Tensor& t) { return t.reshape({-1, t.size(-1)}); }
  int64_t grad_columns() const { return grad().defined() ? grad().size(-1) : 1; }
  ::at::Tensor input_;
  double alpha_;
  bool transposed_;
  int64_t examples_, rows_;
};

/// A parameter p broadcast against a batched output: Linear and LayerNorm biases, y = x ± α·p
/// (a learned positional table), y = x ⊙ p (a learned scale, RMSNorm's weight). Its per-example
/// gradient is α·sum_to((e ⊙ x)_i, shape(p)), with x only for the product.
/// `rows_per_example` > 0: the output gradient has R = rows·M rows (mm/addmm) and is viewed as
/// M × rows × out; 0: its leading dimension must be M.
class BroadcastUse final : public ParameterUse {
 public:
  BroadcastUse(std::string parameter, std::string operation, std::shared_ptr<Capture> capture,
               std::vector<int64_t> shape, double scale, int64_t examples, int64_t rows_per_example,
               ::at::Tensor factor = {})
      : ParameterUse(std::move(parameter), std::move(operation), std::move(capture)),
        shape_(std::move(shape)),
        scale_(scale),
        examples_(examples),
        rows_(rows_per_example),
        factor_(std::move(factor)) {}

  void after_backward() override {
    if (rows_ > 0) {
      require(grad().size(0) == rows_ * examples_,
              "receives {} rows where {} examples of {} rows each were expected.", grad().size(0),
              examples_, rows_);
      batched_ = grad().reshape({examples_, rows_, -1});
    } else {
      batched_ = factor_.defined() ? grad() * factor_ : grad();
      require(batched_.dim() >= 1 && batched_.size(0) == examples_,
              "is broadcast against an output of shape {} whose leading dimension is not the {} "
              "examples (the engine needs batch-first layers).",
              batched_.sizes(), examples_);
    }
    require(broadcasts_per_example(shape_, batched_.sizes()),
            "has shape {}, which does not broadcast against an output of shape {} without a "
            "batch dimension of its own.",
            shape_, batched_.sizes());
  }
  int64_t elements_per_example() const override {
    return ::c10::multiply_integers(shape_) + batched_.numel() / examples_;
  }
  ::at::Tensor per_example(int64_t begin, int64_t end) const override {
    auto g = broadcast_per_example(batched_, shape_, begin, end);
    return scale_ == 1.0 ? g : g * scale_;
  }

 private:
  std::vector<int64_t> shape_;
  double scale_;
  int64_t examples_, rows_;
  ::at::Tensor factor_, batched_;
};

class ConvWeightUse final : public ParameterUse {
 public:
  ConvWeightUse(std::string parameter, std::string operation, std::shared_ptr<Capture> capture,
                ::at::Tensor input, std::vector<int64_t> weight_shape, ConvGeometry geometry)
      : ParameterUse(std::move(parameter), std::move(operation), std::move(capture)),
        input_(std::move(input)),
        weight_shape_(std::move(weight_shape)),
        geometry_(std::move(geometry)) {}

  int64_t elements_per_example() const override {
    const int64_t weight = ::c10::multiply_integers(weight_shape_);
    const int64_t positions = grad().defined() ? grad()[0][0].numel() : 1;
    // The weight gradient, and the unfolded patches (C·k positions per output position).
    return 2 * weight +
           input_.size(1) *
               ::c10::multiply_integers(weight_shape_.begin() + 2, weight_shape_.end()) * positions;
  }
  ::at::Tensor per_example(int64_t begin, int64_t end) const override {
    return conv_weight_per_example(input_, grad(), weight_shape_, geometry_, begin, end);
  }
  KroneckerFactors kronecker_factors() const override {
    if (input_.dim() != 4 || geometry_.groups != 1) return {};  // Conv1d, grouped: diagonal
    return conv2d_kronecker_factors(input_, grad(), weight_shape_, geometry_);
  }

 private:
  ::at::Tensor input_;
  std::vector<int64_t> weight_shape_;
  ConvGeometry geometry_;
};

class ConvBiasUse final : public ParameterUse {
 public:
  ConvBiasUse(std::string parameter, std::string operation, std::shared_ptr<Capture> capture,
              int64_t examples)
      : ParameterUse(std::move(parameter), std::move(operation), std::move(capture)),
        input_examples_(examples) {}
  void after_backward() override {
    require(grad().size(0) == input_examples_,
            "receives an output gradient whose leading dimension is {}, not the {} examples.",
            grad().size(0), input_examples_);
  }
  int64_t elements_per_example() const override { return 2 * grad().size(1); }
  ::at::Tensor per_example(int64_t begin, int64_t end) const override {
    return conv_bias_per_example(grad(), begin, end);
  }

 private:
  int64_t input_examples_;
};

class EmbeddingUse final : public ParameterUse {
 public:
  EmbeddingUse(std::string parameter, std::string operation, std::shared_ptr<Capture> capture,
               ::at::Tensor indices, int64_t num_weights, int64_t padding_idx)
      : ParameterUse(std::move(parameter), std::move(operation), std::move(capture)),
        indices_(std::move(indices)),
        num_weights_(num_weights),
        padding_idx_(padding_idx) {}

  int64_t elements_per_example() const override {
    return 2 * num_weights_ * grad().size(-1) + indices_[0].numel() * grad().size(-1);
  }
  ::at::Tensor per_example(int64_t begin, int64_t end) const override {
    return embedding_per_example(indices_, grad(), num_weights_, padding_idx_, begin, end);
  }
  ::at::Tensor squared_sum() const override {
    return embedding_squared_sum(indices_, grad(), num_weights_, padding_idx_);
  }

 private:
  ::at::Tensor indices_;
  int64_t num_weights_, padding_idx_;
};

class LayerNormWeightUse final : public ParameterUse {
 public:
  LayerNormWeightUse(std::string parameter, std::string operation, std::shared_ptr<Capture> capture,
                     ::at::Tensor input, ::at::Tensor mean, ::at::Tensor rstd,
                     std::vector<int64_t> normalized_shape)
      : ParameterUse(std::move(parameter), std::move(operation), std::move(capture)),
        input_(std::move(input)),
        mean_(std::move(mean)),
        rstd_(std::move(rstd)),
        normalized_shape_(std::move(normalized_shape)) {}

  int64_t elements_per_example() const override {
    return 2 * (input_.numel() / input_.size(0)) + ::c10::multiply_integers(normalized_shape_);
  }
  ::at::Tensor per_example(int64_t begin, int64_t end) const override {
    return layer_norm_weight_per_example(input_, mean_, rstd_, grad(), normalized_shape_, begin,
                                         end);
  }

 private:
  ::at::Tensor input_, mean_, rstd_;
  std::vector<int64_t> normalized_shape_;
};

}  // namespace blr::torch::detail
