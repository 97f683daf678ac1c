#include "blr/inference/kernels.hpp"

#include <fmt/format.h>

#include <cmath>

#include "blr/core/error.hpp"

namespace blr::inference {
namespace {

/// |a_i − b_j|² for all row pairs, clamped at 0 against rounding.
Matrix squared_distances(const Matrix& a, const Matrix& b) {
  check(a.cols() == b.cols(), "Kernel inputs must have the same number of columns.");
  const Vector na = a.rowwise().squaredNorm(), nb = b.rowwise().squaredNorm();
  Matrix d2 = (-2.0 * a * b.transpose()).colwise() + na;
  d2.rowwise() += nb.transpose();
  return d2.cwiseMax(0.0);
}

/// s = c·r/ℓ with c = √3 or √5.
Matrix scaled_distances(const Matrix& d2, double c, double lengthscale) {
  return (c / lengthscale) * d2.cwiseSqrt();
}

}  // namespace

std::string to_string(KernelKind kind) {
  switch (kind) {
    case KernelKind::rbf:
      return "rbf";
    case KernelKind::matern32:
      return "matern32";
    case KernelKind::matern52:
      return "matern52";
  }
  return "?";
}

KernelKind parse_kernel(const std::string& name) {
  for (KernelKind k : {KernelKind::rbf, KernelKind::matern32, KernelKind::matern52})
    if (to_string(k) == name) return k;
  throw Error(fmt::format("Option '--kernel' must be rbf, matern32 or matern52; got '{}'.", name));
}

void Kernel::validate() const {
  check_positive("lengthscale", lengthscale);
  check_positive("variance", variance);
}

Matrix Kernel::matrix(const Matrix& a, const Matrix& b) const {
  validate();
  const Matrix d2 = squared_distances(a, b);
  switch (kind) {
    case KernelKind::rbf:
      return variance * (-d2 / (2.0 * lengthscale * lengthscale)).array().exp().matrix();
    case KernelKind::matern32: {
      const Matrix s = scaled_distances(d2, std::sqrt(3.0), lengthscale);
      return variance * ((1.0 + s.array()) * (-s.array()).exp()).matrix();
    }
    case KernelKind::matern52: {
      const Matrix s = scaled_distances(d2, std::sqrt(5.0), lengthscale);
      return variance *
             ((1.0 + s.array() + s.array().square() / 3.0) * (-s.array()).exp()).matrix();
    }
  }
  return {};
}

Vector Kernel::diagonal(Index rows) const {
  validate();
  return Vector::Constant(rows, variance);
}

std::array<Matrix, 2> Kernel::gradients(const Matrix& x) const {
  validate();
  const Matrix d2 = squared_distances(x, x);
  Matrix d_log_l;
  switch (kind) {
    case KernelKind::rbf: {
      const double l2 = lengthscale * lengthscale;
      d_log_l = variance * ((d2.array() / l2) * (-d2.array() / (2.0 * l2)).exp()).matrix();
      break;
    }
    case KernelKind::matern32: {
      const Matrix s = scaled_distances(d2, std::sqrt(3.0), lengthscale);
      d_log_l = variance * (s.array().square() * (-s.array()).exp()).matrix();
      break;
    }
    case KernelKind::matern52: {
      const Matrix s = scaled_distances(d2, std::sqrt(5.0), lengthscale);
      d_log_l =
          variance * (s.array().square() * (1.0 + s.array()) * (-s.array()).exp() / 3.0).matrix();
      break;
    }
  }
  return {d_log_l, matrix(x, x)};
}

Vector Kernel::log_parameters() const {
  Vector theta(2);
  theta << std::log(lengthscale), std::log(variance);
  return theta;
}

Kernel Kernel::from_log_parameters(KernelKind kind, const Vector& theta) {
  check(theta.size() == 2, "A kernel has two log-parameters (log ℓ, log σ²).");
  return Kernel{kind, std::exp(theta[0]), std::exp(theta[1])};
}

}  // namespace blr::inference
