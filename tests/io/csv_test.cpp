#include "blr/io/csv.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "blr/core/error.hpp"
#include "error_message.hpp"

namespace blr::io {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

using testing::error_of;

TEST(Csv, ParsesHeaderQuotesAndNumbers) {
  const auto t = CsvTable::parse(
      "\"a\",\"b c\",\"label\"\n1,2.5,\"Yes\"\r\n-3e2, 4 ,No\n\n\"5\",\"x,\"\"y\"\"\",Yes\n",
      "mem");
  ASSERT_EQ(t.rows(), 3);
  EXPECT_EQ(t.columns(), (std::vector<std::string>{"a", "b c", "label"}));
  EXPECT_EQ(t.cell(2, 1), "x,\"y\"");
  EXPECT_EQ(t.line_of(2), 5);
  const Vector a = t.numeric_column("a");
  EXPECT_EQ(a[0], 1.0);
  EXPECT_EQ(a[1], -300.0);
  EXPECT_EQ(a[2], 5.0);
  const Vector y = t.binary_labels("label", "Yes", {"Yes", "No"});
  EXPECT_EQ(y, (Vector(3) << 1, 0, 1).finished());
  EXPECT_EQ(t.distinct("label"), (std::vector<std::string>{"Yes", "No"}));
  EXPECT_EQ(t.columns_except({"label"}), (std::vector<std::string>{"a", "b c"}));
}

TEST(Csv, NumericLabelsMatchAsNumbers) {
  const auto t = CsvTable::parse("x,y\n1,1.0\n2,0\n", "mem");
  EXPECT_EQ(t.binary_labels("y", "1", {"0", "1"}), (Vector(2) << 1, 0).finished());
}

TEST(Csv, MalformedRowNamesFileAndLine) {
  const auto msg = error_of([] { CsvTable::parse("a,b\n1,2\n3\n", "data.csv"); });
  EXPECT_THAT(msg, AllOf(HasSubstr("data.csv"), HasSubstr("line 3"), HasSubstr("malformed row"),
                         HasSubstr("1 field")));
}

TEST(Csv, UnterminatedQuoteIsAnError) {
  EXPECT_THAT(error_of([] { CsvTable::parse("a,b\n1,\"2\n", "q.csv"); }),
              AllOf(HasSubstr("q.csv"), HasSubstr("line 2"), HasSubstr("never closed")));
}

TEST(Csv, MissingColumnListsTheColumns) {
  const auto t = CsvTable::parse("a,b\n1,2\n", "m.csv");
  EXPECT_THAT(error_of([&] { t.numeric_column("glu"); }),
              AllOf(HasSubstr("m.csv"), HasSubstr("no column 'glu'"), HasSubstr("a, b")));
}

TEST(Csv, NonNumericValueNamesLineAndColumn) {
  const auto t = CsvTable::parse("a,b\n1,2\n3,abc\n", "n.csv");
  EXPECT_THAT(error_of([&] { t.numeric_column("b"); }),
              AllOf(HasSubstr("n.csv"), HasSubstr("line 3"), HasSubstr("column 'b'"),
                    HasSubstr("'abc' is not a number")));
}

TEST(Csv, EmptyAndNaNValuesAreErrors) {
  const auto t = CsvTable::parse("a,b\n1,\n NaN,2\ninf,3\n", "e.csv");
  EXPECT_THAT(error_of([&] { t.numeric_column("b"); }),
              AllOf(HasSubstr("line 2"), HasSubstr("column 'b'"), HasSubstr("empty")));
  EXPECT_THAT(error_of([&] { t.numeric_column("a"); }),
              AllOf(HasSubstr("line 3"), HasSubstr("column 'a'"), HasSubstr("not a finite")));
}

TEST(Csv, LabelOutsideDeclaredClasses) {
  const auto t = CsvTable::parse("x,type\n1,Yes\n2,Maybe\n", "l.csv");
  EXPECT_THAT(error_of([&] {
                t.binary_labels("type", "Yes", {"Yes", "No"});
              }),
              AllOf(HasSubstr("l.csv"), HasSubstr("line 3"), HasSubstr("'Maybe'"),
                    HasSubstr("outside the declared classes (Yes, No)")));
  EXPECT_THAT(error_of([&] { t.class_labels("type", {"Yes", "No"}); }), HasSubstr("line 3"));
}

TEST(Csv, CountsMustBeNonNegativeIntegers) {
  const auto t = CsvTable::parse("y\n3\n1.5\n", "c.csv");
  EXPECT_THAT(error_of([&] { t.count_column("y"); }),
              AllOf(HasSubstr("line 3"), HasSubstr("non-negative integer")));
}

TEST(Csv, HeaderProblems) {
  EXPECT_THAT(error_of([] { CsvTable::parse("", "h.csv"); }), HasSubstr("empty"));
  EXPECT_THAT(error_of([] { CsvTable::parse("a,a\n1,2\n", "h.csv"); }), HasSubstr("twice"));
  EXPECT_THAT(error_of([] { CsvTable::parse("a,b\n", "h.csv"); }), HasSubstr("no data rows"));
  EXPECT_THAT(error_of([] { CsvTable::read("/nonexistent/file.csv"); }),
              HasSubstr("cannot be opened"));
}

TEST(Csv, StandardizerUsesPopulationSd) {
  Matrix x(4, 2);
  x << 1, 10, 2, 10, 3, 30, 4, 30;
  const auto s = Standardizer::fit(x);
  EXPECT_DOUBLE_EQ(s.mean[0], 2.5);
  EXPECT_DOUBLE_EQ(s.sd[0], std::sqrt(1.25));  // ddof 0
  EXPECT_DOUBLE_EQ(s.sd[1], 10.0);
  const Matrix z = s.transform(x);
  EXPECT_NEAR(z.col(0).mean(), 0.0, 1e-15);
  EXPECT_NEAR(z.col(0).squaredNorm() / 4, 1.0, 1e-15);
  const Matrix xi = with_intercept(z);
  EXPECT_EQ(xi.cols(), 3);
  EXPECT_EQ(xi.col(0), Vector::Ones(4));
  Matrix c(2, 1);
  c << 5, 5;
  EXPECT_THAT(error_of([&] { Standardizer::fit(c, {"skin"}); }),
              AllOf(HasSubstr("'skin'"), HasSubstr("constant")));
}

TEST(Csv, PimaTrainingStatisticsMatchTheOracle) {
  // research/peers.md §4(e): training means and ddof-0 sds of the 7 Pima covariates.
  const auto t = CsvTable::read(std::string(BLR_DATA_DIR) + "/pima_train.csv");
  ASSERT_EQ(t.rows(), 200);
  const auto names = t.columns_except({"type"});
  ASSERT_EQ(names.size(), 7u);
  const auto s = Standardizer::fit(t.numeric_columns(names), names);
  const double means[] = {3.57, 123.97, 71.26, 29.215, 32.31, 0.46077, 32.11};
  const double sds[] = {3.35784, 31.58796, 11.45087, 11.69525, 6.11487, 0.30646, 10.94796};
  // Half a unit in the last printed digit.
  const double mean_tol[] = {5e-3, 5e-3, 5e-3, 5e-4, 5e-3, 5.1e-6, 5e-3};
  for (int j = 0; j < 7; ++j) {
    EXPECT_NEAR(s.mean[j], means[j], mean_tol[j]);
    EXPECT_NEAR(s.sd[j], sds[j], 5.1e-6);
  }
  const Vector y = t.binary_labels("type", "Yes", {"Yes", "No"});
  EXPECT_EQ(y.sum(), 68.0);
}

// A table above the threshold of parallel parsing (6 000 × 50 = 3·10⁵ cells ≥ 2¹⁸): the blocks of
// rows parsed on several threads give bit for bit the numbers of the one-column reader, and a bad
// cell anywhere (here in the last block) gives the column reader's sentence.
std::string big_table(long bad_row) {
  std::string text;
  for (int c = 0; c < 50; ++c) text += (c ? ",c" : "c") + std::to_string(c);
  text += '\n';
  for (long r = 0; r < 6000; ++r) {
    for (int c = 0; c < 50; ++c) {
      if (c) text += ',';
      const double value = (r * 50 + c) * 0.1 - 7.3e3 / (c + 1);
      text += r == bad_row && c == 37 ? std::string("1.5x") : fmt::format("{:.17g}", value);
    }
    text += '\n';
  }
  return text;
}

TEST(Csv, LargeTablesParsedInBlocksEqualTheColumnReader) {
  const auto t = CsvTable::parse(big_table(-1), "big.csv");
  std::vector<std::string> names = t.columns_except({});
  const Matrix x = t.numeric_columns(names);
  ASSERT_EQ(x.rows(), 6000);
  ASSERT_EQ(x.cols(), 50);
  for (int c = 0; c < 50; ++c) {
    const Vector column = t.numeric_column(names[static_cast<std::size_t>(c)]);
    EXPECT_TRUE(x.col(c) == column) << "column " << c;
  }
  const auto bad = CsvTable::parse(big_table(5990), "bad.csv");
  const std::string expected = error_of([&] { bad.numeric_column("c37"); });
  EXPECT_THAT(expected, AllOf(HasSubstr("bad.csv"), HasSubstr("5992")));  // line 5992 of the file
  EXPECT_EQ(error_of([&] { bad.numeric_columns(names); }), expected);
}

}  // namespace
}  // namespace blr::io
