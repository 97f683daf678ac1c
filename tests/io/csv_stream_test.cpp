// The streaming CSV reader (`CsvTable::read(path, choose)`) against the whole-file reader: on
// random files (numbers, quoted numbers with blanks, NA and empty cells, CR/LF/CRLF line ends,
// blank lines, a byte-order mark, quoted text with commas, doubled quotes and line breaks) read
// through buffers of 1 byte up to more than the file, every kept cell, line, missing cell and
// design matrix equals the whole-file reader's, and so does every error message on faulty files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "blr/core/error.hpp"
#include "blr/core/rng.hpp"
#include "blr/io/csv.hpp"
#include "blr/io/design.hpp"
#include "error_message.hpp"

namespace blr::io {
namespace {

using testing::error_of;

/// A file in the temporary directory, removed with the object.
struct TempCsv {
  std::string path;
  explicit TempCsv(const std::string& text) {
    static int count = 0;
    path = (std::filesystem::temp_directory_path() /
            fmt::format("blr-csv-stream-{}-{}.csv", static_cast<long>(::getpid()), count++))
               .string();
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempCsv() { std::filesystem::remove(path); }
};

CsvColumnChooser keep(std::vector<std::string> numbers, std::vector<std::string> text) {
  return [=](const std::vector<std::string>&) { return CsvColumns{numbers, text}; };
}

const std::vector<std::size_t> kChunks = {1, 2, 3, 7, 64, 4096, kCsvChunkBytes};

/// A random file: columns x1..x3 numeric (some cells quoted with blanks, some NA or empty), t a
/// quoted text with commas, doubled quotes and line breaks, y a 0/1 label, z an unused column.
std::string random_csv(Rng& rng, int rows, bool bom) {
  const char* ends[] = {"\n", "\r\n", "\r"};
  std::string s = bom ? "\xEF\xBB\xBF" : "";
  s += "x1,\"x2\",t,x3,y,z";
  s += ends[rng.below(3)];
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < 3; ++j) {
      const auto kind = rng.below(20);
      const double v = rng.normal() * std::pow(10.0, static_cast<double>(rng.below(7)) - 3);
      if (kind == 0) {
        s += "NA";
      } else if (kind == 1) {
        s += "";
      } else if (kind == 2) {
        s += fmt::format("\" {:.17g} \"", v);
      } else {
        s += fmt::format("{:.17g}", v);
      }
      s += ",";
      if (j == 1) {
        const auto text = rng.below(4);
        s += text == 0   ? "\"a, \"\"b\"\"\""
             : text == 1 ? "\"two\nlines\""
             : text == 2 ? "plain"
                         : "\"cr\r\nlf\"";
        s += ",";
      }
    }
    s += rng.uniform() < 0.5 ? "1" : "0";
    s += fmt::format(",{}", rng.below(100));
    s += ends[rng.below(3)];
    if (rng.below(10) == 0) s += ends[rng.below(3)];  // a blank line
  }
  return s;
}

/// Expects the streamed table to hold what the whole-file table holds in the kept columns.
void expect_same_table(const CsvTable& whole, const CsvTable& streamed,
                       const std::vector<std::string>& numbers,
                       const std::vector<std::string>& text, const std::string& where) {
  ASSERT_EQ(streamed.rows(), whole.rows()) << where;
  EXPECT_EQ(streamed.columns(), whole.columns()) << where;
  for (Index i = 0; i < whole.rows(); ++i)
    ASSERT_EQ(streamed.line_of(i), whole.line_of(i)) << where;
  for (const auto& name : text) {
    const Index j = whole.column_index(name);
    for (Index i = 0; i < whole.rows(); ++i)
      ASSERT_EQ(streamed.cell(i, j), whole.cell(i, j)) << where << " row " << i;
  }
  EXPECT_EQ(error_of([&] { (void)streamed.numeric_columns(numbers); }),
            error_of([&] { (void)whole.numeric_columns(numbers); }))
      << where;
  const auto m1 = whole.first_missing(numbers), m2 = streamed.first_missing(numbers);
  ASSERT_EQ(m1.has_value(), m2.has_value()) << where;
  if (m1) {
    EXPECT_EQ(m2->row, m1->row) << where;
    EXPECT_EQ(m2->column, m1->column) << where;
  }
  const auto w1 = whole.without_missing(numbers), w2 = streamed.without_missing(numbers);
  ASSERT_EQ(w2.rows(), w1.rows()) << where;
  for (Index i = 0; i < w1.rows(); ++i) ASSERT_EQ(w2.line_of(i), w1.line_of(i)) << where;
  EXPECT_EQ(w2.first_missing(numbers).has_value(), false) << where;
  if (w1.rows() > 0) {
    const Matrix a = w1.numeric_columns(numbers), b = w2.numeric_columns(numbers);
    EXPECT_TRUE(a == b) << where;  // bit for bit: the same parse of the same text
  }
}

TEST(CsvStream, EqualsTheWholeFileReaderOnRandomFilesAtEveryBufferSize) {
  Rng rng(43);
  for (int file = 0; file < 12; ++file) {
    const TempCsv f(random_csv(rng, 1 + static_cast<int>(rng.below(60)), file % 3 == 0));
    const auto whole = CsvTable::read(f.path);
    // The text columns named out of file order: their cells still land in their own columns.
    const std::vector<std::string> numbers = {"x3", "x1", "x2"}, text = {"y", "t"};
    for (const std::size_t chunk : kChunks) {
      const auto streamed = CsvTable::read(f.path, keep(numbers, text), kMaxCsvBytes, chunk);
      expect_same_table(whole, streamed, numbers, text,
                        fmt::format("file {} chunk {}", file, chunk));
      EXPECT_FALSE(streamed.holds_text("x1"));
      EXPECT_TRUE(streamed.holds_text("t"));
      EXPECT_FALSE(streamed.holds_text("z"));  // dropped
    }
  }
}

TEST(CsvStream, ALargeBufferParsedOnSeveralThreadsEqualsTheWholeFileReader) {
  // 12 000 rows of 3 number columns: a 4 MiB buffer holds more than 2^15 number cells, which are
  // parsed on one thread per core (on a machine with one core, serially: the same result).
  Rng rng(11);
  const TempCsv f(random_csv(rng, 12000, false));
  const auto whole = CsvTable::read(f.path);
  const std::vector<std::string> numbers = {"x1", "x2", "x3"}, text = {"t", "y"};
  for (const std::size_t chunk : {std::size_t{65536}, kCsvChunkBytes})
    expect_same_table(whole, CsvTable::read(f.path, keep(numbers, text), kMaxCsvBytes, chunk),
                      numbers, text, fmt::format("chunk {}", chunk));
}

TEST(CsvStream, DesignsEqualTheWholeFileReaders) {
  Rng rng(7);
  std::string s = "a,b,g,c,y\n";
  for (int i = 0; i < 200; ++i)
    s += fmt::format("{:.17g},{:.17g},{},{:.17g},{}\n", rng.normal(), 1e120 * rng.normal(),
                     "pqr"[rng.below(3)], i == 17 ? 1.3e154 : rng.normal(), rng.below(2));
  const TempCsv f(s);
  const auto whole = CsvTable::read(f.path);
  for (const bool standardize : {false, true}) {
    const DesignSpec spec{{"a", "g", "b", "c"}, {"g"}, standardize, true};
    const auto [e1, x1] = DesignEncoder::fit_transform(whole, spec);
    for (const std::size_t chunk : {std::size_t{5}, kCsvChunkBytes}) {
      const auto streamed =
          CsvTable::read(f.path, keep({"a", "b", "c"}, {"g", "y"}), kMaxCsvBytes, chunk);
      const auto [e2, x2] = DesignEncoder::fit_transform(streamed, spec);
      EXPECT_EQ(e2.names(), e1.names());
      EXPECT_TRUE(x2 == x1) << "standardize " << standardize << " chunk " << chunk;
      ASSERT_EQ(e2.dominant_values().size(), 1u);
      EXPECT_EQ(e2.dominant_values()[0].column, "c");
      EXPECT_EQ(e2.dominant_values()[0].row, 17);
      EXPECT_TRUE(e2.transform(streamed) == e1.transform(whole));
      EXPECT_EQ(streamed.binary_labels("y", "1", {"0", "1"}),
                whole.binary_labels("y", "1", {"0", "1"}));
    }
  }
}

TEST(CsvStream, ErrorsAreTheWholeFileReadersSentences) {
  const std::vector<std::string> faulty = {
      "",                                   // empty
      "a,b\n",                              // a header only
      "a,a\n1,2\n",                         // a column named twice
      "a,\n1,2\n",                          // a column without a name
      "a,b\n1,2\n3\n4,5\n",                 // a malformed row
      "a,b\n1,\"2\n3,4\n",                  // a quote never closed
      "a,b\n1,2\n3,x\"y\n",                 // a quote inside an unquoted field
      "a,b\n1,\"2\"z\n",                    // text after a closing quote
      std::string("a,b\n1,2\r\n3,\0", 14),  // a NUL byte
  };
  for (const auto& text : faulty) {
    const TempCsv f(text);
    const std::string whole = error_of([&] { CsvTable::read(f.path); });
    ASSERT_NE(whole, testing::kNoError);
    for (const std::size_t chunk : kChunks)
      EXPECT_EQ(error_of([&] { CsvTable::read(f.path, keep({"a"}, {}), kMaxCsvBytes, chunk); }),
                whole)
          << "chunk " << chunk << " on " << text;
  }
}

TEST(CsvStream, ATextCellInANumericColumnIsNamedAsEver) {
  // The column is read again as text: numbers and the design name the cell as the whole-file
  // reader does (with the hint that a text column must be declared categorical).
  const TempCsv f("a,b,y\n1,2,0\n2,north,1\n3,NA,0\n");
  const auto whole = CsvTable::read(f.path);
  for (const std::size_t chunk : kChunks) {
    const auto streamed = CsvTable::read(f.path, keep({"a", "b"}, {"y"}), kMaxCsvBytes, chunk);
    EXPECT_TRUE(streamed.holds_text("b"));
    EXPECT_FALSE(streamed.holds_text("a"));
    EXPECT_EQ(error_of([&] { (void)streamed.numeric_column("b"); }),
              error_of([&] { (void)whole.numeric_column("b"); }));
    const DesignSpec spec{{"a", "b"}, {}, false, true};
    const std::string message = error_of([&] { DesignEncoder::fit_transform(streamed, spec); });
    EXPECT_NE(message.find("declared categorical"), std::string::npos) << message;
    EXPECT_EQ(message, error_of([&] { DesignEncoder::fit_transform(whole, spec); }));
  }
}

TEST(CsvStream, MissingCellsAreNamedAndDroppedAsEver) {
  const TempCsv f("a,b\n1,2\n\" NA \",3\n4,\n5,6\n");
  const auto whole = CsvTable::read(f.path);
  const auto streamed = CsvTable::read(f.path, keep({"a", "b"}, {}), kMaxCsvBytes, 3);
  for (const auto* policy : {"error", "drop"}) {
    EXPECT_EQ(error_of([&] {
                apply_missing_policy(streamed, {"a", "b"}, policy);
              }),
              error_of([&] {
                apply_missing_policy(whole, {"a", "b"}, policy);
              }));
  }
  const auto kept = apply_missing_policy(streamed, {"a", "b"}, "drop");
  EXPECT_EQ(kept.rows(), 2);
  EXPECT_EQ(kept.line_of(1), 5);
  EXPECT_EQ(kept.numeric_column("a"), (Vector(2) << 1, 5).finished());
  EXPECT_EQ(error_of([&] { (void)streamed.numeric_column("a"); }),
            error_of([&] { (void)whole.numeric_column("a"); }));
}

TEST(CsvStream, TheChoiceIsChecked) {
  const TempCsv f("a,b\n1,2\n");
  EXPECT_EQ(error_of([&] {
              CsvTable::read(f.path, keep({"a", "glu"}, {}));
            }),
            fmt::format("File '{}' has no column 'glu'; its columns are: a, b.", f.path));
  EXPECT_NE(error_of([&] { CsvTable::read(f.path, keep({"a"}, {"a"})); }).find("both as numbers"),
            std::string::npos);
  const auto t = CsvTable::read(f.path, keep({"a"}, {}));
  EXPECT_THROW((void)t.cell(0, 0), std::logic_error);  // its text is not kept: a caller's bug
  EXPECT_THROW((void)t.cell(0, 1), std::logic_error);  // dropped
  EXPECT_EQ(error_of([] { CsvTable::read("/nonexistent/x.csv", keep({}, {})); }),
            "File '/nonexistent/x.csv' cannot be opened for reading.");
  EXPECT_NE(
      error_of([&] { CsvTable::read(f.path, keep({"a"}, {}), 3); }).find("more than the 3 bytes"),
      std::string::npos);
}

TEST(CsvStream, APipeIsReadWholeWithItsText) {
  // A pipe cannot be read a second time, so it is read as the whole-file reader reads it.
  const std::string fifo = (std::filesystem::temp_directory_path() /
                            fmt::format("blr-csv-stream-fifo-{}", static_cast<long>(::getpid())))
                               .string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << "a,b,y\n1,north,0\n2,2,1\n"; });
  std::vector<std::string> header;
  const auto t = CsvTable::read(
      fifo,
      [&](const std::vector<std::string>& h) {
        header = h;  // the chooser still sees the header
        return CsvColumns{{"a", "b"}, {"y"}};
      },
      kMaxCsvBytes, 4);
  writer.join();
  EXPECT_EQ(header, (std::vector<std::string>{"a", "b", "y"}));
  std::filesystem::remove(fifo);
  EXPECT_TRUE(t.holds_text("a"));
  EXPECT_EQ(t.numeric_column("a"), (Vector(2) << 1, 2).finished());
  EXPECT_EQ(t.cell(0, 1), "north");
}

}  // namespace
}  // namespace blr::io
