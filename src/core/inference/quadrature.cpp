// Gauss–Hermite nodes and weights by the Golub–Welsch algorithm (quadrature.hpp).
#include "blr/inference/quadrature.hpp"

#include <Eigen/Eigenvalues>

#include <string>

#include "blr/core/error.hpp"

namespace blr::inference {

GaussHermite::GaussHermite(int nodes) {
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

}  // namespace blr::inference
