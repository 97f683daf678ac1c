#include "blr/io/csv.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "blr/core/error.hpp"

namespace blr::io {
namespace {

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return s.substr(b, e - b);
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += v[i];
  }
  return out;
}

/// Splits text into records of fields; a quoted field may hold commas, doubled quotes and line
/// breaks. `lines` receives the 1-based line on which each record starts.
std::vector<std::vector<std::string>> split_records(const std::string& text,
                                                    const std::string& source,
                                                    std::vector<long>& lines) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> fields;
  std::string field;
  bool in_quotes = false, field_quoted = false, after_quote = false, record_has_content = false;
  long line = 1, record_line = 1;
  auto end_field = [&] {
    fields.push_back(field_quoted ? field : trim(field));
    field.clear();
    field_quoted = false;
    after_quote = false;
  };
  auto end_record = [&] {
    if (record_has_content || !fields.empty()) {
      end_field();
      records.push_back(std::move(fields));
      lines.push_back(record_line);
    }
    fields.clear();
    field.clear();
    field_quoted = after_quote = record_has_content = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
          after_quote = true;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '\r') continue;
    if (c == '\n') {
      end_record();
      ++line;
      record_line = line;
      continue;
    }
    if (!record_has_content) record_line = line;
    record_has_content = true;
    if (c == ',') {
      end_field();
    } else if (c == '"') {
      if (!trim(field).empty() || after_quote) {
        throw Error(fmt::format("File '{}', line {}: a quote appears inside an unquoted field.",
                                source, line));
      }
      field.clear();
      in_quotes = true;
      field_quoted = true;
    } else {
      if (after_quote && c != ' ' && c != '\t') {
        throw Error(fmt::format(
            "File '{}', line {}: text follows a closing quote in the same field.", source, line));
      }
      if (!after_quote) field += c;
    }
  }
  if (in_quotes) {
    throw Error(
        fmt::format("File '{}', line {}: a quoted field is never closed.", source, record_line));
  }
  end_record();
  return records;
}

}  // namespace

bool looks_numeric(const std::string& text) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  errno = 0;
  std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

double parse_number(const std::string& text, const std::string& where) {
  const std::string t = trim(text);
  if (t.empty()) throw Error(fmt::format("{}: the value is empty.", where));
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) {
    throw Error(fmt::format("{}: '{}' is not a number.", where, t));
  }
  if (!std::isfinite(v)) {
    throw Error(fmt::format("{}: the value '{}' is not a finite number.", where, t));
  }
  return v;
}

bool same_label(const std::string& a, const std::string& b) {
  const std::string ta = trim(a), tb = trim(b);
  if (ta == tb) return true;
  if (looks_numeric(ta) && looks_numeric(tb)) {
    return std::strtod(ta.c_str(), nullptr) == std::strtod(tb.c_str(), nullptr);
  }
  return false;
}

CsvTable CsvTable::read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("File '{}' cannot be opened for reading.", path));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse(buffer.str(), path);
}

CsvTable CsvTable::parse(const std::string& text, const std::string& source) {
  CsvTable t;
  t.source_ = source;
  std::vector<long> lines;
  auto records = split_records(text, source, lines);
  if (records.empty()) {
    throw Error(
        fmt::format("File '{}' is empty; a header row naming the columns is expected.", source));
  }
  t.header_ = records.front();
  std::set<std::string> seen;
  for (std::size_t j = 0; j < t.header_.size(); ++j) {
    const auto& name = t.header_[j];
    if (name.empty()) {
      throw Error(fmt::format("File '{}', line {}: header column {} has no name.", source,
                              lines.front(), j + 1));
    }
    if (!seen.insert(name).second) {
      throw Error(fmt::format("File '{}', line {}: the header names column '{}' twice.", source,
                              lines.front(), name));
    }
  }
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != t.header_.size()) {
      throw Error(fmt::format(
          "File '{}', line {}: malformed row with {} field{} where the header has {} columns.",
          source, lines[r], records[r].size(), records[r].size() == 1 ? "" : "s",
          t.header_.size()));
    }
    t.cells_.push_back(std::move(records[r]));
    t.lines_.push_back(lines[r]);
  }
  if (t.cells_.empty()) {
    throw Error(fmt::format("File '{}' has a header but no data rows.", source));
  }
  return t;
}

bool CsvTable::has_column(const std::string& name) const {
  for (const auto& h : header_)
    if (h == name) return true;
  return false;
}

Index CsvTable::column_index(const std::string& name) const {
  for (std::size_t j = 0; j < header_.size(); ++j)
    if (header_[j] == name) return static_cast<Index>(j);
  throw Error(fmt::format("File '{}' has no column '{}'; its columns are: {}.", source_, name,
                          join(header_)));
}

Vector CsvTable::numeric_column(const std::string& name) const {
  const Index j = column_index(name);
  Vector out(rows());
  for (Index i = 0; i < rows(); ++i) {
    out[i] = parse_number(cells_[i][j],
                          fmt::format("File '{}', line {}, column '{}'", source_, lines_[i], name));
  }
  return out;
}

Matrix CsvTable::numeric_columns(const std::vector<std::string>& names) const {
  Matrix out(rows(), static_cast<Index>(names.size()));
  for (std::size_t k = 0; k < names.size(); ++k) out.col(k) = numeric_column(names[k]);
  return out;
}

std::vector<std::string> CsvTable::columns_except(const std::vector<std::string>& excluded) const {
  std::vector<std::string> out;
  for (const auto& h : header_) {
    bool skip = false;
    for (const auto& e : excluded) skip = skip || (h == e);
    if (!skip) out.push_back(h);
  }
  return out;
}

std::vector<std::string> CsvTable::distinct(const std::string& name) const {
  const Index j = column_index(name);
  std::vector<std::string> out;
  for (Index i = 0; i < rows(); ++i) {
    bool found = false;
    for (const auto& v : out) found = found || same_label(v, cells_[i][j]);
    if (!found) out.push_back(cells_[i][j]);
  }
  return out;
}

Vector CsvTable::binary_labels(const std::string& name, const std::string& positive,
                               const std::vector<std::string>& classes) const {
  const Index j = column_index(name);
  Vector out(rows());
  for (Index i = 0; i < rows(); ++i) {
    const std::string& v = cells_[i][j];
    bool declared = false;
    for (const auto& c : classes) declared = declared || same_label(c, v);
    if (!declared) {
      throw Error(fmt::format(
          "File '{}', line {}, column '{}': label '{}' is outside the declared classes ({}).",
          source_, lines_[i], name, v, join(classes)));
    }
    out[i] = same_label(v, positive) ? 1.0 : 0.0;
  }
  return out;
}

std::vector<int> CsvTable::class_labels(const std::string& name,
                                        const std::vector<std::string>& classes) const {
  const Index j = column_index(name);
  std::vector<int> out(rows());
  for (Index i = 0; i < rows(); ++i) {
    int k = -1;
    for (std::size_t c = 0; c < classes.size() && k < 0; ++c)
      if (same_label(classes[c], cells_[i][j])) k = static_cast<int>(c);
    if (k < 0) {
      throw Error(fmt::format(
          "File '{}', line {}, column '{}': label '{}' is outside the declared classes ({}).",
          source_, lines_[i], name, cells_[i][j], join(classes)));
    }
    out[i] = k;
  }
  return out;
}

Vector CsvTable::count_column(const std::string& name) const {
  Vector v = numeric_column(name);
  for (Index i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] != std::floor(v[i])) {
      throw Error(fmt::format(
          "File '{}', line {}, column '{}': a count must be a non-negative integer; got {}.",
          source_, lines_[i], name, cells_[i][column_index(name)]));
    }
  }
  return v;
}

Standardizer Standardizer::fit(const Matrix& x, const std::vector<std::string>& names) {
  check(x.rows() > 0, "Standardisation needs at least one row.");
  Standardizer s;
  s.mean = x.colwise().mean().transpose();
  s.sd.resize(x.cols());
  for (Index j = 0; j < x.cols(); ++j) {
    const double var = (x.col(j).array() - s.mean[j]).square().mean();
    s.sd[j] = std::sqrt(var);
    if (!(s.sd[j] > 0)) {
      const std::string col =
          j < static_cast<Index>(names.size()) ? "'" + names[j] + "'" : fmt::format("{}", j + 1);
      throw Error(fmt::format(
          "Column {} is constant in the training data, so it cannot be standardised.", col));
    }
  }
  return s;
}

Matrix Standardizer::transform(const Matrix& x) const {
  check(x.cols() == mean.size(),
        fmt::format("Standardisation was fitted on {} columns but is applied to {}.", mean.size(),
                    x.cols()));
  Matrix out = x;
  for (Index j = 0; j < x.cols(); ++j) out.col(j) = (x.col(j).array() - mean[j]) / sd[j];
  return out;
}

Matrix with_intercept(const Matrix& x) {
  Matrix out(x.rows(), x.cols() + 1);
  out.col(0).setOnes();
  out.rightCols(x.cols()) = x;
  return out;
}

}  // namespace blr::io
