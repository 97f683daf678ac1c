#include "blr/io/design.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>

#include "blr/core/error.hpp"
#include "csv_detail.hpp"

namespace blr::io {
namespace {

std::string trimmed(std::string_view s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string_view::npos ? "" : std::string(s.substr(b, e - b + 1));
}

/// Numbers by value when every level is a number, text (byte order) otherwise.
void sort_levels(std::vector<std::string>& levels) {
  const bool numeric = std::all_of(levels.begin(), levels.end(), looks_numeric);
  if (numeric) {
    std::stable_sort(levels.begin(), levels.end(), [](const auto& a, const auto& b) {
      return parse_number(a, "level") < parse_number(b, "level");
    });
  } else {
    std::stable_sort(levels.begin(), levels.end());
  }
}

/// A numeric column, with the hint that a text column must be declared categorical. A column of
/// numbers is read in one pass; only a column that fails is scanned for a text cell, whose hint
/// then comes before the reader's own message on an earlier cell (as when the scan came first).
Vector numeric(const CsvTable& t, const std::string& name) {
  // A column kept as numbers holds no text cell (the streaming reader keeps such a column as
  // text): its only faults are missing cells, which the reader names.
  if (!t.holds_text(name)) return t.numeric_column(name);
  try {
    return t.numeric_column(name);
  } catch (const Error&) {
    // Find the text cell below, if any; otherwise the reader's message stands.
  }
  const Index j = t.column_index(name);
  for (Index i = 0; i < t.rows(); ++i) {
    const std::string cell = trimmed(t.cell(i, j));
    if (cell.empty() || looks_numeric(cell)) continue;
    // Number-like tokens (1e400, 0x1p3, inf, nan) get parse_number's own message below.
    std::string body = cell.substr(cell[0] == '+' || cell[0] == '-' ? 1 : 0);
    std::transform(body.begin(), body.end(), body.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    const bool spelled_number = body.empty() || std::isdigit(static_cast<unsigned char>(body[0])) ||
                                body[0] == '.' || body == "inf" || body == "infinity" ||
                                body == "nan";
    if (!spelled_number && cell != "NA") {
      throw Error(fmt::format(
          "File '{}', line {}, column '{}': '{}' is not a number; a text column is a feature only "
          "when declared categorical (blr infer: --categorical {}).",
          t.source(), t.line_of(i), name, cell, name));
    }
  }
  return t.numeric_column(name);  // names any remaining fault (empty, NA, hex, inf, range)
}

/// The numeric feature columns side by side, read row by row (the cells of a row lie together);
/// when a cell fails, column by column through `numeric` for the same message as ever.
Matrix numeric_block(const CsvTable& t, const std::vector<std::string>& names) {
  try {
    return t.numeric_columns(names);
  } catch (const Error&) {
    // Named below, column by column.
  }
  Matrix x(t.rows(), static_cast<Index>(names.size()));
  for (std::size_t k = 0; k < names.size(); ++k) x.col(static_cast<Index>(k)) = numeric(t, names[k]);
  return x;
}

}  // namespace

std::optional<DominantValue> dominant_value(const Eigen::Ref<const Vector>& x,
                                            const std::string& name) {
  if (x.size() < 3) return std::nullopt;
  const double scale = x.cwiseAbs().maxCoeff();
  if (!std::isfinite(scale) || !(scale > 0)) return std::nullopt;
  const Vector y = x / scale;
  const double mean = y.mean();
  Index k = 0;
  (y.array() - mean).abs().maxCoeff(&k);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, largest = 0;
  for (Index i = 0; i < y.size(); ++i) {
    if (i == k) continue;
    lo = std::min(lo, y[i]);
    hi = std::max(hi, y[i]);
    largest = std::max(largest, std::abs(y[i] - mean));
  }
  if (hi > lo && hi - lo <= 1e-6 * largest) return DominantValue{name, k, x[k]};
  return std::nullopt;
}

std::vector<DominantValue> dominant_values(const Matrix& x, const std::vector<std::string>& names) {
  std::vector<DominantValue> out;
  for (Index j = 0; j < x.cols(); ++j) {
    const std::string name = j < static_cast<Index>(names.size())
                                 ? names[static_cast<std::size_t>(j)]
                                 : std::to_string(j + 1);
    if (auto v = dominant_value(x.col(j), name)) out.push_back(std::move(*v));
  }
  return out;
}

DesignEncoder DesignEncoder::fit(const CsvTable& train, const DesignSpec& spec) {
  return fit_transform(train, spec).first;
}

std::pair<DesignEncoder, Matrix> DesignEncoder::fit_transform(const CsvTable& train,
                                                              const DesignSpec& spec) {
  DesignEncoder d;
  d.spec_ = spec;
  check(!spec.features.empty(), "A design needs at least one feature column.");
  std::set<std::string> seen;
  for (const auto& f : spec.features) {
    train.column_index(f);
    check(seen.insert(f).second, fmt::format("Feature column '{}' is named twice.", f));
  }
  for (const auto& c : spec.categorical) {
    check(seen.contains(c),
          fmt::format("Column '{}' is declared categorical but is not a feature (features: {}).",
                      c, fmt::join(spec.features, ", ")));
  }
  for (const auto& f : spec.features) {
    Column col{f, std::find(spec.categorical.begin(), spec.categorical.end(), f) !=
                      spec.categorical.end(),
               {}};
    if (col.categorical) {
      col.levels = train.distinct(f);
      for (auto& level : col.levels) level = trimmed(level);
      sort_levels(col.levels);
      check(col.levels.size() >= 2,
            fmt::format("Categorical column '{}' has the single level '{}' in '{}', so it carries "
                        "no information; leave it out of the features.",
                        f, col.levels.front(), train.source()));
    } else {
      d.numeric_.push_back(f);
    }
    d.columns_.push_back(std::move(col));
  }
  if (spec.intercept) d.names_.push_back("(intercept)");
  for (const auto& c : d.columns_) {
    if (!c.categorical) {
      d.names_.push_back(c.name);
      continue;
    }
    for (std::size_t k = 1; k < c.levels.size(); ++k)
      d.names_.push_back(c.name + "=" + c.levels[k]);
  }
  // The numeric columns are read (and so checked) here, whether or not they are standardised;
  // their statistics come from the design's columns before they are standardised in place.
  Matrix design = d.raw_design(train);
  const auto at = d.numeric_positions();
  for (std::size_t k = 0; k < at.size(); ++k)
    if (auto v = dominant_value(design.col(at[k]), d.numeric_[k])) d.dominant_.push_back(*v);
  if (spec.standardize && !d.numeric_.empty())
    d.standardizer_ = Standardizer::fit_columns(design, at, d.numeric_);
  d.standardize_in_place(design);
  return {std::move(d), std::move(design)};
}

const std::vector<std::string>& DesignEncoder::levels(const std::string& feature) const {
  for (const auto& c : columns_)
    if (c.name == feature) return c.levels;
  throw Error(fmt::format("'{}' is not a feature of this design.", feature));
}

Matrix DesignEncoder::transform(const CsvTable& table) const {
  Matrix x = raw_design(table);
  standardize_in_place(x);
  return x;
}

std::vector<Index> DesignEncoder::numeric_positions() const {
  std::vector<Index> at;
  Index out = spec_.intercept ? 1 : 0;
  for (const auto& c : columns_) {
    if (!c.categorical) at.push_back(out);
    out += c.categorical ? static_cast<Index>(c.levels.size()) - 1 : 1;
  }
  return at;
}

void DesignEncoder::standardize_in_place(Matrix& x) const {
  if (!spec_.standardize || numeric_.empty()) return;
  const auto at = numeric_positions();
  for (std::size_t k = 0; k < at.size(); ++k)
    standardizer_.transform_column(static_cast<Index>(k), x.col(at[k]));
}

Matrix DesignEncoder::raw_design(const CsvTable& table) const {
  const Index n = table.rows();
  Matrix x(n, static_cast<Index>(names_.size()));
  detail::advise_huge_pages(x.data(), static_cast<std::size_t>(x.size()) * sizeof(double));
  x.setZero();
  // The numeric features first, so that their faults are named before any categorical one: a
  // table that keeps them as numbers gives them column by column; text is parsed as one block.
  const auto at = numeric_positions();
  const bool kept_as_numbers = std::none_of(
      numeric_.begin(), numeric_.end(), [&](const std::string& f) { return table.holds_text(f); });
  if (kept_as_numbers) {
    for (std::size_t k = 0; k < at.size(); ++k) x.col(at[k]) = table.numeric_column(numeric_[k]);
  } else {
    const Matrix block = numeric_block(table, numeric_);
    for (std::size_t k = 0; k < at.size(); ++k) x.col(at[k]) = block.col(static_cast<Index>(k));
  }
  Index out = 0;
  if (spec_.intercept) x.col(out++).setOnes();
  for (const auto& c : columns_) {
    if (!c.categorical) {
      ++out;
      continue;
    }
    const Index j = table.column_index(c.name);
    for (Index i = 0; i < n; ++i) {
      const std::string_view cell = table.cell(i, j);
      check(!is_missing(cell), fmt::format("File '{}', line {}, column '{}': the value is missing.",
                                           table.source(), table.line_of(i), c.name));
      const auto it = std::find_if(c.levels.begin(), c.levels.end(),
                                   [&](const std::string& l) { return same_label(l, cell); });
      if (it == c.levels.end()) {
        throw Error(fmt::format(
            "File '{}', line {}, column '{}': level '{}' does not occur in the training data "
            "(levels: {}).",
            table.source(), table.line_of(i), c.name, trimmed(cell), fmt::join(c.levels, ", ")));
      }
      const auto k = it - c.levels.begin();
      if (k > 0) x(i, out + k - 1) = 1.0;
    }
    out += static_cast<Index>(c.levels.size()) - 1;
  }
  return x;
}

}  // namespace blr::io
