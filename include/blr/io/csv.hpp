// CSV tables with a header row, and the design matrices built from them.
//
// `CsvTable` reads comma-separated text (RFC 4180 quoting: "a, b" and "" inside quotes) whose
// first line names the columns. Cells stay text until a column is asked for, so one file may hold
// numeric covariates and a text label ("Yes"/"No"). Every failure is a `blr::Error` naming the
// file, the 1-based line and the column: a row with the wrong number of fields, an unterminated
// quote, a missing column, an empty, non-numeric or non-finite value, a label outside the declared
// classes, a count that is not a non-negative integer.
//
// `Standardizer` centres and scales columns with the *training* means and population standard
// deviations (ddof 0), the convention of the Pima oracle in research/peers.md §4(e);
// `with_intercept` prepends a column of ones.
#pragma once

#include <string>
#include <vector>

#include "blr/core/types.hpp"

namespace blr::io {

class CsvTable {
 public:
  /// Reads and parses a file; `source` in messages is the path.
  static CsvTable read(const std::string& path);
  /// Parses text held in memory; `source` names it in messages.
  static CsvTable parse(const std::string& text, const std::string& source);

  const std::string& source() const { return source_; }
  const std::vector<std::string>& columns() const { return header_; }
  Index rows() const { return static_cast<Index>(cells_.size()); }
  bool has_column(const std::string& name) const;
  /// Position of a column; throws naming the file and listing the columns it has.
  Index column_index(const std::string& name) const;
  /// The text of one cell (row 0 is the first line after the header).
  const std::string& cell(Index row, Index column) const { return cells_[row][column]; }
  /// 1-based line in the file of data row `row`.
  long line_of(Index row) const { return lines_[row]; }

  /// A column as numbers; throws on an empty, non-numeric or non-finite cell.
  Vector numeric_column(const std::string& name) const;
  /// Several columns side by side (rows × names.size()).
  Matrix numeric_columns(const std::vector<std::string>& names) const;
  /// All column names except the ones listed (in file order).
  std::vector<std::string> columns_except(const std::vector<std::string>& excluded) const;
  /// Distinct labels of a column in order of first appearance.
  std::vector<std::string> distinct(const std::string& name) const;
  /// 1 where the label equals `positive`, 0 where it equals another declared class; a label
  /// outside `classes` is an error naming the line. Labels match as text, or as numbers when both
  /// sides parse as numbers ("1" = "1.0").
  Vector binary_labels(const std::string& name, const std::string& positive,
                       const std::vector<std::string>& classes) const;
  /// Index of each label in `classes` (categorical data); a label outside them is an error.
  std::vector<int> class_labels(const std::string& name,
                                const std::vector<std::string>& classes) const;
  /// A column of non-negative integer counts (Poisson responses).
  Vector count_column(const std::string& name) const;

 private:
  std::string source_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> cells_;
  std::vector<long> lines_;
};

/// Parses a whole cell as a finite double; throws a sentence naming `where` otherwise.
double parse_number(const std::string& text, const std::string& where);
/// True when `text` parses completely as a double (NaN and infinities included).
bool looks_numeric(const std::string& text);
/// Labels are equal as text, or as numbers when both are numeric.
bool same_label(const std::string& a, const std::string& b);

/// Column-wise standardisation with training statistics.
struct Standardizer {
  Vector mean;  ///< training means
  Vector sd;    ///< training population standard deviations (ddof 0)

  /// Fits on the rows of `x`; a constant column is an error naming it (`names` may be empty).
  static Standardizer fit(const Matrix& x, const std::vector<std::string>& names = {});
  /// (x − mean) / sd, column by column.
  Matrix transform(const Matrix& x) const;
};

/// [1, x]: a column of ones before the columns of x.
Matrix with_intercept(const Matrix& x);

}  // namespace blr::io
