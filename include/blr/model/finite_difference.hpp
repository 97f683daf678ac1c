// Central finite differences of a loss, with an error estimate, for checking hand-written
// derivatives (of the losses in blr or of a user's own loss).
//
//     ∂_j f ≈ D_h = [f(θ + h e_j) − f(θ − h e_j)] / 2h,     error ≈ h²/6·∂³_j f + O(ε f / h).
//
// The truncation error is estimated by Richardson's argument, |D_h − D_{2h}|/3 (D_{2h} has four
// times the h² error), and the rounding error by 2ε_mach·|f|/h; `error` is their sum, so a
// derivative that disagrees with D_h by many times `error` is wrong. The default step
// h_j = ε_mach^{1/3}·max(1, |θ_j|) balances the two terms.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "blr/core/types.hpp"
#include "blr/model/loss.hpp"

namespace blr {

/// A finite-difference estimate and an estimate of its absolute error (same shape).
template <class T>
struct FiniteDifference {
  T value;
  T error;
};

namespace detail {
inline double fd_step(double x, double h) {
  return h > 0 ? h : std::cbrt(std::numeric_limits<double>::epsilon()) * std::max(1.0, std::abs(x));
}
}  // namespace detail

/// ∇f(θ) by central differences of `value`. h ≤ 0 picks the default step.
template <Loss L>
FiniteDifference<Vector> numeric_gradient(const L& f, const Vector& theta, double h = 0.0) {
  const Index d = theta.size();
  const double eps = std::numeric_limits<double>::epsilon();
  FiniteDifference<Vector> out{Vector(d), Vector(d)};
  Vector x = theta;
  auto central = [&](Index j, double step) {
    x[j] = theta[j] + step;
    const double fp = f.value(x);
    x[j] = theta[j] - step;
    const double fm = f.value(x);
    x[j] = theta[j];
    return std::pair{(fp - fm) / (2.0 * step), std::max(std::abs(fp), std::abs(fm))};
  };
  for (Index j = 0; j < d; ++j) {
    const double step = detail::fd_step(theta[j], h);
    const auto [d1, f1] = central(j, step);
    const auto [d2, f2] = central(j, 2.0 * step);
    out.value[j] = d1;
    out.error[j] = std::abs(d1 - d2) / 3.0 + 2.0 * eps * std::max({f1, f2, 1.0}) / step;
  }
  return out;
}

/// ∇²f(θ) by central differences of `gradient` (column j from θ ± h e_j), symmetrised.
template <HasGradient L>
FiniteDifference<Matrix> numeric_hessian(const L& f, const Vector& theta, double h = 0.0) {
  const Index d = theta.size();
  const double eps = std::numeric_limits<double>::epsilon();
  Matrix value(d, d), error(d, d);
  Vector x = theta;
  auto central = [&](Index j, double step, Vector& scale) {
    x[j] = theta[j] + step;
    const Vector gp = f.gradient(x);
    x[j] = theta[j] - step;
    const Vector gm = f.gradient(x);
    x[j] = theta[j];
    scale = gp.cwiseAbs().cwiseMax(gm.cwiseAbs());
    return Vector((gp - gm) / (2.0 * step));
  };
  for (Index j = 0; j < d; ++j) {
    const double step = detail::fd_step(theta[j], h);
    Vector s1, s2;
    const Vector d1 = central(j, step, s1);
    const Vector d2 = central(j, 2.0 * step, s2);
    value.col(j) = d1;
    error.col(j) =
        (d1 - d2).cwiseAbs() / 3.0 + (2.0 * eps / step) * s1.cwiseMax(s2).cwiseMax(Vector::Ones(d));
  }
  // The two finite-difference estimates of each off-diagonal entry (columns i and j) differ by
  // their own errors; that difference is added to the error bound.
  Matrix sym_error =
      0.5 * (error + error.transpose()) + 0.5 * (value - value.transpose()).cwiseAbs();
  return {0.5 * (value + value.transpose()), sym_error};
}

}  // namespace blr
