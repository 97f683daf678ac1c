// Helpers for the estimator tests: replicated estimates and their standard errors, random SPD
// matrices, max-abs norms.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "blr/core/rng.hpp"
#include "blr/core/types.hpp"

namespace blr::testing {

/// max |a_ij|.
inline double max_abs(const Matrix& a) { return a.cwiseAbs().maxCoeff(); }

/// A random symmetric positive-definite d×d matrix, AAᵀ + I with standard-normal A.
inline Matrix random_spd(Rng& rng, Index d) {
  Matrix a(d, d);
  for (Index i = 0; i < a.size(); ++i) a.data()[i] = rng.normal();
  return a * a.transpose() + Matrix::Identity(d, d);
}

/// Mean and standard error (of the mean) of R replicated vector-valued estimates.
struct Replicates {
  Vector mean;
  Vector standard_error;
};

inline Replicates replicate(int count, const std::function<Vector(int)>& draw) {
  Vector sum, sum_sq;
  for (int r = 0; r < count; ++r) {
    const Vector x = draw(r);
    if (r == 0) {
      sum = Vector::Zero(x.size());
      sum_sq = Vector::Zero(x.size());
    }
    sum += x;
    sum_sq += x.cwiseAbs2();
  }
  const double n = count;
  Replicates out;
  out.mean = sum / n;
  const Vector var = ((sum_sq / n - out.mean.cwiseAbs2()) * (n / (n - 1.0))).cwiseMax(0.0);
  out.standard_error = (var / n).cwiseSqrt();
  return out;
}

/// Every entry of the replicate mean lies within `k` standard errors of `truth` (plus a rounding
/// allowance for entries whose estimator has zero variance).
inline void expect_within_standard_errors(const Replicates& r, const Vector& truth, double k,
                                          const std::string& what) {
  ASSERT_EQ(r.mean.size(), truth.size()) << what;
  for (Index j = 0; j < truth.size(); ++j) {
    const double allowed = k * r.standard_error[j] + 1e-12 * std::max(1.0, std::abs(truth[j]));
    EXPECT_NEAR(r.mean[j], truth[j], allowed)
        << what << ", entry " << j << " (standard error " << r.standard_error[j] << ")";
  }
}

}  // namespace blr::testing
