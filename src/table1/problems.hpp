// Small seeded problems on which the Table-1 reductions are checked.
#pragma once

#include <string>

#include "blr/core/rng.hpp"
#include "blr/model/linear_regression.hpp"
#include "blr/model/logistic_regression.hpp"

namespace blr::detail {

/// n rows: an intercept and d−1 standard-normal features; labels from a fixed logistic model.
LogisticRegression synthetic_logistic(Index n, Index d, double prior_precision, std::uint64_t seed);

/// y = Xw* + 0.5·noise with w* ∈ {−1, +1}^d (a binary ground truth), squared loss.
LinearRegression synthetic_binary_regression(Index n, Index d, std::uint64_t seed, Vector* truth);

/// Path of one of blr's data files (data/*.csv) found at run time: the directory named by the
/// environment variable BLR_DATA_DIR, else the source tree's data/ (a build tree), else the
/// installed share/blr/data. Throws, naming the file and BLR_DATA_DIR, when none holds it.
std::string data_file(const std::string& name);

/// Largest absolute difference.
inline double max_abs_diff(const Vector& a, const Vector& b) { return (a - b).cwiseAbs().maxCoeff(); }

/// Relative tolerance for a deterministic reduction after `steps` steps: 1e-10 (DESIGN) — each
/// step's rounding is ~1e-16 relative, amplified by at most the problems' condition numbers (< 1e3).
inline constexpr double kDeterministicTolerance = 1e-10;

}  // namespace blr::detail
