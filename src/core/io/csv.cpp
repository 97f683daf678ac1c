#include "blr/io/csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <system_error>
#include <unordered_map>

#include "blr/core/error.hpp"

namespace blr::io {
namespace {

std::string_view trim(std::string_view s) {
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

/// The records of a CSV text, flat: every field's text back to back in `text`, `ends[k]` the end
/// of field k (its start is the previous end), `widths[r]` the number of fields of record r and
/// `lines[r]` the 1-based line on which it starts. One buffer instead of a string per field: a
/// table of 10^5 × 51 numbers is then a few allocations, not five million.
struct Records {
  std::string text;
  std::vector<std::size_t> ends;
  std::vector<std::size_t> widths;
  std::vector<long> lines;
};

bool blank(char c) {
  return c == ' ' || c == '\t';
}

/// Splits text into records of fields; a quoted field may hold commas, doubled quotes and line
/// breaks. Unquoted fields are stored trimmed of spaces and tabs.
Records split_records(const std::string& text, const std::string& source) {
  Records out;
  out.text.reserve(text.size());
  out.ends.reserve(text.size() / 8 + 16);
  std::string& buf = out.text;
  std::size_t field_start = 0, fields = 0;
  bool in_quotes = false, field_quoted = false, after_quote = false, record_has_content = false;
  long line = 1, record_line = 1;
  auto end_field = [&] {
    if (!field_quoted) {  // trim in place
      while (buf.size() > field_start && blank(buf.back())) buf.pop_back();
      std::size_t b = field_start;
      while (b < buf.size() && blank(buf[b])) ++b;
      buf.erase(field_start, b - field_start);
    }
    out.ends.push_back(buf.size());
    ++fields;
    field_start = buf.size();
    field_quoted = false;
    after_quote = false;
  };
  auto end_record = [&] {
    if (record_has_content || fields > 0) {
      end_field();
      out.widths.push_back(fields);
      out.lines.push_back(record_line);
    }
    buf.resize(field_start);
    fields = 0;
    field_quoted = after_quote = record_has_content = false;
  };
  // A UTF-8 byte-order mark is not part of the first column's name.
  const std::size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          buf += '"';
          ++i;
        } else {
          in_quotes = false;
          after_quote = true;
        }
      } else {
        // A line break inside quotes is text; it still counts for the line numbers.
        if (c == '\n' || (c == '\r' && !(i + 1 < text.size() && text[i + 1] == '\n'))) ++line;
        buf += c;
      }
      continue;
    }
    if (c == '\r' || c == '\n') {  // CR, LF and CRLF each end a record
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
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
      const bool text_before =
          std::any_of(buf.begin() + static_cast<std::ptrdiff_t>(field_start), buf.end(),
                      [](char ch) { return !blank(ch); });
      if (text_before || after_quote) {
        throw Error(fmt::format("File '{}', line {}: a quote appears inside an unquoted field.",
                                source, line));
      }
      buf.resize(field_start);
      in_quotes = true;
      field_quoted = true;
    } else {
      if (after_quote && !blank(c)) {
        throw Error(fmt::format(
            "File '{}', line {}: text follows a closing quote in the same field.", source, line));
      }
      if (!after_quote) {
        // The run of ordinary characters up to the next comma, quote or line break, at once.
        std::size_t j = i + 1;
        while (j < text.size() && text[j] != ',' && text[j] != '"' && text[j] != '\r' &&
               text[j] != '\n')
          ++j;
        buf.append(text, i, j - i);
        i = j - 1;
      }
    }
  }
  if (in_quotes) {
    throw Error(
        fmt::format("File '{}', line {}: a quoted field is never closed.", source, record_line));
  }
  end_record();
  return out;
}

enum class NumberStatus { kOk, kNotANumber, kNotFinite, kOutOfRange };
struct Parsed {
  NumberStatus status = NumberStatus::kNotANumber;
  double value = 0;
};

/// A number is a whole decimal token (already trimmed): an optional sign ('+' or '-'), digits
/// with an optional point, an optional exponent. Hexadecimal floats are not numbers; "inf",
/// "nan" and "infinity" (any case, any sign) are reported as not finite; a value beyond the
/// range of a double (1e400, 1e-400) is out of range.
Parsed parse_decimal(std::string_view t) {
  const char* b = t.data();
  const char* const e = t.data() + t.size();
  const char* digits = b;
  if (digits < e && (*digits == '+' || *digits == '-')) ++digits;
  if (digits == e) return {};
  if (!(std::isdigit(static_cast<unsigned char>(*digits)) || *digits == '.')) {
    const std::string_view rest(digits, static_cast<std::size_t>(e - digits));
    for (const char* word : {"inf", "infinity", "nan"}) {
      if (rest.size() == std::strlen(word) &&
          std::equal(rest.begin(), rest.end(), word, [](char x, char y) {
            return std::tolower(static_cast<unsigned char>(x)) == y;
          })) {
        return {NumberStatus::kNotFinite, 0};
      }
    }
    return {};
  }
  // from_chars takes no '+'; a '-' is passed to it.
  if (*b == '+') ++b;
  double v = 0;
  const auto r = std::from_chars(b, e, v, std::chars_format::general);
  if (r.ptr != e) return {};
  if (r.ec == std::errc::result_out_of_range) return {NumberStatus::kOutOfRange, 0};
  if (r.ec != std::errc()) return {};
  if (!std::isfinite(v)) return {NumberStatus::kNotFinite, 0};
  return {NumberStatus::kOk, v};
}

/// The class a label belongs to: its value for a number (so "1" and "1.0" agree, and -0 is 0),
/// its trimmed text otherwise. Two labels are `same_label` exactly when their keys are equal.
std::string label_key(std::string_view cell) {
  const std::string_view t = trim(cell);
  const Parsed p = parse_decimal(t);
  if (p.status != NumberStatus::kOk) return "t" + std::string(t);
  const double v = p.value == 0 ? 0.0 : p.value;
  std::string key(1 + sizeof v, 'n');
  std::memcpy(key.data() + 1, &v, sizeof v);
  return key;
}

}  // namespace

bool is_missing(std::string_view text) {
  const std::string_view t = trim(text);
  return t.empty() || t == "NA";
}

bool looks_numeric(std::string_view text) {
  return parse_decimal(trim(text)).status == NumberStatus::kOk;
}

double parse_number(std::string_view text, const std::string& where) {
  const std::string_view t = trim(text);
  if (t.empty()) throw Error(fmt::format("{}: the value is empty.", where));
  const Parsed p = parse_decimal(t);
  switch (p.status) {
    case NumberStatus::kOk:
      return p.value;
    case NumberStatus::kNotFinite:
      throw Error(fmt::format("{}: the value '{}' is not a finite number.", where, t));
    case NumberStatus::kOutOfRange:
      throw Error(fmt::format("{}: the value '{}' is outside the range of a double.", where, t));
    case NumberStatus::kNotANumber:
      break;
  }
  throw Error(fmt::format("{}: '{}' is not a number.", where, t));
}

bool same_label(std::string_view a, std::string_view b) {
  const std::string_view ta = trim(a), tb = trim(b);
  if (ta == tb) return true;
  const Parsed pa = parse_decimal(ta), pb = parse_decimal(tb);
  return pa.status == NumberStatus::kOk && pb.status == NumberStatus::kOk && pa.value == pb.value;
}

CsvTable CsvTable::read(const std::string& path, std::uintmax_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("File '{}' cannot be opened for reading.", path));
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes) {
    throw Error(fmt::format("File '{}' holds {} bytes, more than the {} bytes a CSV table may have.",
                            path, size, max_bytes));
  }
  // The size is checked again while reading (a pipe or a growing file has no size up front).
  std::string text;
  if (!ec) text.reserve(static_cast<std::size_t>(size));
  std::vector<char> chunk(1 << 16);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (text.size() + got > max_bytes) {
      throw Error(fmt::format("File '{}' holds more than the {} bytes a CSV table may have.", path,
                              max_bytes));
    }
    text.append(chunk.data(), got);
  }
  if (in.bad()) throw Error(fmt::format("File '{}' cannot be read to its end.", path));
  return parse(text, path);
}

CsvTable CsvTable::parse(const std::string& text, const std::string& source) {
  CsvTable t;
  t.source_ = source;
  Records records = split_records(text, source);
  if (records.widths.empty()) {
    throw Error(
        fmt::format("File '{}' is empty; a header row naming the columns is expected.", source));
  }
  const std::size_t width = records.widths.front();
  for (std::size_t j = 0; j < width; ++j) {
    const std::size_t begin = j == 0 ? 0 : records.ends[j - 1];
    t.header_.emplace_back(records.text, begin, records.ends[j] - begin);
  }
  std::set<std::string> seen;
  for (std::size_t j = 0; j < t.header_.size(); ++j) {
    const auto& name = t.header_[j];
    if (name.empty()) {
      throw Error(fmt::format("File '{}', line {}: header column {} has no name.", source,
                              records.lines.front(), j + 1));
    }
    if (!seen.insert(name).second) {
      throw Error(fmt::format("File '{}', line {}: the header names column '{}' twice.", source,
                              records.lines.front(), name));
    }
  }
  for (std::size_t r = 1; r < records.widths.size(); ++r) {
    if (records.widths[r] != width) {
      throw Error(fmt::format(
          "File '{}', line {}: malformed row with {} field{} where the header has {} columns.",
          source, records.lines[r], records.widths[r], records.widths[r] == 1 ? "" : "s", width));
    }
  }
  if (records.widths.size() == 1) {
    throw Error(fmt::format("File '{}' has a header but no data rows.", source));
  }
  // Every record has the header's width, so cell (r, c) is field width·(r + 1) + c.
  t.width_ = width;
  t.text_ = std::move(records.text);
  t.ends_ = std::move(records.ends);
  t.lines_.assign(records.lines.begin() + 1, records.lines.end());
  return t;
}

std::string_view CsvTable::cell(Index row, Index column) const {
  const std::size_t k = width_ * (static_cast<std::size_t>(row) + 1) +
                        static_cast<std::size_t>(column);
  return std::string_view(text_).substr(ends_[k - 1], ends_[k] - ends_[k - 1]);
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
    // Unquoted cells are stored trimmed: parse directly, and build the message naming the file,
    // line and column only for a cell that does not parse so (parse_number then trims a quoted
    // cell, or throws).
    const Parsed p = parse_decimal(cell(i, j));
    out[i] = p.status == NumberStatus::kOk
                 ? p.value
                 : parse_number(cell(i, j), fmt::format("File '{}', line {}, column '{}'",
                                                          source_, lines_[i], name));
  }
  return out;
}

Matrix CsvTable::numeric_columns(const std::vector<std::string>& names) const {
  Matrix out(rows(), static_cast<Index>(names.size()));
  std::vector<Index> cols;
  for (const auto& name : names) cols.push_back(column_index(name));
  // Row by row (each row's cells lie together in memory). A cell that does not parse directly (a
  // quoted one with spaces, or a bad one) sends the whole table through numeric_column, which
  // trims it or names the file, line and column of the first bad cell column by column.
  for (Index i = 0; i < rows(); ++i) {
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const Parsed p = parse_decimal(cell(i, cols[k]));
      if (p.status != NumberStatus::kOk) {
        // Column by column, as before, so that the error names the same cell.
        for (std::size_t l = 0; l < cols.size(); ++l)
          out.col(static_cast<Index>(l)) = numeric_column(names[l]);
        return out;
      }
      out(i, static_cast<Index>(k)) = p.value;
    }
  }
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

std::vector<std::string> CsvTable::distinct(const std::string& name,
                                            std::size_t max_count) const {
  const Index j = column_index(name);
  std::vector<std::string> out;
  std::unordered_map<std::string, std::size_t> seen;
  for (Index i = 0; i < rows(); ++i) {
    if (seen.emplace(label_key(cell(i, j)), out.size()).second) {
      out.emplace_back(cell(i, j));
      if (out.size() > max_count) break;  // more classes than allowed: no need to look further
    }
  }
  return out;
}

namespace {

/// Position of each declared class by its label key (the first one when two coincide).
std::unordered_map<std::string, int> class_index(const std::vector<std::string>& classes) {
  std::unordered_map<std::string, int> out;
  for (std::size_t c = 0; c < classes.size(); ++c)
    out.emplace(label_key(classes[c]), static_cast<int>(c));
  return out;
}

}  // namespace

Vector CsvTable::binary_labels(const std::string& name, const std::string& positive,
                               const std::vector<std::string>& classes) const {
  const Index j = column_index(name);
  const auto index = class_index(classes);
  const std::string positive_key = label_key(positive);
  Vector out(rows());
  for (Index i = 0; i < rows(); ++i) {
    const std::string_view v = cell(i, j);
    const std::string key = label_key(v);
    if (!index.contains(key)) {
      throw Error(fmt::format(
          "File '{}', line {}, column '{}': label '{}' is outside the declared classes ({}).",
          source_, lines_[i], name, v, join(classes)));
    }
    out[i] = key == positive_key ? 1.0 : 0.0;
  }
  return out;
}

std::vector<int> CsvTable::class_labels(const std::string& name,
                                        const std::vector<std::string>& classes) const {
  const Index j = column_index(name);
  const auto index = class_index(classes);
  std::vector<int> out(rows());
  for (Index i = 0; i < rows(); ++i) {
    const auto it = index.find(label_key(cell(i, j)));
    if (it == index.end()) {
      throw Error(fmt::format(
          "File '{}', line {}, column '{}': label '{}' is outside the declared classes ({}).",
          source_, lines_[i], name, cell(i, j), join(classes)));
    }
    out[i] = it->second;
  }
  return out;
}

Vector CsvTable::count_column(const std::string& name) const {
  Vector v = numeric_column(name);
  for (Index i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] != std::floor(v[i])) {
      throw Error(fmt::format(
          "File '{}', line {}, column '{}': a count must be a non-negative integer; got {}.",
          source_, lines_[i], name, cell(i, column_index(name))));
    }
  }
  return v;
}

std::optional<CsvTable::MissingCell> CsvTable::first_missing(
    const std::vector<std::string>& names) const {
  std::vector<Index> cols;
  for (const auto& n : names) cols.push_back(column_index(n));
  for (Index i = 0; i < rows(); ++i)
    for (std::size_t k = 0; k < cols.size(); ++k)
      if (is_missing(cell(i, cols[k]))) return MissingCell{i, names[k]};
  return std::nullopt;
}

CsvTable CsvTable::without_missing(const std::vector<std::string>& names) const {
  std::vector<Index> cols;
  for (const auto& n : names) cols.push_back(column_index(n));
  CsvTable out;
  out.source_ = source_;
  out.header_ = header_;
  out.width_ = width_;
  out.text_.assign(text_, 0, width_ == 0 ? 0 : ends_[width_ - 1]);  // the header record
  out.ends_.assign(ends_.begin(), ends_.begin() + static_cast<std::ptrdiff_t>(width_));
  for (Index i = 0; i < rows(); ++i) {
    bool complete = true;
    for (Index j : cols) complete = complete && !is_missing(cell(i, j));
    if (!complete) continue;
    for (std::size_t c = 0; c < width_; ++c) {
      out.text_ += cell(i, static_cast<Index>(c));
      out.ends_.push_back(out.text_.size());
    }
    out.lines_.push_back(lines_[i]);
  }
  return out;
}

Standardizer Standardizer::fit(const Matrix& x, const std::vector<std::string>& names) {
  check(x.rows() > 0, "Standardisation needs at least one row.");
  Standardizer s;
  s.names = names;
  const Vector direct_mean = x.colwise().mean().transpose();
  s.mean.resize(x.cols());
  s.sd.resize(x.cols());
  for (Index j = 0; j < x.cols(); ++j) {
    const double scale = x.col(j).cwiseAbs().maxCoeff();
    double mean = 0, sd = 0;
    if (scale > 1e-100 && scale < 1e100) {
      // Moderate magnitudes: no sum or square can overflow or underflow; the direct formulas.
      mean = direct_mean[j];
      sd = std::sqrt((x.col(j).array() - mean).square().mean());
    } else if (std::isfinite(scale) && scale > 0) {
      // Mean and sd of x / max|x|, scaled back: nothing overflows (1e300) or underflows (1e-200).
      const auto y = x.col(j).array() / scale;
      const double m = y.mean();
      mean = scale * m;
      sd = scale * std::sqrt((y - m).square().mean());
    } else if (!std::isfinite(scale)) {
      mean = sd = scale;  // a NaN or infinite value: reported below
    }
    if (!std::isfinite(mean) || !std::isfinite(sd)) {
      throw Error(fmt::format(
          "Column {} has a value that is not finite, so its mean and standard deviation are not "
          "finite and it cannot be standardised.",
          s.column_name(j)));
    }
    if (!(sd > 0)) {
      throw Error(fmt::format(
          "Column {} is constant in the training data, so it cannot be standardised.",
          s.column_name(j)));
    }
    s.mean[j] = mean;
    s.sd[j] = sd;
  }
  return s;
}

std::string Standardizer::column_name(Index j) const {
  return j < static_cast<Index>(names.size()) ? "'" + names[j] + "'" : fmt::format("{}", j + 1);
}

Matrix Standardizer::transform(const Matrix& x) const {
  check(x.cols() == mean.size(),
        fmt::format("Standardisation was fitted on {} columns but is applied to {}.", mean.size(),
                    x.cols()));
  Matrix out(x.rows(), x.cols());
  for (Index j = 0; j < x.cols(); ++j) {
    for (Index i = 0; i < x.rows(); ++i) {
      double d = x(i, j) - mean[j];
      // x − mean may overflow where x and the mean are huge with opposite signs.
      out(i, j) = std::isfinite(d) ? d / sd[j] : 2 * ((0.5 * x(i, j) - 0.5 * mean[j]) / sd[j]);
      if (!std::isfinite(out(i, j))) {
        throw Error(fmt::format(
            "Column {}, row {}: the value {} is not finite once standardised with the training "
            "mean {} and standard deviation {}.",
            column_name(j), i + 1, x(i, j), mean[j], sd[j]));
      }
    }
  }
  return out;
}

Matrix with_intercept(const Matrix& x) {
  Matrix out(x.rows(), x.cols() + 1);
  out.col(0).setOnes();
  out.rightCols(x.cols()) = x;
  return out;
}

}  // namespace blr::io
