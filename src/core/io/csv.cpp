#include "blr/io/csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "blr/core/error.hpp"
#include "csv_detail.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if __has_include(<sys/mman.h>)
#include <sys/mman.h>
#endif

namespace blr::io {
namespace detail {

std::string_view trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return s.substr(b, e - b);
}

/// Asks Linux to back a fresh buffer of `bytes` at `data` with 2 MiB pages (where the system
/// leaves that to the program: transparent_hugepage=madvise). Called before the buffer is first
/// written, it replaces thousands of page faults by a few: reading a 100 MB file into memory takes
/// half the time. Elsewhere, or for a small buffer, it does nothing.
void advise_huge_pages([[maybe_unused]] const void* data, [[maybe_unused]] std::size_t bytes) {
#if defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{1} << 21;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += v[i];
  }
  return out;
}

namespace {

bool blank(char c) {
  return c == ' ' || c == '\t';
}

/// Finds the bytes that end a run of ordinary characters outside quotes (comma, quote, CR, LF),
/// 64 bytes at a time: a bit mask of their positions in a block is computed once (SSE2 where the
/// target has it, a table otherwise) and serves every field in the block.
class RunEnds {
 public:
  RunEnds(const char* p, std::size_t n) : p_(p), n_(n), base_(n + 64) {}
  /// The first comma, quote, CR or LF at or after `j`, or the text's length if there is none.
  /// The bytes from `j` on must not have changed since the call that covered them was made.
  std::size_t next(std::size_t j) {
    for (;;) {
      if (j - base_ < 64) {  // inside the current block (j < base_ wraps to a large number)
        const std::uint64_t m = bits_ >> (j - base_);
        if (m != 0) return j + static_cast<std::size_t>(std::countr_zero(m));
        j = base_ + 64;
      }
      if (n_ - j < 64 || j > n_) break;
      base_ = j;
      bits_ = block_mask(p_ + j);
    }
    while (j < n_ && !is_run_end(p_[j])) ++j;
    return std::min(j, n_);
  }

 private:
  static bool is_run_end(char c) { return c == ',' || c == '"' || c == '\r' || c == '\n'; }
  static std::uint64_t block_mask(const char* q) {
    std::uint64_t m = 0;
#if defined(__SSE2__)
    const __m128i comma = _mm_set1_epi8(','), quote = _mm_set1_epi8('"'),
                  cr = _mm_set1_epi8('\r'), lf = _mm_set1_epi8('\n');
    for (int k = 0; k < 4; ++k) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * k));
      const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, comma), _mm_cmpeq_epi8(v, quote)),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, lf)));
      m |= static_cast<std::uint64_t>(static_cast<std::uint16_t>(_mm_movemask_epi8(hit))) << (16 * k);
    }
#else
    for (int k = 0; k < 64; ++k) m |= static_cast<std::uint64_t>(is_run_end(q[k])) << k;
#endif
    return m;
  }
  const char* p_;
  std::size_t n_;
  std::size_t base_;  // the current block's start; none yet: beyond the text
  std::uint64_t bits_ = 0;
};

/// Copies `count` bytes from `from` down to `to` (to <= from; the ranges may overlap). Most fields
/// are short: up to 32 bytes are all loaded before any is stored, which makes the overlap harmless
/// without a call to memmove.
[[gnu::always_inline]] inline void copy_down(char* to, const char* from, std::size_t count) {
  if (to == from) return;
  const auto load = [](const char* q, auto word) {
    std::memcpy(&word, q, sizeof word);
    return word;
  };
  const auto store = [](char* q, auto word) { std::memcpy(q, &word, sizeof word); };
  if (count >= 8 && count <= 16) {
    const auto a = load(from, std::uint64_t{}), b = load(from + count - 8, std::uint64_t{});
    store(to, a);
    store(to + count - 8, b);
  } else if (count > 16 && count <= 32) {
    const auto a = load(from, std::uint64_t{}), b = load(from + 8, std::uint64_t{}),
               c = load(from + count - 16, std::uint64_t{}), d = load(from + count - 8, std::uint64_t{});
    store(to, a);
    store(to + 8, b);
    store(to + count - 16, c);
    store(to + count - 8, d);
  } else if (count >= 4 && count < 8) {
    const auto a = load(from, std::uint32_t{}), b = load(from + count - 4, std::uint32_t{});
    store(to, a);
    store(to + count - 4, b);
  } else if (count > 0 && count < 4) {
    const char a = from[0], b = from[count / 2], c = from[count - 1];
    to[0] = a;
    to[count / 2] = b;
    to[count - 1] = c;
  } else if (count > 32) {
    std::memmove(to, from, count);
  }
}

}  // namespace

// One buffer instead of a string per field: a table of 10^5 × 51 numbers is a few allocations,
// not five million. Each field's text is moved down to follow the previous field's, so the
// writing position never passes the reading one.
Records split_records(char* const p, const std::size_t n, const std::string& source,
                      long first_line, bool file_start) {
  Records out;
  out.ends.reserve(n / 8 + 16);
  advise_huge_pages(out.ends.data(), out.ends.capacity() * sizeof(std::size_t));
  std::size_t w = 0;  // where the next field's text goes
  long line = first_line;
  // A UTF-8 byte-order mark is not part of the first column's name.
  std::size_t i = file_start && std::string_view(p, n).starts_with("\xEF\xBB\xBF") ? 3 : 0;
  RunEnds run_ends(p, n);
  auto move_down = [&](std::size_t from, std::size_t count) {
    copy_down(p + w, p + from, count);
    w += count;
  };
  while (i < n) {
    if (p[i] == '\n' || p[i] == '\r') {  // an empty line: no record; CR, LF and CRLF each end one
      i += p[i] == '\r' && i + 1 < n && p[i + 1] == '\n' ? 2 : 1;
      ++line;
      continue;
    }
    const long record_line = line;
    std::size_t fields = 0;
    for (;;) {  // one field from i (which may be n: an empty last field)
      std::size_t j = run_ends.next(i);
      if (j < n && p[j] == '"') {
        if (std::any_of(p + i, p + j, [](char c) { return !blank(c); })) {
          throw Error(fmt::format("File '{}', line {}: a quote appears inside an unquoted field.",
                                  source, line));
        }
        // A quoted field: its text up to each quote moves down; a doubled quote is one quote.
        std::size_t r = j + 1;
        for (;;) {
          const auto* q = static_cast<const char*>(std::memchr(p + r, '"', n - r));
          if (q == nullptr) {
            throw Error(fmt::format("File '{}', line {}: a quoted field is never closed.", source,
                                    record_line));
          }
          const auto e = static_cast<std::size_t>(q - p);
          // A line break inside quotes is text; it still counts for the line numbers.
          for (std::size_t k = r; k < e; ++k)
            if (p[k] == '\n' || (p[k] == '\r' && p[k + 1] != '\n')) ++line;
          move_down(r, e - r);
          if (e + 1 < n && p[e + 1] == '"') {
            p[w++] = '"';
            r = e + 2;
          } else {
            r = e + 1;
            break;
          }
        }
        // After the closing quote: blanks, then the comma or the end of the record.
        while (r < n && blank(p[r])) ++r;
        if (r < n && p[r] == '"') {
          throw Error(fmt::format("File '{}', line {}: a quote appears inside an unquoted field.",
                                  source, line));
        }
        if (r < n && p[r] != ',' && p[r] != '\r' && p[r] != '\n') {
          throw Error(fmt::format(
              "File '{}', line {}: text follows a closing quote in the same field.", source, line));
        }
        j = r;
      } else {  // an unquoted field: trimmed (most have nothing to trim)
        std::size_t b = i, e = j;
        while (b < e && blank(p[b])) ++b;
        while (e > b && blank(p[e - 1])) --e;
        move_down(b, e - b);
      }
      out.ends.push_back(w);
      ++fields;
      if (j < n && p[j] == ',') {
        i = j + 1;
        continue;
      }
      if (j < n) {  // CR, LF or CRLF ends the record
        j += p[j] == '\r' && j + 1 < n && p[j + 1] == '\n' ? 2 : 1;
        ++line;
      }
      i = j;
      break;
    }
    out.widths.push_back(fields);
    out.lines.push_back(record_line);
  }
  out.bytes = w;
  out.next_line = line;
  return out;
}

namespace {

/// True when the significand of a decimal token (the text before 'e' or 'E') has a digit 1-9.
bool has_nonzero_digit(const char* b, const char* e) {
  for (; b < e && *b != 'e' && *b != 'E'; ++b)
    if (*b >= '1' && *b <= '9') return true;
  return false;
}

}  // namespace

/// A number is a whole decimal token (already trimmed): an optional sign ('+' or '-'), digits
/// with an optional point, an optional exponent. Hexadecimal floats are not numbers; "inf",
/// "nan" and "infinity" (any case, any sign) are reported as not finite; a value beyond the
/// range of a double (1e400, 1e-400) is out of range. This is the whole rule; `parse_decimal`
/// (csv_detail.hpp) only answers the common case first.
Parsed classify_decimal(std::string_view t) {
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
  // fast_float takes no '+'; a '-' is passed to it. It reads the token as std::from_chars
  // (general format) does, but reports no range errors: a value beyond the largest double comes
  // back infinite, one below the smallest denormal zero from digits that are not all zero.
  if (*b == '+') ++b;
  double v = 0;
  const auto r = fast_float::from_chars(b, e, v);
  if (r.ptr != e || r.ec != std::errc()) return {};
  if (std::isinf(v) || (v == 0 && has_nonzero_digit(b, e))) return {NumberStatus::kOutOfRange, 0};
  return {NumberStatus::kOk, v};
}

void check_header(const std::vector<std::string>& header, const std::string& source, long line) {
  std::set<std::string> seen;
  for (std::size_t j = 0; j < header.size(); ++j) {
    if (header[j].empty()) {
      throw Error(
          fmt::format("File '{}', line {}: header column {} has no name.", source, line, j + 1));
    }
    if (!seen.insert(header[j]).second) {
      throw Error(fmt::format("File '{}', line {}: the header names column '{}' twice.", source,
                              line, header[j]));
    }
  }
}

void throw_nul_byte(const std::string& source, const char* p, std::size_t at, long line) {
  // CR, LF and CRLF each end a line, inside quotes too (p[at] is the NUL, so p[i + 1] exists).
  for (std::size_t i = 0; i < at; ++i) line += p[i] == '\n' || (p[i] == '\r' && p[i + 1] != '\n');
  throw Error(
      fmt::format("File '{}', line {}: holds a NUL byte (0x00); blr reads CSV files as "
                  "text.",
                  source, line));
}

void throw_malformed_row(const std::string& source, long line, std::size_t width,
                         std::size_t columns) {
  throw Error(
      fmt::format("File '{}', line {}: malformed row with {} field{} where the header has {} "
                  "columns.",
                  source, line, width, width == 1 ? "" : "s", columns));
}

}  // namespace detail

namespace {

using detail::join;
using detail::NumberStatus;
using detail::parse_decimal;
using detail::Parsed;
using detail::trim;

/// Tables with at least this many cells are parsed on one thread per core (numeric_columns).
constexpr Index kParallelParseCells = Index{1} << 18;

/// The class a label belongs to: its value for a number (so "1" and "1.0" agree, and -0 is 0),
/// its trimmed text otherwise. Two labels are `same_label` exactly when their keys are equal.
std::string label_key(std::string_view cell) {
  const std::string_view t = trim(cell);
  const Parsed p = parse_decimal(t);
  if (p.status != NumberStatus::kOk) {
    std::string key(1, 't');  // (not "t" + std::string(t): GCC 12 warns falsely on it, -Wrestrict)
    return key.append(t);
  }
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
  // A regular file in one read of its size; then whatever follows in chunks, with the size
  // checked again (a pipe has no size up front, and a file may grow while it is read).
  std::string text;
  if (!ec) {
    text.reserve(static_cast<std::size_t>(size));
    detail::advise_huge_pages(text.data(), text.capacity());
    text.resize(static_cast<std::size_t>(size));
    in.read(text.data(), static_cast<std::streamsize>(size));
    text.resize(static_cast<std::size_t>(in.gcount()));  // less where the file shrank
  }
  std::vector<char> chunk(std::size_t{1} << 16);
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
  return parse_owned(std::move(text), path);
}

CsvTable CsvTable::parse(const std::string& text, const std::string& source) {
  return parse_owned(std::string(text), source);
}

CsvTable CsvTable::parse_owned(std::string text, const std::string& source) {
  // A NUL byte is not text: it would cut every sentence that quotes the cell and print raw.
  if (const auto nul = text.find('\0'); nul != std::string::npos)
    detail::throw_nul_byte(source, text.data(), nul, 1);
  CsvTable t;
  t.source_ = source;
  detail::Records records = detail::split_records(text.data(), text.size(), source, 1, true);
  text.resize(records.bytes);
  if (records.widths.empty()) {
    throw Error(
        fmt::format("File '{}' is empty; a header row naming the columns is expected.", source));
  }
  const std::size_t width = records.widths.front();
  for (std::size_t j = 0; j < width; ++j) {
    const std::size_t begin = j == 0 ? 0 : records.ends[j - 1];
    t.header_.emplace_back(text, begin, records.ends[j] - begin);
  }
  detail::check_header(t.header_, source, records.lines.front());
  for (std::size_t r = 1; r < records.widths.size(); ++r)
    if (records.widths[r] != width)
      detail::throw_malformed_row(source, records.lines[r], records.widths[r], width);
  if (records.widths.size() == 1) {
    throw Error(fmt::format("File '{}' has a header but no data rows.", source));
  }
  // Every record has the header's width, so cell (r, c) is field width·(r + 1) + c.
  for (std::size_t j = 0; j < width; ++j) t.stored_.push_back({Kept::kText, j});
  t.width_ = width;
  t.text_ = std::move(text);
  t.ends_ = std::move(records.ends);
  t.lines_.assign(records.lines.begin() + 1, records.lines.end());
  return t;
}

std::string_view CsvTable::text_cell(Index row, std::size_t k) const {
  const std::size_t f = width_ * (static_cast<std::size_t>(row) + 1) + k;
  return std::string_view(text_).substr(ends_[f - 1], ends_[f] - ends_[f - 1]);
}

std::size_t CsvTable::text_slot(Index column) const {
  const Stored& s = stored_[static_cast<std::size_t>(column)];
  if (s.kept != Kept::kText) {
    throw std::logic_error(fmt::format("Column '{}' of '{}' was read without its text.",
                                       header_[static_cast<std::size_t>(column)], source_));
  }
  return s.slot;
}

std::string_view CsvTable::cell(Index row, Index column) const {
  return text_cell(row, text_slot(column));
}

bool CsvTable::has_column(const std::string& name) const {
  for (const auto& h : header_)
    if (h == name) return true;
  return false;
}

bool CsvTable::holds_text(const std::string& name) const {
  return stored_[static_cast<std::size_t>(column_index(name))].kept == Kept::kText;
}

Index CsvTable::column_index(const std::string& name) const {
  for (std::size_t j = 0; j < header_.size(); ++j)
    if (header_[j] == name) return static_cast<Index>(j);
  throw Error(fmt::format("File '{}' has no column '{}'; its columns are: {}.", source_, name,
                          join(header_)));
}

Vector CsvTable::numeric_column(const std::string& name) const {
  const Index j = column_index(name);
  if (const Stored& s = stored_[static_cast<std::size_t>(j)]; s.kept == Kept::kNumbers) {
    // Kept as numbers: every cell is a number but the missing ones, whose text gives the message.
    if (const auto& missing = missing_[s.slot]; !missing.empty()) {
      const auto& [row, text] = missing.front();
      parse_number(text,
                   fmt::format("File '{}', line {}, column '{}'", source_, lines_[row], name));
    }
    return Eigen::Map<const Vector>(numbers_.column(s.slot), rows());
  }
  const std::size_t k = text_slot(j);
  Vector out(rows());
  for (Index i = 0; i < rows(); ++i) {
    // Unquoted cells are stored trimmed: parse directly, and build the message naming the file,
    // line and column only for a cell that does not parse so (parse_number then trims a quoted
    // cell, or throws).
    const Parsed p = parse_decimal(text_cell(i, k));
    out[i] = p.status == NumberStatus::kOk
                 ? p.value
                 : parse_number(text_cell(i, k), fmt::format("File '{}', line {}, column '{}'",
                                                             source_, lines_[i], name));
  }
  return out;
}

Matrix CsvTable::numeric_columns(const std::vector<std::string>& names) const {
  Matrix out(rows(), static_cast<Index>(names.size()));
  detail::advise_huge_pages(out.data(), static_cast<std::size_t>(out.size()) * sizeof(double));
  std::vector<std::size_t> cols;
  bool all_text = true;
  for (const auto& name : names) all_text = all_text && holds_text(name);
  if (!all_text) {  // columns kept as numbers are copied; any text ones parsed column by column
    for (std::size_t l = 0; l < names.size(); ++l)
      out.col(static_cast<Index>(l)) = numeric_column(names[l]);
    return out;
  }
  for (const auto& name : names) cols.push_back(text_slot(column_index(name)));
  // Row by row (each row's cells lie together in memory), in contiguous blocks of rows on up to
  // one thread per core for large tables (each cell is parsed on its own, so the result does not
  // depend on the split). A cell that does not parse directly (a quoted one with spaces, or a bad
  // one) sends the whole table through numeric_column, which trims it or names the file, line and
  // column of the first bad cell column by column.
  std::atomic<bool> direct{true};
  const auto parse_rows = [&](Index begin, Index end) {
    for (Index i = begin; i < end && direct.load(std::memory_order_relaxed); ++i) {
      for (std::size_t k = 0; k < cols.size(); ++k) {
        const Parsed p = parse_decimal(text_cell(i, cols[k]));
        if (p.status != NumberStatus::kOk) {
          direct = false;
          return;
        }
        out(i, static_cast<Index>(k)) = p.value;
      }
    }
  };
  const Index cells = rows() * static_cast<Index>(cols.size());
  const Index threads = cells < kParallelParseCells
                            ? 1
                            : std::clamp<Index>(std::thread::hardware_concurrency(), 1, 8);
  if (threads == 1) {
    parse_rows(0, rows());
  } else {
    std::vector<std::jthread> workers;
    for (Index t = 1; t < threads; ++t)
      workers.emplace_back(parse_rows, rows() * t / threads, rows() * (t + 1) / threads);
    parse_rows(0, rows() / threads);
  }  // the workers join here
  if (!direct) {  // column by column, as before, so that the error names the same cell
    for (std::size_t l = 0; l < cols.size(); ++l)
      out.col(static_cast<Index>(l)) = numeric_column(names[l]);
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
  const bool text = holds_text(name);
  for (Index i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] != std::floor(v[i])) {
      throw Error(fmt::format(
          "File '{}', line {}, column '{}': a count must be a non-negative integer; got {}.",
          source_, lines_[i], name,
          text ? std::string(cell(i, column_index(name))) : fmt::format("{}", v[i])));
    }
  }
  return v;
}

namespace {

/// A missing cell's row for each column kept as numbers: a mask over the rows (1 = missing).
std::vector<char> missing_mask(Index rows,
                               const std::vector<std::pair<Index, std::string>>& cells) {
  std::vector<char> mask(static_cast<std::size_t>(rows), 0);
  for (const auto& [row, text] : cells) mask[static_cast<std::size_t>(row)] = 1;
  return mask;
}

}  // namespace

std::optional<CsvTable::MissingCell> CsvTable::first_missing(
    const std::vector<std::string>& names) const {
  // The first in file order: the earliest row, and in it the first of `names`.
  std::optional<MissingCell> first;
  for (const auto& name : names) {
    const Stored& s = stored_[static_cast<std::size_t>(column_index(name))];
    Index row = rows();
    if (s.kept == Kept::kNumbers) {
      const auto& missing = missing_[s.slot];
      if (!missing.empty()) row = missing.front().first;
    } else {
      const std::size_t k = text_slot(column_index(name));
      const Index end = first ? first->row : rows();
      for (Index i = 0; i < end; ++i)
        if (is_missing(text_cell(i, k))) {
          row = i;
          break;
        }
    }
    if (row < (first ? first->row : rows())) first = MissingCell{row, name};
  }
  return first;
}

CsvTable CsvTable::without_missing(const std::vector<std::string>& names) const {
  std::vector<char> drop(static_cast<std::size_t>(rows()), 0);
  for (const auto& name : names) {
    const Stored& s = stored_[static_cast<std::size_t>(column_index(name))];
    if (s.kept == Kept::kNumbers) {
      const auto mask = missing_mask(rows(), missing_[s.slot]);
      for (std::size_t i = 0; i < drop.size(); ++i) drop[i] |= mask[i];
    } else {
      const std::size_t k = text_slot(column_index(name));
      for (Index i = 0; i < rows(); ++i)
        drop[static_cast<std::size_t>(i)] |= static_cast<char>(is_missing(text_cell(i, k)));
    }
  }
  CsvTable out;
  out.source_ = source_;
  out.header_ = header_;
  out.stored_ = stored_;
  out.width_ = width_;
  out.text_.assign(text_, 0, width_ == 0 ? 0 : ends_[width_ - 1]);  // the header record
  out.ends_.assign(ends_.begin(), ends_.begin() + static_cast<std::ptrdiff_t>(width_));
  std::size_t kept = 0;
  for (const char d : drop) kept += d == 0 ? 1 : 0;
  out.numbers_.reset(numbers_.columns(), kept);
  out.numbers_.resize_rows(kept);
  out.missing_.resize(missing_.size());
  std::vector<Index> new_row(static_cast<std::size_t>(rows()), -1);
  for (Index i = 0; i < rows(); ++i) {
    if (drop[static_cast<std::size_t>(i)]) continue;
    new_row[static_cast<std::size_t>(i)] = static_cast<Index>(out.lines_.size());
    for (std::size_t c = 0; c < width_; ++c) {
      out.text_ += text_cell(i, c);
      out.ends_.push_back(out.text_.size());
    }
    for (std::size_t c = 0; c < numbers_.columns(); ++c)
      out.numbers_.column(c)[out.lines_.size()] = numbers_.column(c)[static_cast<std::size_t>(i)];
    out.lines_.push_back(lines_[i]);
  }
  for (std::size_t c = 0; c < missing_.size(); ++c)
    for (const auto& [row, text] : missing_[c])
      if (const Index r = new_row[static_cast<std::size_t>(row)]; r >= 0)
        out.missing_[c].emplace_back(r, text);
  return out;
}

CsvTable apply_missing_policy(CsvTable table, const std::vector<std::string>& used,
                              const std::string& policy) {
  check(policy == "error" || policy == "drop",
        fmt::format("Option '--missing' must be error or drop; got '{}'.", policy));
  for (const auto& c : used) table.column_index(c);  // names the file and its columns
  if (policy == "error") {
    if (const auto m = table.first_missing(used)) {
      throw Error(fmt::format(
          "File '{}', line {}, column '{}': the value is missing; give --missing drop to leave "
          "out the rows with a missing value.",
          table.source(), table.line_of(m->row), m->column));
    }
    return table;
  }
  CsvTable kept = table.without_missing(used);
  check(kept.rows() > 0,
        fmt::format("Every row of '{}' has a missing value in the columns used, so --missing drop "
                    "leaves nothing.",
                    table.source()));
  return kept;
}

Standardizer Standardizer::fit(const Matrix& x, const std::vector<std::string>& names) {
  std::vector<Index> all(static_cast<std::size_t>(x.cols()));
  for (Index j = 0; j < x.cols(); ++j) all[static_cast<std::size_t>(j)] = j;
  return fit_columns(x, all, names);
}

Standardizer Standardizer::fit_columns(const Matrix& x, const std::vector<Index>& columns,
                                       const std::vector<std::string>& names) {
  check(x.rows() > 0, "Standardisation needs at least one row.");
  Standardizer s;
  s.names = names;
  const auto k = static_cast<Index>(columns.size());
  s.mean.resize(k);
  s.sd.resize(k);
  for (Index j = 0; j < k; ++j)
    std::tie(s.mean[j], s.sd[j]) = s.column_moments(j, x.col(columns[static_cast<std::size_t>(j)]));
  return s;
}

std::pair<double, double> Standardizer::column_moments(Index j,
                                                       const Eigen::Ref<const Vector>& x) const {
  check(x.size() > 0, "Standardisation needs at least one row.");
  const double scale = x.cwiseAbs().maxCoeff();
  double mean = 0, sd = 0;
  if (scale > 1e-100 && scale < 1e100) {
    // Moderate magnitudes: no sum or square can overflow or underflow; the direct formulas.
    mean = x.mean();
    sd = std::sqrt((x.array() - mean).square().mean());
  } else if (std::isfinite(scale) && scale > 0) {
    // Mean and sd of x / max|x|, scaled back: nothing overflows (1e300) or underflows (1e-200).
    const auto y = x.array() / scale;
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
        column_name(j)));
  }
  if (!(sd > 0)) {
    throw Error(
        fmt::format("Column {} is constant in the training data, so it cannot be "
                    "standardised.",
                    column_name(j)));
  }
  return {mean, sd};
}

std::string Standardizer::column_name(Index j) const {
  return j < static_cast<Index>(names.size()) ? "'" + names[j] + "'" : fmt::format("{}", j + 1);
}

Matrix Standardizer::transform(const Matrix& x) const {
  check(x.cols() == mean.size(),
        fmt::format("Standardisation was fitted on {} columns but is applied to {}.", mean.size(),
                    x.cols()));
  Matrix out = x;
  for (Index j = 0; j < x.cols(); ++j) transform_column(j, out.col(j));
  return out;
}

void Standardizer::transform_column(Index j, Eigen::Ref<Vector> x) const {
  for (Index i = 0; i < x.size(); ++i) {
    const double value = x[i];
    const double d = value - mean[j];
    // x − mean may overflow where x and the mean are huge with opposite signs.
    x[i] = std::isfinite(d) ? d / sd[j] : 2 * ((0.5 * value - 0.5 * mean[j]) / sd[j]);
    if (!std::isfinite(x[i])) {
      throw Error(fmt::format(
          "Column {}, row {}: the value {} is not finite once standardised with the training "
          "mean {} and standard deviation {}.",
          column_name(j), i + 1, value, mean[j], sd[j]));
    }
  }
}

Matrix with_intercept(const Matrix& x) {
  Matrix out(x.rows(), x.cols() + 1);
  out.col(0).setOnes();
  out.rightCols(x.cols()) = x;
  return out;
}

}  // namespace blr::io
