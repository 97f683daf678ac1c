// The CSV reader's number rule (csv.hpp: a whole decimal token — optional sign, digits with an
// optional point, optional exponent; no hexadecimal floats; inf/nan spellings not finite; beyond
// the range of a double refused) now that numbers are read with fast_float. The edges a parser
// change could move, values bitwise against glibc's strtod (correctly rounded), random 17-digit
// round trips, and random tokens against the grammar written as a regular expression.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <regex>
#include <string>

#include "blr/core/error.hpp"
#include "blr/io/csv.hpp"

namespace blr::io {
namespace {

using ::testing::HasSubstr;

enum class Kind { kNumber, kNotANumber, kNotFinite, kOutOfRange, kEmpty };

/// What parse_number makes of a text: its kind, from the message, and the value if any.
Kind kind_of(const std::string& text, double* value = nullptr) {
  try {
    const double v = parse_number(text, "x");
    if (value) *value = v;
    return Kind::kNumber;
  } catch (const Error& e) {
    const std::string m = e.what();
    if (m.find("is not a number") != std::string::npos) return Kind::kNotANumber;
    if (m.find("is not a finite number") != std::string::npos) return Kind::kNotFinite;
    if (m.find("outside the range of a double") != std::string::npos) return Kind::kOutOfRange;
    if (m.find("the value is empty") != std::string::npos) return Kind::kEmpty;
    ADD_FAILURE() << "unexpected message for '" << text << "': " << m;
    return Kind::kNotANumber;
  }
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// glibc's correctly rounded reading of a decimal token (without a leading '+').
double strtod_of(const std::string& text) {
  const std::string t = !text.empty() && text[0] == '+' ? text.substr(1) : text;
  return std::strtod(t.c_str(), nullptr);
}

/// The rule's range condition from strtod's value: infinite, or zero from digits that are not
/// all zero.
bool out_of_range_by_strtod(const std::string& text) {
  const double v = strtod_of(text);
  const std::string significand = text.substr(0, text.find_first_of("eE"));
  return std::isinf(v) || (v == 0 && significand.find_first_of("123456789") != std::string::npos);
}

TEST(CsvNumbers, EdgesOfTheGrammar) {
  for (const char* text :
       {"007", "-007.50", "00.5e01", "+.5", "-.5e-1", "5.", "1.e5", "1E5", "1e05", "1e+05",
        "0e999", "-0", "0.000e-999", "4.9e-324", "3e-324", "2.4703282292062328e-324", "1e-310",
        "2.2250738585072011e-308", "1.7976931348623157e308", "1.7976931348623158e308",
        "123456789012345678901234567890", "9007199254740993", "0.30000000000000004",
        "0.1000000000000000055511151231257827021181583404541015625", " 7 ", "\t-2.5\t"}) {
    double v = 0;
    ASSERT_EQ(kind_of(text, &v), Kind::kNumber) << text;
    std::string t = text;
    t.erase(0, t.find_first_not_of(" \t"));
    t.erase(t.find_last_not_of(" \t") + 1);
    EXPECT_TRUE(same_bits(v, strtod_of(t))) << text << ": " << v << " vs " << strtod_of(t);
    EXPECT_TRUE(looks_numeric(text)) << text;
  }
  EXPECT_TRUE(std::signbit(parse_number("-0", "x")));
  EXPECT_EQ(parse_number("3e-324", "x"), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(parse_number("1.7976931348623158e308", "x"), std::numeric_limits<double>::max());
  // A significand of 800 digits is read exactly as well.
  EXPECT_EQ(parse_number("1" + std::string(799, '0') + "e-799", "x"), 1.0);
  for (const char* text : {"1e", "1e+", "1.5e+", "1e-", ".", "-.", "+", "-", "+-1", "-+1", "++1",
                           "--1", "1e5.5", "1.2.3", "0x1p3", "0X10", "0x1p1023", "1_0", "e5",
                           "-e5", "nan(1)", "infx", "1 2", "1d5", "1,5", "12abc", ".e1"}) {
    EXPECT_EQ(kind_of(text), Kind::kNotANumber) << text;
    EXPECT_FALSE(looks_numeric(text)) << text;
  }
  for (const char* text : {"inf", "-inf", "+INF", "Infinity", "-infinity", "nan", "NaN", "+nan"}) {
    EXPECT_EQ(kind_of(text), Kind::kNotFinite) << text;
    EXPECT_FALSE(looks_numeric(text)) << text;
  }
  for (const char* text : {"1e400", "-1e400", "1e-400", "-1e-400", "2e-324",
                           "2.4703282292062327e-324", "1.7976931348623159e308",
                           "1e999999999999999999999", "-1e-999999999999999999999"}) {
    EXPECT_EQ(kind_of(text), Kind::kOutOfRange) << text;
    EXPECT_TRUE(out_of_range_by_strtod(text)) << text;
    EXPECT_FALSE(looks_numeric(text)) << text;
  }
  EXPECT_EQ(kind_of(""), Kind::kEmpty);
  EXPECT_EQ(kind_of(" \t"), Kind::kEmpty);
  EXPECT_THAT(std::string([] {
                try {
                  parse_number("1.5e+", "File 'f.csv', line 3, column 'a'");
                } catch (const Error& e) {
                  return e.what();
                }
                return "";
              }()),
              HasSubstr("File 'f.csv', line 3, column 'a': '1.5e+' is not a number."));
}

TEST(CsvNumbers, RandomDoublesRoundTripBitwise) {
  // Random bit patterns (every exponent, denormals included), printed as %.17g (which round
  // trips), %.16g and %.3e (which need correct rounding, and may leave the range): the value is
  // strtod's bit for bit, and %.17g gives back the double itself.
  std::mt19937_64 rng(14);
  int checked = 0;
  for (int trial = 0; trial < 200000; ++trial) {
    const std::uint64_t bits = rng();
    double x = 0;
    std::memcpy(&x, &bits, sizeof x);
    if (!std::isfinite(x)) continue;
    for (const char* format : {"%.17g", "%.16g", "%.3e"}) {
      char text[64];
      std::snprintf(text, sizeof text, format, x);
      double v = 0;
      const Kind k = kind_of(text, &v);
      if (out_of_range_by_strtod(text)) {
        EXPECT_EQ(k, Kind::kOutOfRange) << text;
        continue;
      }
      ASSERT_EQ(k, Kind::kNumber) << text;
      ASSERT_TRUE(same_bits(v, strtod_of(text))) << text;
      if (std::strcmp(format, "%.17g") == 0) {
        ASSERT_TRUE(same_bits(v, x)) << text;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 500000);
}

TEST(CsvNumbers, RandomTokensFollowTheGrammar) {
  // Tokens of signs, digits, points and exponent letters: a number exactly when the grammar's
  // regular expression matches the whole token; then strtod's value or out of range.
  const std::regex grammar(R"([+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)");
  static const char kChars[] = {'0', '1', '5', '9', '.', 'e', 'E', '+', '-'};
  std::mt19937_64 rng(15);
  int numbers = 0;
  for (int trial = 0; trial < 50000; ++trial) {
    std::string text;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int k = 0; k < n; ++k) text += kChars[rng() % sizeof kChars];
    if (rng() % 3 == 0) {
      text += 'e';
      text += std::to_string(static_cast<int>(rng() % 800) - 400);
    }
    double v = 0;
    const Kind k = kind_of(text, &v);
    if (!std::regex_match(text, grammar)) {
      ASSERT_EQ(k, Kind::kNotANumber) << text;
    } else if (out_of_range_by_strtod(text)) {
      ASSERT_EQ(k, Kind::kOutOfRange) << text;
    } else {
      ASSERT_EQ(k, Kind::kNumber) << text;
      ASSERT_TRUE(same_bits(v, strtod_of(text))) << text;
      ++numbers;
    }
  }
  EXPECT_GT(numbers, 5000);
}

}  // namespace
}  // namespace blr::io
