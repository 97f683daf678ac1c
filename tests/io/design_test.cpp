// One-hot coding, the training encoding applied to later files, and missing cells.
#include "blr/io/design.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "blr/core/error.hpp"
#include "error_message.hpp"

namespace blr::io {
namespace {

using testing::error_of;

const CsvTable kTrain = CsvTable::parse(
    "x,colour,size,y\n1,red,10,0\n2,blue,2,1\n3,green,10,0\n4,red,1.0,1\n", "train.csv");

TEST(Design, TreatmentCodingWithSortedLevels) {
  const auto d =
      DesignEncoder::fit(kTrain, {{"x", "colour", "size"}, {"colour", "size"}, false, true});
  // Text levels by byte order (blue < green < red), number levels by value (1 < 2 < 10);
  // "1.0" and "1" would be one level.
  EXPECT_EQ(d.levels("colour"), (std::vector<std::string>{"blue", "green", "red"}));
  EXPECT_EQ(d.levels("size"), (std::vector<std::string>{"1.0", "2", "10"}));
  EXPECT_EQ(d.names(), (std::vector<std::string>{"(intercept)", "x", "colour=green", "colour=red",
                                                 "size=2", "size=10"}));
  const Matrix x = d.transform(kTrain);
  const Matrix want = (Matrix(4, 6) << 1, 1, 0, 1, 0, 1,  //
                       1, 2, 0, 0, 1, 0,                  //
                       1, 3, 1, 0, 0, 1,                  //
                       1, 4, 0, 1, 0, 0)
                          .finished();
  EXPECT_EQ(x, want);
}

TEST(Design, StandardisesOnlyNumericColumnsWithTrainingStatistics) {
  const auto d = DesignEncoder::fit(kTrain, {{"x", "colour"}, {"colour"}, true, false});
  const auto later = CsvTable::parse("x,colour\n2.5,green\n", "later.csv");
  const Matrix x = d.transform(later);
  // Training x = 1..4: mean 2.5, population sd √1.25.
  EXPECT_DOUBLE_EQ(x(0, 0), 0.0);
  EXPECT_EQ(x(0, 1), 1.0);  // colour=green stays 0/1
  EXPECT_EQ(x(0, 2), 0.0);
  const Matrix xt = d.transform(kTrain);
  EXPECT_DOUBLE_EQ(xt(3, 0), 1.5 / std::sqrt(1.25));
}

TEST(Design, Errors) {
  const DesignSpec spec{{"x", "colour"}, {"colour"}, false, true};
  const auto d = DesignEncoder::fit(kTrain, spec);
  const auto unseen = CsvTable::parse("x,colour\n1,red\n2,purple\n", "new.csv");
  EXPECT_NE(error_of([&] {
              d.transform(unseen);
            }).find("File 'new.csv', line 3, column 'colour': level 'purple' does not occur"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              DesignEncoder::fit(kTrain, {{"x", "colour"}, {}, false, true});
            })
                .find("line 2, column 'colour': 'red' is not a number; a text column is a feature "
                      "only when declared categorical"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              DesignEncoder::fit(kTrain, {{"x"}, {"colour"}, false, true});
            }).find("Column 'colour' is declared categorical but is not a feature"),
            std::string::npos);
  const auto one = CsvTable::parse("x,c\n1,a\n2,a\n", "one.csv");
  EXPECT_NE(error_of([&] {
              DesignEncoder::fit(one, {{"x", "c"}, {"c"}, false, true});
            }).find("single level 'a'"),
            std::string::npos);
  const auto hex = CsvTable::parse("x\n0x1p3\n", "hex.csv");
  EXPECT_NE(error_of([&] {
              DesignEncoder::fit(hex, {{"x"}, {}, false, true}).transform(hex);
            }).find("'0x1p3' is not a number."),
            std::string::npos);
  const auto inf = CsvTable::parse("x\n-Infinity\n", "inf.csv");
  EXPECT_NE(error_of([&] {
              DesignEncoder::fit(inf, {{"x"}, {}, false, true}).transform(inf);
            }).find("'-Infinity' is not a finite number"),
            std::string::npos);
}

TEST(Design, MissingCells) {
  const auto t = CsvTable::parse("a,b,c\n1,2,3\n4,,6\n7,NA,9\n10,11, NA \n", "m.csv");
  EXPECT_TRUE(is_missing(""));
  EXPECT_TRUE(is_missing(" NA "));
  EXPECT_FALSE(is_missing("na"));
  const auto first = t.first_missing({"a", "b"});
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->row, 1);
  EXPECT_EQ(first->column, "b");
  EXPECT_FALSE(t.first_missing({"a"}).has_value());
  const auto kept = t.without_missing({"a", "b"});
  EXPECT_EQ(kept.rows(), 2);
  EXPECT_EQ(kept.line_of(1), 5);  // lines keep their numbers
  EXPECT_EQ(t.without_missing({"a", "b", "c"}).rows(), 1);
}


TEST(Design, MissingPolicyIsOneFunction) {
  const auto t = CsvTable::parse("a,b,c\n1,2,3\n4,,6\n7,NA,9\n", "m.csv");
  EXPECT_EQ(apply_missing_policy(t, {"a", "c"}, "error").rows(), 3);
  EXPECT_EQ(error_of([&] { apply_missing_policy(t, {"a", "b"}, "error"); }),
            "File 'm.csv', line 3, column 'b': the value is missing; give --missing drop to leave "
            "out the rows with a missing value.");
  const auto kept = apply_missing_policy(t, {"a", "b"}, "drop");
  EXPECT_EQ(kept.rows(), 1);
  EXPECT_EQ(kept.line_of(0), 2);
  const auto none = CsvTable::parse("a,b\n1,\n,2\n", "none.csv");
  EXPECT_EQ(error_of([&] { apply_missing_policy(none, {"a", "b"}, "drop"); }),
            "Every row of 'none.csv' has a missing value in the columns used, so --missing drop "
            "leaves nothing.");
  EXPECT_EQ(error_of([&] { apply_missing_policy(t, {"a"}, "impute"); }),
            "Option '--missing' must be error or drop; got 'impute'.");
  EXPECT_THROW(apply_missing_policy(t, {"zz"}, "drop"), Error);
}

TEST(Design, OneValueThatSwampsItsColumnIsFound) {
  // x: 1..40 with 1.3e154 in row 10; z: ordinary; d: 0/1 with a single 1 (the others equal, so
  // nothing is lost); w: 1..40 with 1e5 in row 3 (its other rows still differ at 1e-4 relative).
  Matrix x(40, 4);
  for (Index i = 0; i < 40; ++i) x.row(i) << (i == 10 ? 1.3e154 : i + 1.0), (i * 7) % 5,
                                   i == 4 ? 1.0 : 0.0, i == 3 ? 1e5 : i + 1.0;
  const auto found = dominant_values(x, {"x", "z", "d", "w"});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].column, "x");
  EXPECT_EQ(found[0].row, 10);
  EXPECT_EQ(found[0].value, 1.3e154);
  // The encoder finds it in the training table.
  std::string csv = "x,y\n";
  for (Index i = 0; i < 40; ++i) csv += (i == 10 ? "1.3e154" : std::to_string(i + 1)) + ",1\n";
  const auto enc = DesignEncoder::fit(CsvTable::parse(csv, "s.csv"), {{"x"}, {}, true, true});
  ASSERT_EQ(enc.dominant_values().size(), 1u);
  EXPECT_EQ(enc.dominant_values()[0].row, 10);
}

}  // namespace
}  // namespace blr::io
