// What the posterior summaries (glm_summary.cpp, conjugate_summary.cpp, kalman_summary.cpp) share
// in their JSON and text: vectors and matrices as JSON arrays, and the tail headings of an
// interval's columns ("2.5%" and "97.5%" at level 0.95).
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "blr/core/types.hpp"

namespace blr::inference::summary_json {

inline nlohmann::json vector(const Vector& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

/// An array of rows.
inline nlohmann::json matrix(const Matrix& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (Index i = 0; i < m.rows(); ++i) rows.push_back(vector(m.row(i).transpose()));
  return rows;
}

/// "2.5%" for the lower tail of a 95 % interval.
inline std::string tail_heading(double p) {
  return fmt::format("{:g}%", 100 * p);
}

}  // namespace blr::inference::summary_json
