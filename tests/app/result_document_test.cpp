// A result document (apps/blr/result_document.hpp) writes the text nlohmann's dump(2) writes for the
// same document built as one JSON object, and `require_finite` names the same first non-finite entry
// either way.
#include "result_document.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "blr/core/error.hpp"
#include "checked_result.hpp"

namespace blr::cli {
namespace {

// Numbers that exercise every branch of the formatter: signed zeros, integers, the switch to
// exponent notation at 1e-5 and 1e15, subnormals, extremes, and random bit patterns.
Vector awkward_numbers(int random_count) {
  const double special[] = {0.0,    -0.0,    1.0,   -1.0,   0.1,    1.0 / 3,  1e-4,   1e-5,
                            9.99e-5, 1e7,    1e14,  1e15,   1e16,   1e17,     123.456, -2.5e-300,
                            5e-324, std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::min(), 4503599627370496.5, 0.30000000000000004};
  const int n_special = static_cast<int>(std::size(special));
  Vector v(n_special + random_count);
  for (int i = 0; i < n_special; ++i) v[i] = special[i];
  std::mt19937_64 bits(7);
  for (int i = 0; i < random_count;) {
    const double x = std::bit_cast<double>(bits());
    if (std::isfinite(x)) v[n_special + i++] = x;
  }
  return v;
}

ResultDocument sample_document() {
  ResultDocument doc(nlohmann::json{
      {"method", "exact"},
      {"iterations", 3},
      {"converged", true},
      {"level", 0.95},
      {"states", {"level", "slope"}},
      {"nested", {{"a", {1.5, 2, nullptr}}, {"b", nlohmann::json::object()}, {"c", "q\"u\no\u00e9"}}},
      {"zzz", nlohmann::json::array()}});
  doc.add_vector("filtered_mean", awkward_numbers(5000));
  doc.add_vector("empty", Vector());
  Matrix rows(4, 2);
  rows << 1, -0.0, 1e-7, 3.25, 2e20, -7, 0.5, 1e300;
  doc.add_rows("smoothed_states", rows);
  doc.add_rows("no_columns", Matrix(3, 0));
  doc.add_rows("no_rows", Matrix(0, 2));
  return doc;
}

TEST(ResultDocument, DumpIsNlohmannsDumpOfTheMergedObject) {
  const ResultDocument doc = sample_document();
  const nlohmann::json merged = doc.merged();
  EXPECT_EQ(merged.size(), 12u);
  EXPECT_EQ(doc.dump(), merged.dump(2));
  // A document with no arrays, and an empty one.
  const nlohmann::json small{{"b", 1}, {"a", {{"x", 0.25}}}};
  EXPECT_EQ(ResultDocument(small).dump(), small.dump(2));
  EXPECT_EQ(ResultDocument().dump(), nlohmann::json::object().dump(2));
  // Arrays only.
  ResultDocument only;
  only.add_vector("v", awkward_numbers(200));
  EXPECT_EQ(only.dump(), only.merged().dump(2));
}

TEST(ResultDocument, NumbersReadBackBitForBit) {
  const ResultDocument doc = sample_document();
  const nlohmann::json back = nlohmann::json::parse(doc.dump());
  const Vector v = awkward_numbers(5000);
  ASSERT_EQ(back["filtered_mean"].size(), static_cast<std::size_t>(v.size()));
  for (Index i = 0; i < v.size(); ++i) {
    const double x = back["filtered_mean"][static_cast<std::size_t>(i)].get<double>();
    ASSERT_EQ(std::bit_cast<std::uint64_t>(x), std::bit_cast<std::uint64_t>(v[i])) << "entry " << i;
  }
}

// The message require_finite gives for a document and for its merged JSON object.
std::string message(const auto& result) {
  try {
    require_finite(result, "blr infer kalman");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ResultDocument, RequireFiniteNamesTheSameEntryAsForTheMergedObject) {
  {
    // The non-finite entries in arrays; the first in key order is "filtered_var[2]", step 3.
    ResultDocument doc(nlohmann::json{{"log_likelihood", -3.5}});
    Vector mean = Vector::Zero(5), var = Vector::Ones(5);
    mean[4] = std::nan("");
    var[2] = -std::numeric_limits<double>::infinity();
    doc.add_vector("filtered_mean", mean);
    doc.add_vector("filtered_var", var);
    const std::string m = message(doc);
    EXPECT_EQ(m, message(doc.merged()));
    EXPECT_NE(m.find("'filtered_mean[4]' (time step 5) is NaN"), std::string::npos) << m;
  }
  {
    // A field ("log_likelihood") sorts before the array with a NaN ("smoothed_states").
    ResultDocument doc(nlohmann::json{{"log_likelihood", -std::numeric_limits<double>::infinity()}});
    Matrix states = Matrix::Ones(3, 2);
    states(1, 1) = std::nan("");
    doc.add_rows("smoothed_states", states);
    const std::string m = message(doc);
    EXPECT_EQ(m, message(doc.merged()));
    EXPECT_NE(m.find("'log_likelihood' is -infinity"), std::string::npos) << m;
    // Without it the array's entry is named with both indices.
    doc.fields["log_likelihood"] = 0.0;
    EXPECT_EQ(message(doc), message(doc.merged()));
    EXPECT_NE(message(doc).find("'smoothed_states[1][1]' (time step 2) is NaN"), std::string::npos);
  }
  {
    // A nested field keeps its dotted path; a finite document passes.
    ResultDocument doc(nlohmann::json{{"fit", {{"variances", {1.0, std::nan("")}}}}});
    doc.add_vector("a", Vector::Ones(3));
    EXPECT_EQ(message(doc), message(doc.merged()));
    EXPECT_NE(message(doc).find("'fit.variances[1]' is NaN"), std::string::npos) << message(doc);
    doc.fields["fit"]["variances"][1] = 2.0;
    EXPECT_EQ(message(doc), "");
  }
}

TEST(ResultDocument, RefusesAKeyTwice) {
  ResultDocument doc(nlohmann::json{{"mean", 1.0}});
  EXPECT_THROW(doc.add_vector("mean", Vector::Ones(2)), Error);
  doc.add_rows("rows", Matrix::Ones(2, 2));
  EXPECT_THROW(doc.add_vector("rows", Vector::Ones(2)), Error);
  EXPECT_THROW(ResultDocument(nlohmann::json::array()), Error);
}

}  // namespace
}  // namespace blr::cli
