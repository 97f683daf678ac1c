// Regression tests for the CSV reader's findings of issue 15: byte-order marks, bare CRs, numbers
// as whole decimal tokens, overflow-free standardisation, a linear distinct-value scan that stops
// early, and the file size limit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "blr/core/error.hpp"
#include "blr/io/csv.hpp"
#include "error_message.hpp"

namespace blr::io {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

using testing::error_of;

TEST(CsvReliability, ByteOrderMarkIsSkipped) {
  const auto t = CsvTable::parse("\xEF\xBB\xBFglu,type\n1,Yes\n", "bom.csv");
  EXPECT_EQ(t.columns(), (std::vector<std::string>{"glu", "type"}));
  EXPECT_TRUE(t.has_column("glu"));
  EXPECT_EQ(t.numeric_column("glu")[0], 1.0);
}

TEST(CsvReliability, BareCarriageReturnEndsARecord) {
  const auto t = CsvTable::parse("a\r2\r3\r\n4\n5", "cr.csv");
  ASSERT_EQ(t.rows(), 4);
  EXPECT_EQ(t.numeric_column("a"), (Vector(4) << 2, 3, 4, 5).finished());
  EXPECT_EQ(t.line_of(0), 2);
  EXPECT_EQ(t.line_of(1), 3);
  EXPECT_EQ(t.line_of(2), 4);
  EXPECT_EQ(t.line_of(3), 5);
}

TEST(CsvReliability, CarriageReturnInsideQuotesIsText) {
  const auto t = CsvTable::parse("a,b\n\"x\ry\",1\r\"p\r\nq\",2\n3,4\n", "q.csv");
  ASSERT_EQ(t.rows(), 3);
  EXPECT_EQ(t.cell(0, 0), "x\ry");
  EXPECT_EQ(t.cell(1, 0), "p\r\nq");
  EXPECT_EQ(t.line_of(1), 4);  // "x\ry" spans lines 2–3
  EXPECT_EQ(t.line_of(2), 6);
  // A bare CR in an unquoted cell splits it: "2\r3" is two records, never 23.
  EXPECT_THAT(error_of([] { CsvTable::parse("a,b\n2\r3,4\n", "cr.csv"); }),
              AllOf(HasSubstr("line 2"), HasSubstr("malformed row")));
}

// Issue 34, D19: a NUL byte in a cell cut the sentence that quoted it, and one in a header name
// was printed raw with exit 0; both are refused with the line.
TEST(CsvReliability, NulBytesAreRefusedWithTheirLine) {
  using namespace std::string_literals;
  EXPECT_THAT(error_of([] { CsvTable::parse("glu,type\n1,Yes\n\0" "2,No\n"s, "nul.csv"); }),
              AllOf(HasSubstr("File 'nul.csv', line 3"), HasSubstr("NUL byte")));
  EXPECT_THAT(error_of([] { CsvTable::parse("g\0lu,type\n1,Yes\n"s, "nul.csv"); }),
              AllOf(HasSubstr("line 1"), HasSubstr("NUL byte")));
  EXPECT_THAT(error_of([] { CsvTable::parse("a\r1\r\n\0"s, "cr.csv"); }), HasSubstr("line 3"));
}

TEST(CsvReliability, NumbersAreWholeDecimalTokens) {
  for (const char* ok : {"1", "+1", "-1", "1.5", ".5", "5.", "1e3", "1E-3", "+2.5e+2", " 7 "}) {
    EXPECT_TRUE(looks_numeric(ok)) << ok;
  }
  EXPECT_EQ(parse_number("+2.5e+2", "x"), 250.0);
  for (const char* bad : {"0x1p1023", "0x10", "1e", "e5", "+-1", "--1", "+", ".", "1.2.3", "1,5",
                          "inf", "-inf", "Infinity", "nan", "NaN", "1e400", "1e-400", "12abc"}) {
    EXPECT_FALSE(looks_numeric(bad)) << bad;
  }
  const auto t = CsvTable::parse("a,b,c,d\n0x1p1023,inf,1e400,-1e-400\n", "n.csv");
  EXPECT_THAT(
      error_of([&] { t.numeric_column("a"); }),
      AllOf(HasSubstr("line 2"), HasSubstr("column 'a'"), HasSubstr("'0x1p1023' is not a number")));
  EXPECT_THAT(error_of([&] { t.numeric_column("b"); }),
              AllOf(HasSubstr("column 'b'"), HasSubstr("not a finite number")));
  EXPECT_THAT(error_of([&] { t.numeric_column("c"); }),
              AllOf(HasSubstr("n.csv"), HasSubstr("line 2"), HasSubstr("column 'c'"),
                    HasSubstr("'1e400' is outside the range of a double")));
  EXPECT_THAT(error_of([&] { t.numeric_column("d"); }), HasSubstr("outside the range"));
  EXPECT_EQ(parse_number("4.9e-324", "x"), std::numeric_limits<double>::denorm_min());
}

TEST(CsvReliability, LabelsFollowTheSameNumberRule) {
  EXPECT_TRUE(same_label("1", "+1.0"));
  EXPECT_TRUE(same_label("0", "-0"));
  EXPECT_FALSE(same_label("0x1", "1"));  // hexadecimal is text
  EXPECT_FALSE(same_label("inf", "infinity"));
  EXPECT_FALSE(same_label("1e400", "1e500"));
  const auto t = CsvTable::parse("y\n1\n+1.0\n0x1\n0\n-0\n", "l.csv");
  EXPECT_EQ(t.distinct("y"), (std::vector<std::string>{"1", "0x1", "0"}));
  EXPECT_EQ(t.class_labels("y", {"0", "1", "0x1"}), (std::vector<int>{1, 1, 2, 0, 0}));
}

TEST(CsvReliability, StandardizerHandlesHugeMagnitudes) {
  Matrix x(4, 2);
  x << 1e300, 1, -1e300, 2, 3e300, 3, -3e300, 4;
  const auto s = Standardizer::fit(x, {"big", "small"});
  EXPECT_DOUBLE_EQ(s.mean[0], 0.0);
  EXPECT_DOUBLE_EQ(s.sd[0], std::sqrt(5.0) * 1e300);
  const Matrix z = s.transform(x);
  ASSERT_TRUE(z.allFinite());
  EXPECT_NEAR(z.col(0).squaredNorm() / 4, 1.0, 1e-12);  // not zeroed
  EXPECT_NEAR(z(0, 0), 1 / std::sqrt(5.0), 1e-12);
  // The largest doubles, with opposite signs: x − mean would overflow without care.
  const double big = std::numeric_limits<double>::max();
  Matrix y(3, 1);
  y << big, big, -big;
  const Matrix zy = Standardizer::fit(y).transform(y);
  EXPECT_TRUE(zy.allFinite());
  EXPECT_NEAR(zy(2, 0), -std::sqrt(2.0), 1e-12);
}

TEST(CsvReliability, StandardizerHandlesTinyMagnitudes) {
  // Squares of 1e-200 underflow to 0: the column must not be taken for a constant.
  Matrix x(2, 1);
  x << 1e-200, 3e-200;
  const auto s = Standardizer::fit(x, {"tiny"});
  EXPECT_DOUBLE_EQ(s.mean[0], 2e-200);
  EXPECT_DOUBLE_EQ(s.sd[0], 1e-200);
  const Matrix z = s.transform(x);
  EXPECT_NEAR(z(0, 0), -1.0, 1e-14);
  EXPECT_NEAR(z(1, 0), 1.0, 1e-14);
}

TEST(CsvReliability, StandardizerRefusesNonFiniteColumnsByName) {
  Matrix x(2, 2);
  x << 1, std::numeric_limits<double>::infinity(), 2, 1;
  EXPECT_THAT(error_of([&] {
                Standardizer::fit(x, {"a", "b"});
              }),
              AllOf(HasSubstr("'b'"), HasSubstr("not finite")));
  x(0, 1) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(error_of([&] { Standardizer::fit(x, {"a", "b"}); }), HasSubstr("'b'"));
}

TEST(CsvReliability, DistinctStopsBeyondTheBound) {
  // 200 000 different values: the scan for two classes stops at the third one.
  std::string text = "x\n";
  for (int i = 0; i < 200000; ++i) text += std::to_string(i) + ".5\n";
  const auto t = CsvTable::parse(text, "c.csv");
  EXPECT_EQ(t.distinct("x", 2), (std::vector<std::string>{"0.5", "1.5", "2.5"}));
  // Unbounded, it is linear: all 200 000 (a quadratic scan would take minutes here).
  EXPECT_EQ(t.distinct("x").size(), 200000u);
  // A bound that is not exceeded gives every class.
  const auto two = CsvTable::parse("y\nYes\nNo\n Yes\nNo\n", "y.csv");
  EXPECT_EQ(two.distinct("y", 2), (std::vector<std::string>{"Yes", "No"}));
}

TEST(CsvReliability, ReadRefusesFilesBeyondTheSizeLimit) {
  const auto path =
      (std::filesystem::temp_directory_path() / ("blr_csv_limit_" + std::to_string(::getpid())))
          .string();
  {
    std::ofstream out(path);
    out << "a,b\n1,2\n3,4\n";
  }
  EXPECT_EQ(CsvTable::read(path, 12).rows(), 2);
  EXPECT_THAT(error_of([&] { CsvTable::read(path, 11); }),
              AllOf(HasSubstr(path), HasSubstr("holds 12 bytes"), HasSubstr("more than the 11")));
  // The documented limit, on a sparse file: refused from its size, without reading it.
  std::filesystem::resize_file(path, kMaxCsvBytes + 1);
  EXPECT_THAT(error_of([&] { CsvTable::read(path); }),
              AllOf(HasSubstr("4294967297 bytes"), HasSubstr("4294967296")));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace blr::io
