// What every file loader does after reading its splits (data/tensor_file.hpp, data/csv_data.hpp),
// in this order, so that no statistic sees a held-out example:
//
//   1. test split: the file's own, else kTestFraction (20 %) of the examples held out by
//      data/split.hpp's rule with the fixed seed kTestSplitSeed (0): the same test set for every
//      run of a file, whatever the run's seed;
//   2. --train-limit / --test-limit: the first N examples of each;
//   3. --validation F: the share F of the training examples held out with the run's seed;
//   4. standardisation with the remaining training examples: the feature columns the loader names
//      (x ← (x − mean)/sd, population sd) and, for regression, every target column
//      (y ← (y − mean)/sd); the constants go to Dataset::statistics ("feature_mean",
//      "feature_std", "target_mean", "target_std") and the metrics undo the targets' scaling;
//   5. Dataset::validate().
// A constant or non-finite column cannot be standardised and is an error naming it.
#pragma once

#include <ATen/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "blr/torch/data/dataset.hpp"

namespace blr::torch {

inline constexpr double kTestFraction = 0.2;
inline constexpr uint64_t kTestSplitSeed = 0;

struct PrepareOptions {
  int64_t train_limit = 0;
  int64_t test_limit = 0;
  double validation_fraction = 0.0;
  uint64_t seed = 0;  ///< the run's: the validation split
  /// Columns of a 2-D x to standardise, with their names (CSV: the numeric features).
  std::vector<int64_t> standardise_columns;
  std::vector<std::string> column_names;
};

/// Throws "The {what} holds a non-finite value at flat index i (example e)." for a floating
/// tensor with a NaN or an infinity.
void check_all_finite(const ::at::Tensor& t, const std::string& what);

/// Checks and converts the targets of the train (and test, when present) split for the task:
/// classification labels become int64 (floating ones must be whole numbers), must be ≥ 0, and set
/// outputs = the largest + 1; regression targets become float32 of shape (N) or (N, D) and set
/// outputs = D. `what` names the file in messages.
void prepare_targets(Dataset& d, const std::string& what);

/// Steps 1–5 above.
void finish_dataset(Dataset& d, const PrepareOptions& options);

}  // namespace blr::torch
