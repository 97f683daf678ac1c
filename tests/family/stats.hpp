// Running mean and standard error for Monte Carlo checks (tolerances of k standard errors).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "blr/core/types.hpp"

namespace blr::testing {

/// The machine epsilon of double.
inline constexpr double kEps = std::numeric_limits<double>::epsilon();

/// Welford's running mean and variance of a vector-valued sample.
class RunningStats {
 public:
  void add(const Vector& x) {
    if (n_ == 0) {
      mean_ = Vector::Zero(x.size());
      m2_ = Vector::Zero(x.size());
    }
    ++n_;
    const Vector delta = x - mean_;
    mean_ += delta / static_cast<double>(n_);
    m2_ += delta.cwiseProduct(x - mean_);
  }
  void add(double x) { add(Vector::Constant(1, x)); }
  long count() const { return n_; }
  const Vector& mean() const { return mean_; }
  Vector variance() const { return m2_ / static_cast<double>(std::max<long>(n_ - 1, 1)); }
  /// Standard error of the mean, per coordinate.
  Vector standard_error() const { return (variance() / static_cast<double>(n_)).cwiseSqrt(); }

 private:
  long n_ = 0;
  Vector mean_, m2_;
};

}  // namespace blr::testing
