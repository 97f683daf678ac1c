// Gauss–Hermite quadrature for one-dimensional Gaussian expectations.
//
// E_{N(a | m, v)}[f(a)] ≈ Σ_k w_k f(m + √v·x_k) with the nodes x_k and weights w_k of the
// probabilists' Hermite polynomials, computed by the Golub–Welsch algorithm: the x_k are the
// eigenvalues of the symmetric tridiagonal Jacobi matrix with off-diagonal entries √k
// (k = 1..n−1), and w_k is the squared first component of the k-th unit eigenvector (the total
// mass of N(0, 1) being 1). Exact for polynomials of degree ≤ 2n − 1.
#pragma once

#include <cmath>

#include "blr/core/types.hpp"

namespace blr::inference {

class GaussHermite {
 public:
  /// The rule of `nodes` points (1 ≤ nodes ≤ 200); the eigen-decomposition lives in
  /// quadrature.cpp, so that including this header does not instantiate Eigen's eigensolver.
  explicit GaussHermite(int nodes = 32);

  const Vector& nodes() const { return nodes_; }
  const Vector& weights() const { return weights_; }
  int size() const { return static_cast<int>(nodes_.size()); }

  /// E_{N(m, v)}[f(a)].
  template <class F>
  double expect(double m, double v, F&& f) const {
    const double s = std::sqrt(v);
    double out = 0;
    for (Index k = 0; k < nodes_.size(); ++k) out += weights_[k] * f(m + s * nodes_[k]);
    return out;
  }

 private:
  Vector nodes_;
  Vector weights_;
};

}  // namespace blr::inference
