// CSV tables with a header row, and the design matrices built from them.
//
// `CsvTable` reads comma-separated text (RFC 4180 quoting: "a, b" and "" inside quotes) whose first
// line names the columns. A UTF-8 byte-order mark at the start is skipped; CR, LF and CRLF each end
// a record (inside quotes they are text). Cells stay text until a column is asked for, so one file
// may hold numeric covariates and a text label ("Yes"/"No"). A number is a whole decimal token —
// optional sign, digits with an optional point, optional exponent — read with fast_float (Debian's
// libfast-float-dev; correctly rounded, the tokens `std::from_chars` takes in general format): no
// hexadecimal floats, no "inf"/"nan" spellings, nothing beyond the range of a double (a value that
// rounds to infinity, or to zero from digits that are not all zero). The file is read with one read
// of its size and split in place (unquoted fields trimmed of spaces and tabs, quotes undone), so
// the table holds the text once. Every failure is a `blr::Error` naming the file, the 1-based line
// and the column: a row with the wrong number of fields, an unterminated quote, a missing column,
// an empty, non-numeric, non-finite or out-of-range value, a label outside the declared classes, a
// count that is not a non-negative integer. A file larger than `kMaxCsvBytes` is refused before it
// is read. A missing value is an empty cell or NA; `first_missing` finds one and `without_missing`
// drops the rows holding one (a caller's choice: reading such a cell as a number stays an error).
//
// A large file of numbers is read leaner with a column chooser (`read(path, choose)`): the file
// streams through a buffer of `chunk_bytes`, the columns chosen as numbers are parsed as they come
// (their text is not kept: 8 bytes a cell instead of the cell's text and its 8-byte end), the
// columns chosen as text keep their text, and the others are only checked for the row's shape. A
// table of 10⁵ × 51 numbers then takes 41 MB instead of 142 MB. Numbers, missing cells and every
// error are those of the whole-file reader, except that in a file with several faults the first
// in file order is reported (the whole-file reader reports a NUL byte anywhere first, then a
// malformed quote anywhere, then a row of the wrong width). A column chosen as numbers that holds
// a text cell is read again as text, so that asking it for numbers names the cell as ever, and a
// categorical column stays readable. What cannot be read twice (a pipe) is read whole, every
// column kept as text.
//
// `Standardizer` centres and scales columns with the *training* means and population standard
// deviations (ddof 0), the convention of the Pima oracle in research/peers.md §4(e); a column whose
// largest |x| is beyond 1e±100 is divided by it first, so that no sum or square overflows or
// underflows; `with_intercept` prepends a column of ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blr/core/types.hpp"

namespace blr::io {

/// The largest CSV file `CsvTable::read` accepts (4 GiB); the table in memory takes a few times
/// more.
inline constexpr std::uintmax_t kMaxCsvBytes = std::uintmax_t{4} << 30;

/// The buffer the streaming reader reads a file through (4 MiB).
inline constexpr std::size_t kCsvChunkBytes = std::size_t{4} << 20;

/// What `CsvTable::read` with a chooser keeps of a file's columns; a column in neither list is
/// dropped, and a name that is not a column is an error naming the file's columns.
struct CsvColumns {
  std::vector<std::string> numbers;  ///< parsed to numbers as the file streams
  std::vector<std::string> text;     ///< kept as text (labels, categorical features)
};
/// Chooses the columns to keep from the file's header (it may throw a `blr::Error`).
using CsvColumnChooser = std::function<CsvColumns(const std::vector<std::string>& header)>;

class CsvTable {
 public:
  /// Reads and parses a file; `source` in messages is the path. A file of more than `max_bytes`
  /// is refused, with its size, before anything is read.
  static CsvTable read(const std::string& path, std::uintmax_t max_bytes = kMaxCsvBytes);
  /// Streams a file, keeping only the columns `choose` names (see the file's header comment).
  static CsvTable read(const std::string& path, const CsvColumnChooser& choose,
                       std::uintmax_t max_bytes = kMaxCsvBytes,
                       std::size_t chunk_bytes = kCsvChunkBytes);
  /// Parses text held in memory; `source` names it in messages.
  static CsvTable parse(const std::string& text, const std::string& source);

  const std::string& source() const { return source_; }
  const std::vector<std::string>& columns() const { return header_; }
  Index rows() const { return static_cast<Index>(lines_.size()); }
  bool has_column(const std::string& name) const;
  /// True when the column's text is kept (every column of a whole-file read); false for a column
  /// kept as numbers, or dropped, by a streaming read.
  bool holds_text(const std::string& name) const;
  /// Position of a column; throws naming the file and listing the columns it has.
  Index column_index(const std::string& name) const;
  /// The text of one cell (row 0 is the first line after the header); valid while the table is.
  /// Asking a column whose text is not kept is a bug (std::logic_error).
  std::string_view cell(Index row, Index column) const;
  /// 1-based line in the file of data row `row`.
  long line_of(Index row) const { return lines_[row]; }

  /// A column as numbers; throws on an empty, non-numeric or non-finite cell.
  Vector numeric_column(const std::string& name) const;
  /// Several columns side by side (rows × names.size()); a table of 2¹⁸ cells or more is parsed
  /// in blocks of rows on up to one thread per core (the same numbers and errors either way).
  Matrix numeric_columns(const std::vector<std::string>& names) const;
  /// All column names except the ones listed (in file order).
  std::vector<std::string> columns_except(const std::vector<std::string>& excluded) const;
  /// Distinct labels of a column (as `same_label` compares them) in order of first appearance,
  /// in one pass. The scan stops at the first label beyond `max_count` distinct ones, so a result
  /// of more than `max_count` labels (max_count + 1 of them) means "more than allowed".
  std::vector<std::string> distinct(
      const std::string& name,
      std::size_t max_count = std::numeric_limits<std::size_t>::max()) const;
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

  /// A missing cell (`is_missing`): its data row and column.
  struct MissingCell {
    Index row = 0;
    std::string column;
  };
  /// The first missing cell in file order among `names`, if any.
  std::optional<MissingCell> first_missing(const std::vector<std::string>& names) const;
  /// The table less every row with a missing cell among `names` (lines keep their numbers).
  CsvTable without_missing(const std::vector<std::string>& names) const;

 private:
  /// `parse` on text the table takes over (it splits the records in place).
  static CsvTable parse_owned(std::string text, const std::string& source);
  /// One pass of the streaming read; the columns chosen as numbers that hold a text cell are
  /// added to `text_cells_found` (the caller then reads the file again with them as text).
  static CsvTable stream(const std::string& path, const CsvColumnChooser& choose,
                         std::uintmax_t max_bytes, std::size_t chunk_bytes,
                         std::vector<std::string>& text_cells_found);
  /// Refuses a choice that names a column the table does not have, or one both as numbers and as
  /// text.
  void check_choice(const CsvColumns& chosen) const;
  /// Sets which columns the streaming read keeps, and how, from the chooser's answer (checked).
  void keep_columns(const CsvColumns& chosen);
  /// The fields of a split buffer (the streaming read's): field k ends at ends[k] and starts at
  /// the previous end (0 for k = 0).
  struct FieldText {
    const char* text;
    const std::size_t* ends;
    std::string_view operator()(std::size_t k) const {
      const std::size_t begin = k == 0 ? 0 : ends[k - 1];
      return {text + begin, ends[k] - begin};
    }
  };
  /// Parses the number cells of the data records starting at fields `firsts` (the last rows
  /// added), on up to one thread per core; records the columns found to hold a text cell.
  void parse_numbers(const std::vector<std::size_t>& firsts, const FieldText& field,
                     std::vector<bool>& has_text_cell, std::vector<std::string>& text_cells_found);
  /// The text of cell (row, k) of the kept text columns.
  std::string_view text_cell(Index row, std::size_t k) const;
  /// The kept text column of a file column; std::logic_error when its text is not kept.
  std::size_t text_slot(Index column) const;

  enum class Kept : unsigned char { kText, kNumbers, kDropped };
  struct Stored {
    Kept kept = Kept::kText;
    std::size_t slot = 0;  ///< its place among the kept text (or number) columns
  };
  /// The columns kept as numbers (NaN where missing), side by side in one buffer of `capacity`
  /// rows per column: one allocation, backed by 2 MiB pages where Linux allows, so that filling it
  /// faults a few pages in, not one per 4 KiB.
  class NumberBlock {
   public:
    NumberBlock() = default;
    NumberBlock(const NumberBlock& other);
    NumberBlock& operator=(const NumberBlock& other);
    NumberBlock(NumberBlock&&) noexcept = default;
    NumberBlock& operator=(NumberBlock&&) noexcept = default;
    /// Columns of no rows, with room for `capacity` rows each.
    void reset(std::size_t columns, std::size_t capacity);
    /// `rows` rows: the present ones kept, the new ones to be written by the caller.
    void resize_rows(std::size_t rows);
    std::size_t columns() const { return columns_; }
    double* column(std::size_t c) { return data_.get() + c * capacity_; }
    const double* column(std::size_t c) const { return data_.get() + c * capacity_; }

   private:
    std::unique_ptr<double[]> data_;
    std::size_t columns_ = 0, capacity_ = 0, rows_ = 0;
  };

  std::string source_;
  std::vector<std::string> header_;
  std::vector<Stored> stored_;  ///< per column of the file
  // The kept text columns' fields back to back, the header's first; field k ends at ends_[k] and
  // starts at the previous end (0 for k = 0); kept text cell (r, c) is field width_·(r + 1) + c.
  std::size_t width_ = 0;
  std::string text_;
  std::vector<std::size_t> ends_;
  NumberBlock numbers_;
  /// Per column kept as numbers: its missing cells (row, text), in row order.
  std::vector<std::vector<std::pair<Index, std::string>>> missing_;
  std::vector<long> lines_;  ///< 1-based line of each data row
};

/// The missing-cell policy that every door reading a CSV shares (`--missing error|drop` of
/// `blr infer`, `blr sensitivity`, `blr train`): "error" throws naming the file, line and column
/// of the first missing cell among `used` and how to drop instead; "drop" returns the table less
/// every row with a missing cell among `used` (lines keep their numbers), and a table left empty
/// is an error. The columns must exist (the error names the file's columns); any other policy is
/// an error naming '--missing'.
/// The table is taken by value: pass it with std::move where it is not needed after, so that
/// its text (the whole file) is not copied.
CsvTable apply_missing_policy(CsvTable table, const std::vector<std::string>& used,
                              const std::string& policy);

/// Parses a whole cell (spaces and tabs around it ignored) as a decimal number within the range
/// of a double; throws a sentence naming `where` otherwise.
double parse_number(std::string_view text, const std::string& where);
/// A missing value: an empty cell (spaces and tabs ignored) or NA, as R writes it.
bool is_missing(std::string_view text);
/// True when `parse_number` accepts `text`.
bool looks_numeric(std::string_view text);
/// Labels are equal as text (trimmed), or as numbers when both are numeric.
bool same_label(std::string_view a, std::string_view b);

/// Column-wise standardisation with training statistics.
struct Standardizer {
  Vector mean;                     ///< training means
  Vector sd;                       ///< training population standard deviations (ddof 0)
  std::vector<std::string> names;  ///< column names for messages (may be empty)

  /// Fits on the rows of `x`; a constant column, or one whose mean or sd is not finite, is an
  /// error naming it (`names` may be empty).
  static Standardizer fit(const Matrix& x, const std::vector<std::string>& names = {});
  /// `fit` on the listed columns of x (a design's numeric features, say), in that order.
  static Standardizer fit_columns(const Matrix& x, const std::vector<Index>& columns,
                                  const std::vector<std::string>& names);
  /// (x − mean) / sd, column by column; a result that is not finite is an error naming the
  /// column and the row.
  Matrix transform(const Matrix& x) const;
  /// The mean and sd of column j's values (`fit`'s rule and errors for one column).
  std::pair<double, double> column_moments(Index j, const Eigen::Ref<const Vector>& x) const;
  /// `transform` of column j's values, in place.
  void transform_column(Index j, Eigen::Ref<Vector> x) const;
  /// "'name'" or the 1-based column number.
  std::string column_name(Index j) const;
};

/// [1, x]: a column of ones before the columns of x.
Matrix with_intercept(const Matrix& x);

}  // namespace blr::io
