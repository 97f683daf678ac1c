// Fuzz harness: the CSV reader and the table/column layer (include/blr/io/csv.hpp).
//
// The input is the text of a file. After an accepted parse every column is asked for as numbers,
// counts, distinct labels (bounded and not), class and binary labels; the numeric columns are
// standardised. Properties checked: numbers are finite, `looks_numeric` agrees with
// `parse_number`, distinct labels are pairwise different and the bounded scan is a prefix of the
// full one, class labels point at a class equal to the cell, counts are non-negative integers,
// standardised values, means and sds are finite with sd > 0. The same text written to a file
// and streamed (`CsvTable::read` with a chooser: the first half of the columns as numbers, the
// rest as text, through a buffer of 1-64 bytes set by the input's first byte) is accepted exactly
// when the whole text is, with the same rows, lines, text cells, numbers and missing cells.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "blr/io/csv.hpp"
#include "fuzz_check.hpp"

namespace {

using namespace blr;
using namespace blr::io;
using blr::fuzz::accepted;
using blr::fuzz::require;

void check_column(const CsvTable& t, const std::string& name, Index j,
                  std::vector<std::string>& numeric_names) {
  Vector v;
  const bool numeric = accepted([&] { v = t.numeric_column(name); });
  bool all_numeric = true;
  for (Index i = 0; i < t.rows(); ++i) {
    const bool looks = looks_numeric(t.cell(i, j));
    double x = 0;
    const bool parses = accepted([&] { x = parse_number(t.cell(i, j), "cell"); });
    require(looks == parses,
            "looks_numeric and parse_number disagree on '" + std::string(t.cell(i, j)) + "'");
    require(!parses || std::isfinite(x), "parse_number accepted a value that is not finite");
    all_numeric = all_numeric && parses;
  }
  require(numeric == all_numeric, "numeric_column disagrees with parse_number on its cells");
  if (numeric) {
    require(v.size() == t.rows() && v.allFinite(), "an accepted numeric column is not finite");
    numeric_names.push_back(name);
  }

  Vector counts;
  if (accepted([&] { counts = t.count_column(name); })) {
    for (Index i = 0; i < counts.size(); ++i) {
      require(std::isfinite(counts[i]) && counts[i] >= 0 && counts[i] == std::floor(counts[i]),
              "an accepted count is not a non-negative integer");
    }
  }

  const auto all = t.distinct(name);
  const auto two = t.distinct(name, 2);
  require(!all.empty() && two.size() == std::min<std::size_t>(all.size(), 3),
          "distinct(name, 2) does not stop at the third class");
  for (std::size_t k = 0; k < two.size(); ++k)
    require(two[k] == all[k], "distinct(name, 2) is not a prefix of distinct(name)");
  if (all.size() <= 64) {
    for (std::size_t a = 0; a < all.size(); ++a)
      for (std::size_t b = a + 1; b < all.size(); ++b)
        require(!same_label(all[a], all[b]), "distinct returned two equal labels");
  }
  std::vector<int> idx;
  require(accepted([&] { idx = t.class_labels(name, all); }),
          "class_labels refused a label that distinct found");
  for (Index i = 0; i < t.rows(); ++i) {
    require(idx[i] >= 0 && idx[i] < static_cast<int>(all.size()) &&
                same_label(t.cell(i, j), all[idx[i]]),
            "class_labels points at a class that differs from the cell");
  }
  Vector y;
  if (accepted([&] { y = t.binary_labels(name, all.front(), two); })) {
    for (Index i = 0; i < y.size(); ++i) {
      require(y[i] == (same_label(t.cell(i, j), all.front()) ? 1.0 : 0.0),
              "binary_labels disagrees with same_label");
    }
  }
}

/// The streaming reader on the same text agrees with the whole-text table `whole` (nullptr when the
/// whole text was refused).
void check_stream(const std::string& text, const CsvTable* whole) {
  static const std::string path =
      (std::filesystem::temp_directory_path() /
       ("blr-fuzz-csv-" + std::to_string(static_cast<long>(::getpid())) + ".csv"))
          .string();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  const std::size_t chunk = text.empty() ? 1 : 1 + static_cast<unsigned char>(text[0]) % 64;
  std::vector<std::string> numbers, kept_text;
  CsvTable t;
  const bool ok = accepted([&] {
    t = CsvTable::read(
        path,
        [&](const std::vector<std::string>& header) {
          numbers.assign(header.begin(), header.begin() + static_cast<long>(header.size() / 2));
          kept_text.assign(header.begin() + static_cast<long>(header.size() / 2), header.end());
          return CsvColumns{numbers, kept_text};
        },
        kMaxCsvBytes, chunk);
  });
  std::remove(path.c_str());
  require(ok == (whole != nullptr),
          "the streaming reader and the whole-text reader disagree on "
          "whether the text is a table");
  if (!ok) return;
  require(t.rows() == whole->rows() && t.columns() == whole->columns(),
          "the streamed table's rows or header differ");
  for (Index i = 0; i < t.rows(); ++i)
    require(t.line_of(i) == whole->line_of(i), "a streamed row's line differs");
  for (const auto& name : kept_text) {
    const Index j = t.column_index(name);
    for (Index i = 0; i < t.rows(); ++i)
      require(t.cell(i, j) == whole->cell(i, j), "a streamed text cell differs");
  }
  for (const auto& name : numbers) {
    Vector a, b;
    const bool sa = accepted([&] { a = t.numeric_column(name); });
    const bool sb = accepted([&] { b = whole->numeric_column(name); });
    require(sa == sb && (!sa || a == b), "a streamed numeric column differs");
    const auto ma = t.first_missing({name}), mb = whole->first_missing({name});
    require(ma.has_value() == mb.has_value() && (!ma || ma->row == mb->row),
            "a streamed column's first missing cell differs");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  CsvTable t;
  const bool parsed = accepted([&] { t = CsvTable::parse(text, "fuzz.csv"); });
  check_stream(text, parsed ? &t : nullptr);
  if (!parsed) return 0;
  require(t.rows() > 0 && !t.columns().empty(), "an accepted table has no rows or no columns");
  std::vector<std::string> numeric_names;
  for (Index j = 0; j < static_cast<Index>(t.columns().size()); ++j) {
    const std::string& name = t.columns()[j];
    require(!name.empty() && t.column_index(name) == j, "a header name does not find its column");
    check_column(t, name, j, numeric_names);
  }
  if (numeric_names.empty()) return 0;
  const Matrix x = t.numeric_columns(numeric_names);
  Standardizer s;
  if (!accepted([&] { s = Standardizer::fit(x, numeric_names); })) return 0;
  require(s.mean.allFinite() && s.sd.allFinite() && (s.sd.array() > 0).all(),
          "an accepted standardisation has a non-finite mean or sd, or sd <= 0");
  // The training data itself always standardises to finite values (|z| <= sqrt(rows)).
  Matrix z;
  require(accepted([&] { z = s.transform(x); }), "the training data could not be standardised");
  require(z.allFinite(), "standardised values are not finite");
  require(with_intercept(z).allFinite(), "with_intercept made a value that is not finite");
  return 0;
}
