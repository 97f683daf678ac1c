// The data side of a data loss: a shared data set, the rows a minibatch sums over, and the
// minibatch scale N/M of eq. 34 (Khan & Rue 2023):
//
//     ℓ̂(θ) = (N/M)·Σ_{i∈M} ℓ_i(θ) + R(θ),   an unbiased estimate of ℓ̄(θ) = Σ_i ℓ_i(θ) + R(θ).
//
// The full data set is held by a std::shared_ptr and shared by a loss and every minibatch loss
// made from it; `restricted(rows)` gathers the M selected rows once (O(MD)) so that the many
// evaluations a stochastic estimator makes on one minibatch run over contiguous memory. Row
// indices always refer to the full data set, also when called on a minibatch.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "blr/core/types.hpp"

namespace blr {

/// Inputs (one example per row) and targets.
struct Dataset {
  Matrix inputs;   ///< N×D
  Vector targets;  ///< N
  Index size() const { return inputs.rows(); }
};

/// A shared data set, the minibatch currently selected and its scale N/M.
class DataTerm {
 public:
  DataTerm() = default;
  /// Takes the data; `owner` names the loss in error messages. Throws blr::Error when the sizes
  /// disagree, the data set is empty or a value is not finite.
  DataTerm(Matrix inputs, Vector targets, const std::string& owner);

  /// N, the size of the full data set.
  Index num_examples() const { return full_ ? full_->size() : 0; }
  /// M, the number of rows of the current minibatch (N for the full data).
  Index batch_size() const { return batch_ ? batch_->size() : 0; }
  /// D, the number of input columns.
  Index num_features() const { return full_ ? full_->inputs.cols() : 0; }
  /// N/M.
  double scale() const { return scale_; }
  /// The current minibatch's inputs (M×D) and targets (M).
  const Matrix& inputs() const { return batch_->inputs; }
  const Vector& targets() const { return batch_->targets; }
  /// The full data set.
  const Dataset& full() const { return *full_; }

  /// The same data restricted to `rows` (indices into the full data set, repeats allowed).
  /// Throws blr::Error naming the owner for an empty list or an index out of range.
  DataTerm restricted(const std::vector<Index>& rows, const std::string& owner) const;

 private:
  std::shared_ptr<const Dataset> full_;
  std::shared_ptr<const Dataset> batch_;
  double scale_ = 1.0;
};

}  // namespace blr
