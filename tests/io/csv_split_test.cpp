// The CSV record splitter (src/core/io/csv.cpp rewrites the text in place, finds run ends 64 bytes
// at a time and copies short fields without memmove) against the rule written plainly: one
// character at a time, each field into its own string. On random texts both must give the same
// header, cells and line numbers, or the same error message. Also: `read` from a file and from a
// pipe (which has no size up front) equals `parse`, and the size limit holds on a pipe.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "blr/core/error.hpp"
#include "blr/io/csv.hpp"

namespace blr::io {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

/// What a parse gives: the error message, or the header, every data cell and each row's line.
struct Outcome {
  std::string error;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> cells;
  std::vector<long> lines;
  bool operator==(const Outcome&) const = default;
};

bool blank(char c) { return c == ' ' || c == '\t'; }

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && blank(s[b])) ++b;
  while (e > b && blank(s[e - 1])) --e;
  return s.substr(b, e - b);
}

/// The documented rule (csv.hpp), one character at a time.
Outcome reference(const std::string& text, const std::string& source) {
  Outcome out;
  std::vector<std::vector<std::string>> records;
  std::vector<long> record_lines;
  std::vector<std::string> fields;
  std::string field;
  bool in_quotes = false, quoted = false, after_quote = false, content = false;
  long line = 1, record_line = 1;
  const auto fail = [&](long at, const std::string& what) {
    out = Outcome{};
    out.error = "File '" + source + "', line " + std::to_string(at) + ": " + what;
    out.error.resize(std::strlen(out.error.c_str()));  // what() ends at a NUL in a column name
  };
  const auto end_field = [&] {
    fields.push_back(quoted ? field : trim(field));
    field.clear();
    quoted = after_quote = false;
  };
  const auto end_record = [&] {
    if (content) {
      end_field();
      records.push_back(fields);
      record_lines.push_back(record_line);
    }
    fields.clear();
    field.clear();
    quoted = after_quote = content = false;
  };
  // A NUL byte anywhere is refused first, with its line (issue 34, D19).
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    long at = 1;
    for (std::size_t k = 0; k < nul; ++k) {
      if (text[k] == '\n' || (text[k] == '\r' && (k + 1 >= text.size() || text[k + 1] != '\n'))) ++at;
    }
    fail(at, "holds a NUL byte (0x00); blr reads CSV files as text.");
    return out;
  }
  std::size_t i = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    const bool crlf = c == '\r' && i + 1 < text.size() && text[i + 1] == '\n';
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
        after_quote = true;
      } else {
        if (c == '\n' || (c == '\r' && !crlf)) ++line;
        field += c;
      }
    } else if (c == '\r' || c == '\n') {
      if (crlf) ++i;
      end_record();
      record_line = ++line;
    } else {
      content = true;
      if (c == ',') {
        end_field();
      } else if (c == '"') {
        if (after_quote || !trim(field).empty()) {
          fail(line, "a quote appears inside an unquoted field.");
          return out;
        }
        field.clear();
        in_quotes = quoted = true;
      } else if (after_quote && !blank(c)) {
        fail(line, "text follows a closing quote in the same field.");
        return out;
      } else if (!after_quote) {
        field += c;
      }
    }
  }
  if (in_quotes) {
    fail(record_line, "a quoted field is never closed.");
    return out;
  }
  end_record();
  if (records.empty()) {
    out.error = "File '" + source + "' is empty; a header row naming the columns is expected.";
    return out;
  }
  std::set<std::string> seen;
  for (std::size_t j = 0; j < records[0].size(); ++j) {
    if (records[0][j].empty()) {
      fail(record_lines[0], "header column " + std::to_string(j + 1) + " has no name.");
      return out;
    }
    if (!seen.insert(records[0][j]).second) {
      fail(record_lines[0], "the header names column '" + records[0][j] + "' twice.");
      return out;
    }
  }
  const std::size_t width = records[0].size();
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != width) {
      fail(record_lines[r], "malformed row with " + std::to_string(records[r].size()) + " field" +
                                (records[r].size() == 1 ? "" : "s") + " where the header has " +
                                std::to_string(width) + " columns.");
      return out;
    }
  }
  if (records.size() == 1) {
    out.error = "File '" + source + "' has a header but no data rows.";
    return out;
  }
  out.header = records[0];
  out.cells.assign(records.begin() + 1, records.end());
  out.lines.assign(record_lines.begin() + 1, record_lines.end());
  return out;
}

Outcome outcome_of(const CsvTable& t) {
  Outcome out;
  out.header = t.columns();
  for (Index r = 0; r < t.rows(); ++r) {
    std::vector<std::string> row;
    for (Index c = 0; c < static_cast<Index>(t.columns().size()); ++c)
      row.emplace_back(t.cell(r, c));
    out.cells.push_back(row);
    out.lines.push_back(t.line_of(r));
  }
  return out;
}

Outcome parsed(const std::string& text, const std::string& source) {
  try {
    return outcome_of(CsvTable::parse(text, source));
  } catch (const Error& e) {
    Outcome out;
    out.error = e.what();
    return out;
  }
}

/// Random texts from the characters that matter to the splitter. `structured` texts have a
/// header and rows of its width whose fields are quoted or not, padded with blanks, of every
/// length from 0 to 80 (the splitter copies up to 32 bytes itself and scans 64 at a time), with
/// commas, quotes, line breaks and NULs inside quotes and empty lines between records.
std::string random_text(std::mt19937_64& rng, bool structured) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  std::string out = pick(8) == 0 ? "\xEF\xBB\xBF" : "";
  if (!structured) {
    static const char kChars[] = {'a', '1', ' ', '\t', ',', '"', '\r', '\n', 'x'};
    const int n = pick(120);
    for (int k = 0; k < n; ++k) out += kChars[pick(sizeof kChars)];
    // A NUL byte in one text of 10, anywhere (it is refused first, naming its line).
    if (pick(10) == 0) out.insert(static_cast<std::size_t>(pick(static_cast<int>(out.size()) + 1)), 1, '\0');
    return out;
  }
  static const char* const kBreaks[] = {"\n", "\r\n", "\r"};
  const int width = 1 + pick(4), rows = pick(12);
  for (int r = 0; r <= rows; ++r) {
    for (int c = 0; c < width; ++c) {
      if (c) out += ',';
      std::string pad_before(pick(3) == 0 ? pick(3) : 0, pick(2) ? ' ' : '\t');
      std::string pad_after(pick(3) == 0 ? pick(3) : 0, pick(2) ? ' ' : '\t');
      if (r == 0) {  // distinct names, sometimes quoted
        out += pad_before + (pick(4) == 0 ? "\"c" + std::to_string(c) + "\"" : "c" + std::to_string(c)) + pad_after;
        continue;
      }
      const int len = pick(4) == 0 ? pick(81) : pick(24);
      std::string body;
      if (pick(3) == 0) {
        static const char kQuoted[] = {'a', '7', ' ', ',', '\n', '\r', '.', 'e'};
        for (int k = 0; k < len; ++k) body += pick(10) == 0 ? std::string("\"\"") : std::string(1, kQuoted[pick(sizeof kQuoted)]);
        out += pad_before + "\"" + body + "\"" + pad_after;
      } else {
        static const char kPlain[] = {'0', '1', '9', '.', '-', 'e', 'a', ' ', '\t'};
        for (int k = 0; k < len; ++k) body += kPlain[pick(sizeof kPlain)];
        out += pad_before + body + pad_after;
      }
    }
    out += kBreaks[pick(3)];
    if (pick(6) == 0) out += kBreaks[pick(3)];  // an empty line
  }
  if (pick(4) == 0) out.resize(out.size() - static_cast<std::size_t>(pick(3)));  // cut short
  if (pick(10) == 0 && !out.empty()) out.insert(static_cast<std::size_t>(pick(static_cast<int>(out.size()))), 1, '"');
  // A NUL byte in one text of 20, anywhere (it is refused first, naming its line).
  if (pick(20) == 0) out.insert(static_cast<std::size_t>(pick(static_cast<int>(out.size()) + 1)), 1, '\0');
  return out;
}

TEST(CsvSplit, EqualsTheCharacterByCharacterRuleOnRandomTexts) {
  std::mt19937_64 rng(20261126);
  int accepted = 0, refused = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const std::string text = random_text(rng, trial % 2 == 0);
    const Outcome want = reference(text, "r.csv"), got = parsed(text, "r.csv");
    ASSERT_EQ(got, want) << "trial " << trial << ", text (escaped): " << ::testing::PrintToString(text)
                         << "\nwant error: " << want.error << "\ngot error: " << got.error;
    (want.error.empty() ? accepted : refused) += 1;
  }
  // Both kinds occur often enough for the comparison to mean something.
  EXPECT_GT(accepted, 2000);
  EXPECT_GT(refused, 2000);
}

TEST(CsvSplit, LongFieldsAndBlocksAcrossRecords) {
  // Fields of 0..200 bytes, so that run ends fall at every offset of a 64-byte block and every
  // copy size is used; the last record has no line break.
  std::string text = "a,b\n";
  for (int len = 0; len <= 200; ++len) {
    text += std::string(static_cast<std::size_t>(len), '7') + ", " + std::string(static_cast<std::size_t>(len % 70), 'x') + " \n";
  }
  text += "\"q\"\"\",1";
  ASSERT_EQ(parsed(text, "long.csv"), reference(text, "long.csv"));
  const auto t = CsvTable::parse(text, "long.csv");
  ASSERT_EQ(t.rows(), 202);
  EXPECT_EQ(t.cell(200, 0), std::string(200, '7'));
  EXPECT_EQ(t.cell(201, 0), "q\"");
  EXPECT_EQ(t.line_of(201), 203);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("blr_csv_split_" + name + "_" + std::to_string(::getpid())))
      .string();
}

std::string large_text() {
  std::string text = "x,y,label\n";
  for (int i = 0; i < 20000; ++i)
    text += std::to_string(i) + ",\"" + std::to_string(i * 0.25) + "\", " + (i % 3 ? "Yes" : "No") + "\r\n";
  return text;  // about 400 KB: several 64 KiB chunks through a pipe
}

TEST(CsvSplit, ReadFromAFileEqualsParse) {
  const std::string text = large_text(), path = temp_path("file");
  std::ofstream(path, std::ios::binary) << text;
  const Outcome want = outcome_of(CsvTable::parse(text, path));
  EXPECT_EQ(outcome_of(CsvTable::read(path)), want);
  std::filesystem::remove(path);
}

TEST(CsvSplit, ReadFromAPipeEqualsParseAndKeepsTheLimit) {
  const std::string text = large_text(), path = temp_path("fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  // A reader that stops early closes the pipe; the writer then gets an error, not SIGPIPE.
  const auto previous = std::signal(SIGPIPE, SIG_IGN);
  const auto through_pipe = [&](std::uintmax_t limit) {
    std::thread writer([&] { std::ofstream(path, std::ios::binary) << text; });
    Outcome out;
    try {
      out = outcome_of(CsvTable::read(path, limit));
    } catch (const Error& e) {
      out.error = e.what();
    }
    writer.join();
    return out;
  };
  EXPECT_EQ(through_pipe(text.size()), outcome_of(CsvTable::parse(text, path)));
  // A pipe has no size up front: the limit is checked while reading.
  EXPECT_THAT(through_pipe(text.size() - 1).error,
              AllOf(HasSubstr(path), HasSubstr("holds more than the " +
                                               std::to_string(text.size() - 1) + " bytes")));
  std::signal(SIGPIPE, previous);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace blr::io
