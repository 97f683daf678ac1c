#include "blr/io/design.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "blr/core/error.hpp"

namespace blr::io {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
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

/// A numeric column, with the hint that a text column must be declared categorical.
Vector numeric(const CsvTable& t, const std::string& name) {
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

}  // namespace

DesignEncoder DesignEncoder::fit(const CsvTable& train, const DesignSpec& spec) {
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
                      c, join(spec.features)));
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
  // The numeric columns are read (and so checked) here, whether or not they are standardised.
  Matrix x(train.rows(), static_cast<Index>(d.numeric_.size()));
  for (std::size_t k = 0; k < d.numeric_.size(); ++k) x.col(k) = numeric(train, d.numeric_[k]);
  if (spec.standardize && !d.numeric_.empty()) d.standardizer_ = Standardizer::fit(x, d.numeric_);
  return d;
}

const std::vector<std::string>& DesignEncoder::levels(const std::string& feature) const {
  for (const auto& c : columns_)
    if (c.name == feature) return c.levels;
  throw Error(fmt::format("'{}' is not a feature of this design.", feature));
}

Matrix DesignEncoder::transform(const CsvTable& table) const {
  const Index n = table.rows();
  Matrix numeric_x(n, static_cast<Index>(numeric_.size()));
  for (std::size_t k = 0; k < numeric_.size(); ++k) numeric_x.col(k) = numeric(table, numeric_[k]);
  if (spec_.standardize && !numeric_.empty()) numeric_x = standardizer_.transform(numeric_x);
  Matrix x = Matrix::Zero(n, static_cast<Index>(names_.size()));
  Index out = 0, next_numeric = 0;
  if (spec_.intercept) x.col(out++).setOnes();
  for (const auto& c : columns_) {
    if (!c.categorical) {
      x.col(out++) = numeric_x.col(next_numeric++);
      continue;
    }
    const Index j = table.column_index(c.name);
    for (Index i = 0; i < n; ++i) {
      const std::string& cell = table.cell(i, j);
      check(!is_missing(cell), fmt::format("File '{}', line {}, column '{}': the value is missing.",
                                           table.source(), table.line_of(i), c.name));
      const auto it = std::find_if(c.levels.begin(), c.levels.end(),
                                   [&](const std::string& l) { return same_label(l, cell); });
      if (it == c.levels.end()) {
        throw Error(fmt::format(
            "File '{}', line {}, column '{}': level '{}' does not occur in the training data "
            "(levels: {}).",
            table.source(), table.line_of(i), c.name, trimmed(cell), join(c.levels)));
      }
      const auto k = it - c.levels.begin();
      if (k > 0) x(i, out + k - 1) = 1.0;
    }
    out += static_cast<Index>(c.levels.size()) - 1;
  }
  return x;
}

}  // namespace blr::io
