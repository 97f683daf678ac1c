// Gauss–Hermite quadrature for one-dimensional Gaussian expectations.
//
// E_{N(a | m, v)}[f(a)] ≈ Σ_k w_k f(m + √v·x_k) with the nodes x_k and weights w_k of the
// probabilists' Hermite polynomials, computed by the Golub–Welsch algorithm: the x_k are the
// eigenvalues of the symmetric tridiagonal Jacobi matrix with off-diagonal entries √k
// (k = 1..n−1), and w_k is the squared first component of the k-th unit eigenvector (the total
// mass of N(0, 1) being 1). Exact for polynomials of degree ≤ 2n − 1.
#pragma once

#include <Eigen/Eigenvalues>
#include <cmath>

#include "blr/core/error.hpp"
#include "blr/core/types.hpp"

namespace blr::inference {

class GaussHermite {
 public:
  explicit GaussHermite(int nodes = 32) {
    check(nodes >= 1 && nodes <= 200,
          "Option 'quadrature-nodes' must lie in [1, 200]; got " + std::to_string(nodes) + ".");
    Matrix jacobi = Matrix::Zero(nodes, nodes);
    for (int k = 1; k < nodes; ++k) {
      jacobi(k, k - 1) = jacobi(k - 1, k) = std::sqrt(static_cast<double>(k));
    }
    const Eigen::SelfAdjointEigenSolver<Matrix> eig(jacobi);
    nodes_ = eig.eigenvalues();
    weights_ = eig.eigenvectors().row(0).transpose().array().square();
  }

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
