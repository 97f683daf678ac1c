// The CSV reader's inner parts, shared by the whole-file reader (csv.cpp) and the streaming one
// (csv_stream.cpp); not installed.
//
// `split_records` cuts a text into records of fields in place (RFC 4180 quoting); `parse_decimal`
// reads one trimmed cell as a number under the rule `CsvTable` documents (a whole decimal token
// within the range of a double, read by fast_float).
#pragma once

#include <fast_float/fast_float.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace blr::io::detail {

std::string_view trim(std::string_view s);

/// Asks Linux to back a fresh buffer with 2 MiB pages (see csv.cpp); does nothing elsewhere.
void advise_huge_pages(const void* data, std::size_t bytes);

/// "a, b, c".
std::string join(const std::vector<std::string>& v);

/// The records of a CSV text, flat: the text is rewritten in place so that every field's text
/// lies back to back from its start (`ends[k]` the end of field k, its start the previous end),
/// `widths[r]` the number of fields of record r and `lines[r]` the 1-based line on which it
/// starts; `bytes` is the fields' total length and `next_line` the line after the text.
struct Records {
  std::vector<std::size_t> ends;
  std::vector<std::size_t> widths;
  std::vector<long> lines;
  std::size_t bytes = 0;
  long next_line = 1;
};

/// Splits p[0, n) into records of fields, rewriting it in place (a field is never longer than the
/// text it came from). `first_line` is the 1-based line on which p starts; at a file's start
/// (`file_start`) a UTF-8 byte-order mark is skipped. A quoted field may hold commas, doubled
/// quotes and line breaks; unquoted fields are stored trimmed of spaces and tabs. A malformed
/// quote is a `blr::Error` naming `source` and the line.
Records split_records(char* p, std::size_t n, const std::string& source, long first_line,
                      bool file_start);

/// Refuses a header with a column without a name, or one named twice (`line`: the header's).
void check_header(const std::vector<std::string>& header, const std::string& source, long line);
/// The error for a NUL byte at p[at], in a text whose first byte is on `line`.
[[noreturn]] void throw_nul_byte(const std::string& source, const char* p, std::size_t at,
                                 long line);
/// The error for a row of `width` fields where the header has `columns`.
[[noreturn]] void throw_malformed_row(const std::string& source, long line, std::size_t width,
                                      std::size_t columns);

enum class NumberStatus { kOk, kNotANumber, kNotFinite, kOutOfRange };
struct Parsed {
  NumberStatus status = NumberStatus::kNotANumber;
  double value = 0;
};

/// The whole rule for a trimmed token (see csv.cpp).
Parsed classify_decimal(std::string_view t);

/// `classify_decimal`, with the common case first: a token that fast_float reads whole to a
/// finite non-zero value, and that is not "+" before a sign, is a number of that value under the
/// rule (fast_float's own non-numeric tokens, "inf" and "nan", give values that are not finite,
/// and a value out of range gives infinity or zero); everything else takes the rule.
[[gnu::always_inline]] inline Parsed parse_decimal(std::string_view t) {
  const char* b = t.data();
  const char* const e = t.data() + t.size();
  if (b != e && *b == '+') {
    ++b;
    if (b != e && *b == '-') return {};
  }
  double v = 0;
  const auto r = fast_float::from_chars(b, e, v);
  if (r.ptr == e && r.ec == std::errc() && std::isfinite(v) && v != 0)
    return {NumberStatus::kOk, v};
  return classify_decimal(t);
}

}  // namespace blr::io::detail
