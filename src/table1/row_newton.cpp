// Table 1: Newton's method (§1.3.2), online Newton (eq. 12), ridge in one step (§1.3.3), the
// diagonal-Hessian method (eqs. 36–37) and Laplace's method (§4.4), against plain versions.
#include <Eigen/Cholesky>

#include "blr/algorithms/laplace.hpp"
#include "blr/algorithms/newton.hpp"
#include "blr/algorithms/ridge.hpp"
#include "problems.hpp"
#include "reductions.hpp"

namespace blr::detail {

Table1Row row_newton() {
  Table1Row row{"newton", "Gaussian, full", "delta (2nd order), ρ = 1", "Newton's method",
                "logistic regression n=200 d=5, δ=1, 8 steps", "include/blr/algorithms/newton.hpp", {}};
  row.check = [] {
    const auto loss = synthetic_logistic(200, 5, 1.0, 4);
    const auto newton = make_newton();
    Rng rng(0);
    // Any starting precision: with ρ = 1 it is forgotten at the first step.
    auto state = init(GaussianFull(Vector::Zero(5), Matrix(7.0 * Matrix::Identity(5, 5))));
    Vector theta = Vector::Zero(5);
    double deviation = 0.0;
    for (int t = 0; t < 8; ++t) {
      newton.step(state, loss, rng);
      theta -= loss.hessian(theta).ldlt().solve(loss.gradient(theta));
      deviation = std::max(deviation, max_abs_diff(state.q.mean, theta));
    }
    return ReductionResult{deviation, kDeterministicTolerance, "8 Newton iterates"};
  };
  return row;
}

Table1Row row_online_newton() {
  Table1Row row{"online-newton", "Gaussian, full", "delta (2nd order), ρ = 0.3",
                "Newton with smoothed Hessian (eq. 12)", "logistic regression n=200 d=5, 30 steps",
                "include/blr/algorithms/newton.hpp", {}};
  row.check = [] {
    const auto loss = synthetic_logistic(200, 5, 1.0, 5);
    NewtonOptions options;
    options.step_size = 0.3;
    const auto newton = make_newton(options);
    Rng rng(0);
    const Matrix s0 = 50.0 * Matrix::Identity(5, 5);
    auto state = init(GaussianFull(Vector::Zero(5), s0));
    Vector theta = Vector::Zero(5);
    Matrix s = s0;
    double deviation = 0.0;
    for (int t = 0; t < 30; ++t) {
      newton.step(state, loss, rng);
      s = 0.7 * s + 0.3 * loss.hessian(theta);
      theta -= 0.3 * s.ldlt().solve(loss.gradient(theta));
      deviation = std::max({deviation, max_abs_diff(state.q.mean, theta),
                            (state.q.precision.matrix() - s).cwiseAbs().maxCoeff() / s.norm()});
    }
    return ReductionResult{deviation, kDeterministicTolerance, "30 iterates of m and S (S relative)"};
  };
  return row;
}

Table1Row row_ridge() {
  Table1Row row{"ridge-one-step", "Gaussian, full", "exact (quadratic loss), ρ = 1",
                "ridge regression / conjugate posterior", "linear regression n=50 d=4, δ=0.5, 1 step",
                "include/blr/algorithms/ridge.hpp", {}};
  row.check = [] {
    Rng data(6);
    Matrix x(50, 4);
    for (Index i = 0; i < x.size(); ++i) x.data()[i] = data.normal();
    Vector y = x * Vector::LinSpaced(4, -1.0, 2.0);
    for (Index i = 0; i < 50; ++i) y[i] += 0.3 * data.normal();
    LinearRegressionOptions lo;
    lo.prior_precision = 0.5;
    const LinearRegression loss(x, y, lo);
    const auto ridge = make_ridge_one_step();
    Rng rng(0);
    auto state = init(GaussianFull(Vector::Constant(4, 3.0), Matrix(2.0 * Matrix::Identity(4, 4))));
    ridge.step(state, loss, rng);
    const Matrix a = x.transpose() * x + 0.5 * Matrix::Identity(4, 4);
    const Vector w = a.ldlt().solve(x.transpose() * y);
    const double deviation =
        std::max(max_abs_diff(state.q.mean, w), (state.q.precision.matrix() - a).cwiseAbs().maxCoeff() / a.norm());
    return ReductionResult{deviation, kDeterministicTolerance, "m = (XᵀX+δI)⁻¹Xᵀy, S = XᵀX+δI"};
  };
  return row;
}

Table1Row row_diagonal_newton() {
  Table1Row row{"diagonal-newton", "Gaussian, diagonal", "delta (2nd order, diagonal)",
                "adaptive diagonal-Hessian method (eqs. 36–37)", "logistic regression n=200 d=5, 40 steps",
                "include/blr/algorithms/newton.hpp", {}};
  row.check = [] {
    const auto loss = synthetic_logistic(200, 5, 1.0, 7);
    DiagonalNewtonOptions options;
    options.lr = Schedule::constant(0.5);
    options.hessian_rate = Schedule::constant(0.2);
    const auto method = make_diagonal_newton(options);
    Rng rng(0);
    auto state = init(GaussianDiag(Vector::Zero(5), Vector::Constant(5, 10.0)));
    Vector theta = Vector::Zero(5), s = Vector::Constant(5, 10.0);
    double deviation = 0.0;
    for (int t = 0; t < 40; ++t) {
      method.step(state, loss, rng);
      s = 0.8 * s + 0.2 * loss.hessian_diagonal(theta);  // eq. 36
      theta -= 0.5 * loss.gradient(theta).cwiseQuotient(s);
      deviation = std::max({deviation, max_abs_diff(state.q.mean, theta),
                            max_abs_diff(state.q.precision, s) / s.norm()});
    }
    return ReductionResult{deviation, kDeterministicTolerance, "40 iterates of m and s"};
  };
  return row;
}

Table1Row row_laplace() {
  Table1Row row{"laplace", "Gaussian, full", "delta at the mode",
                "Laplace's method", "logistic regression n=200 d=5, δ=1",
                "include/blr/algorithms/laplace.hpp", {}};
  row.check = [] {
    const auto loss = synthetic_logistic(200, 5, 1.0, 8);
    const LaplaceResult result = laplace(loss, Vector::Zero(5));
    Vector mode = Vector::Zero(5);  // plain Newton to convergence
    for (int t = 0; t < 100; ++t) mode -= loss.hessian(mode).ldlt().solve(loss.gradient(mode));
    const Matrix h = loss.hessian(mode);
    const double deviation =
        std::max(max_abs_diff(result.posterior.mean, mode),
                 (result.posterior.precision.matrix() - h).cwiseAbs().maxCoeff() / h.norm());
    check(result.converged, "Laplace: Newton did not converge.");
    return ReductionResult{deviation, kDeterministicTolerance, "mean = mode, S = ∇²ℓ̄(mode)"};
  };
  return row;
}

}  // namespace blr::detail
