// A command's JSON result whose long numeric arrays stay Eigen vectors and matrices until written.
//
// As nlohmann::json, every number of an array is a 16-byte value and every row of a matrix its own
// heap array: the Kalman command's ten arrays of 10⁶ states took 0.8 GB and most of its run time,
// with or without --json. A `ResultDocument` keeps the small entries in `fields` (a JSON object)
// and the long arrays beside them, unconverted. `dump()` writes exactly the text that
// `merged().dump(2)` writes (keys in the object's sorted order, numbers by nlohmann's own
// formatter, non-finite numbers as null), so files and `--json -` are byte for byte what they were;
// `require_finite` (checked_result.hpp) scans the arrays where they are, in the same key order.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "blr/core/types.hpp"

namespace blr::cli {

class ResultDocument {
 public:
  ResultDocument() = default;
  /// A document of small entries only (`fields` must be an object).
  explicit ResultDocument(nlohmann::json fields);

  /// Everything that is not a long numeric array; keys must differ from the arrays' keys.
  nlohmann::json fields = nlohmann::json::object();

  /// Adds `values` as the flat array `key` (what to_json(Vector) makes).
  void add_vector(const std::string& key, Vector values);
  /// Adds `values` as the array of rows `key`, one array per row (what to_json(Matrix) makes).
  void add_rows(const std::string& key, Matrix values);

  /// The JSON text of the whole document, as `merged().dump(2)` would write it.
  std::string dump() const;
  /// The whole document as one JSON object (for tests and small results; slow for long arrays).
  nlohmann::json merged() const;

  /// The first number that is NaN or infinite, in key order, as a path ("filtered_mean[37]",
  /// "smoothed_states[4][0]", "posterior.mean[2]") and its value.
  std::optional<std::pair<std::string, double>> first_non_finite() const;

 private:
  struct Array {
    Matrix values;
    bool rows = false;  ///< an array of row arrays (else a flat array of the one column)
  };
  void check_new_key(const std::string& key) const;
  std::vector<std::pair<std::string, Array>> arrays_;
};

/// The first non-finite number under a JSON value, as a path relative to it ("" for the value
/// itself, "[3]", "[3].mean[1]").
std::optional<std::pair<std::string, double>> first_non_finite(const nlohmann::json& node);

}  // namespace blr::cli
