// Design matrices from CSV feature columns: numeric columns as they are (optionally standardised),
// text columns one-hot coded, and the same encoding for every later file (test, prediction).
//
// A categorical column with levels ℓ₀ < ℓ₁ < … < ℓ_{L−1} in the training data becomes L − 1
// indicator columns named "COL=ℓ_k" (k ≥ 1): treatment coding with the first level ℓ₀ as the
// reference, absorbed into the intercept. Levels are ordered numerically when all of them are
// numbers, by their text (byte order) otherwise, so the coding does not depend on the order of the
// rows. Levels compare as labels do (`same_label`: "1" and "1.0" are one level). A level that
// appears in a later file but not in the training data is an error naming it, the file and the
// line; so is a categorical column with a single level (it carries nothing).
//
// Numeric columns must hold decimal numbers in every row (`parse_number`); a text cell in a column
// not declared categorical is an error naming the file, line and column. With `standardize`, each
// numeric column is centred and scaled by the *training* mean and population sd (`Standardizer`);
// indicator columns stay 0/1. With `intercept`, a column of ones named "(intercept)" comes first.
// One value that swamps a numeric column (`dominant_values`) is found and left to the caller to
// warn about.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "blr/core/types.hpp"
#include "blr/io/csv.hpp"

namespace blr::io {

/// A value that swamps its numeric column: with it, the column's standardised values in every
/// other row agree to six significant digits although those rows differ (e.g. one 1.3e154 among
/// ordinary numbers), so a fit cannot tell those rows apart by this column. For a column x with one
/// row k farthest from the mean m, the other rows' standardised values (x_i − m)/sd span
/// (max_{i≠k} x_i − min_{i≠k} x_i)/sd and lie near (x̄_{i≠k} − m)/sd; they agree to six digits when
/// that span is at most 10⁻⁶ of their largest magnitude. Computed on x / max|x| (no overflow).
struct DominantValue {
  std::string column;
  Index row = 0;  ///< 0-based data row
  double value = 0;
};
/// The dominant value of each column of x that has one (names: the columns' names).
std::vector<DominantValue> dominant_values(const Matrix& x, const std::vector<std::string>& names);
/// The dominant value of one column, if it has one.
std::optional<DominantValue> dominant_value(const Eigen::Ref<const Vector>& x,
                                            const std::string& name);

struct DesignSpec {
  std::vector<std::string> features;     ///< columns, in design order
  std::vector<std::string> categorical;  ///< the subset of `features` to one-hot code
  bool standardize = false;
  bool intercept = true;
};

class DesignEncoder {
 public:
  /// Learns the levels (and standardisation) from the training table; throws naming the problem.
  static DesignEncoder fit(const CsvTable& train, const DesignSpec& spec);
  /// `fit` and the training design at once (each training cell read once).
  static std::pair<DesignEncoder, Matrix> fit_transform(const CsvTable& train,
                                                        const DesignSpec& spec);
  /// The design of any table holding the feature columns, with the training encoding.
  Matrix transform(const CsvTable& table) const;
  /// Column names of the design ("(intercept)", numeric names, "COL=level" indicators).
  const std::vector<std::string>& names() const { return names_; }
  /// Levels of a categorical feature, the reference first (empty for a numeric one).
  const std::vector<std::string>& levels(const std::string& feature) const;
  /// The training data's dominant values (`dominant_values` of the numeric features), found by
  /// `fit`: the caller warns about them.
  const std::vector<DominantValue>& dominant_values() const { return dominant_; }

 private:
  struct Column {
    std::string name;
    bool categorical = false;
    std::vector<std::string> levels;  ///< reference first
  };
  /// The design before standardisation: the intercept, the numeric features as read (straight
  /// from a table that keeps them as numbers: no second copy of them) and the indicators.
  Matrix raw_design(const CsvTable& table) const;
  /// The design's column of each numeric feature.
  std::vector<Index> numeric_positions() const;
  /// Standardises the numeric features' columns of a design in place (with `standardize`).
  void standardize_in_place(Matrix& x) const;
  DesignSpec spec_;
  std::vector<Column> columns_;
  std::vector<std::string> names_;
  std::vector<std::string> numeric_;  ///< names of the numeric features, in order
  Standardizer standardizer_;
  std::vector<DominantValue> dominant_;
};

}  // namespace blr::io
